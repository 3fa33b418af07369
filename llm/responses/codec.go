package responses

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/openai"
)

// Format is the Responses API's format name.
const Format llm.Format = "openai_responses"

// Codec is the OpenAI Responses format. Its errors and their wording are
// OpenAI's (the embedded Chat Completions codec's). The zero value is ready
// to use.
type Codec struct {
	openai.Codec
}

var _ llm.Codec = Codec{}

// Format returns Format.
func (Codec) Format() llm.Format { return Format }

// NewStreamEncoder returns an encoder writing Responses stream events to w.
func (c Codec) NewStreamEncoder(w io.Writer) llm.StreamEncoder { return newStreamEncoder(c, w) }

// NewStreamDecoder returns a decoder of Responses stream events from r.
func (c Codec) NewStreamDecoder(r io.Reader) llm.StreamDecoder { return newStreamDecoder(r) }

// Wire shapes.

type wireRequest struct {
	Model             string            `json:"model"`
	Input             json.RawMessage   `json:"input,omitempty"`
	Instructions      string            `json:"instructions,omitempty"`
	Tools             []wireTool        `json:"tools,omitempty"`
	ToolChoice        json.RawMessage   `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls,omitempty"`
	Text              *wireText         `json:"text,omitempty"`
	MaxOutputTokens   int               `json:"max_output_tokens,omitempty"`
	Temperature       *float64          `json:"temperature,omitempty"`
	TopP              *float64          `json:"top_p,omitempty"`
	Stream            bool              `json:"stream,omitempty"`
	User              string            `json:"user,omitempty"`
	Metadata          map[string]string `json:"metadata,omitempty"`
}

// knownFields are the request fields the normalized model holds; store and
// include are accepted and have no effect (the gateway keeps no responses).
// previous_response_id and conversation are read apart (see
// DecodeContinuation).
var knownFields = map[string]bool{
	"model": true, "input": true, "instructions": true, "tools": true, "tool_choice": true,
	"parallel_tool_calls": true, "text": true, "max_output_tokens": true, "temperature": true,
	"top_p": true, "stream": true, "user": true, "metadata": true, "store": true, "include": true,
	"previous_response_id": true, "conversation": true,
}

type wireTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

type wireText struct {
	Format *wireFormat `json:"format,omitempty"`
}

type wireFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict bool            `json:"strict,omitempty"`
}

type wireItem struct {
	Type      string          `json:"type,omitempty"`
	ID        string          `json:"id,omitempty"`
	Role      string          `json:"role,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments *string         `json:"arguments,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	Status    string          `json:"status,omitempty"`
}

type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Refusal  string `json:"refusal,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

// DecodeRequest reads a Responses request. Fields the normalized model does
// not hold go to Extra; an input item or tool the gateway cannot carry is a
// 400 naming it.
//
// A request that continues a stored response (previous_response_id,
// conversation) is refused with the API's own 400 for an id it does not
// hold (see DecodeContinuation for a caller that keeps responses).
func (c Codec) DecodeRequest(body []byte) (*llm.Request, error) {
	req, st, err := c.DecodeContinuation(body)
	if err != nil {
		return nil, err
	}
	if st.Previous != "" {
		return nil, PreviousNotFound(st.Previous)
	}
	return req, nil
}

// State is what a request says about stored responses.
type State struct {
	// Previous is the previous_response_id the request continues ("" for
	// none): the caller prepends that response's conversation, or answers
	// PreviousNotFound.
	Previous string
	// NoStore is true when the request asks that its response not be kept
	// ("store": false).
	NoStore bool
}

// PreviousNotFound is the API's 400 for a previous_response_id it does not
// hold.
func PreviousNotFound(id string) *llm.Error {
	e := llm.BadRequest("previous_response_id", "Previous response with id '%s' not found.", id)
	e.Code = "previous_response_not_found"
	return e
}

// DecodeContinuation reads a Responses request as DecodeRequest does, but
// returns the previous_response_id it names instead of refusing it: for a
// caller that keeps responses. A conversation reference is still refused.
func (Codec) DecodeContinuation(body []byte) (*llm.Request, State, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, State{}, llm.BadRequest("", "We could not parse the JSON body of your request. (%v)", err)
	}
	st, err := state(body)
	if err != nil {
		return nil, State{}, err
	}
	req, err := w.request(body)
	return req, st, err
}

// request is the normalized request of w (decoded from body).
func (w *wireRequest) request(body []byte) (*llm.Request, error) {
	req := &llm.Request{Model: w.Model, MaxTokens: w.MaxOutputTokens, Temperature: w.Temperature, TopP: w.TopP,
		Stream: w.Stream, IncludeUsage: w.Stream, User: w.User, Metadata: w.Metadata}
	if w.Instructions != "" {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart(w.Instructions)}})
	}
	msgs, err := decodeInput(w.Input)
	if err != nil {
		return nil, err
	}
	req.Messages = append(req.Messages, msgs...)
	for i, t := range w.Tools {
		if t.Type != "function" {
			return nil, llm.BadRequest("tools["+strconv.Itoa(i)+"].type", "tool type %q is not supported by this gateway (function tools only)", t.Type)
		}
		if t.Name == "" {
			return nil, llm.BadRequest("tools["+strconv.Itoa(i)+"].name", "Missing required parameter: 'tools[%d].name'.", i)
		}
		req.Tools = append(req.Tools, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict})
	}
	if tc, err := decodeToolChoice(w.ToolChoice); err != nil {
		return nil, err
	} else {
		req.ToolChoice = tc
	}
	if w.ParallelToolCalls != nil && !*w.ParallelToolCalls {
		if req.ToolChoice == nil {
			req.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceAuto}
		}
		req.ToolChoice.DisableParallel = true
	}
	if w.Text != nil && w.Text.Format != nil {
		f := w.Text.Format
		switch llm.ResponseFormatType(f.Type) {
		case llm.ResponseText:
		case llm.ResponseJSONObject:
			req.ResponseFormat = &llm.ResponseFormat{Type: llm.ResponseJSONObject}
		case llm.ResponseJSONSchema:
			if len(f.Schema) == 0 {
				return nil, llm.BadRequest("text.format.schema", "Missing required parameter: 'text.format.schema'.")
			}
			req.ResponseFormat = &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: f.Name, Schema: f.Schema, Strict: f.Strict}
		default:
			return nil, llm.BadRequest("text.format.type", "Invalid value: '%s'. Supported values are: 'text', 'json_object' and 'json_schema'.", f.Type)
		}
	}
	var all map[string]json.RawMessage
	_ = json.Unmarshal(body, &all)
	for k, v := range all {
		if !knownFields[k] {
			if req.Extra == nil {
				req.Extra = map[string]json.RawMessage{}
			}
			req.Extra[k] = v
		}
	}
	return req, nil
}

// state reads what the request says about stored responses. A
// conversation reference is refused with the API's own 400 for an id it
// does not hold: brownout keeps no conversations, and answering without
// the earlier turns would be a different conversation passed off as the
// same one. An empty previous_response_id is refused the same way.
func state(body []byte) (State, error) {
	var s struct {
		Previous     *string         `json:"previous_response_id"`
		Conversation json.RawMessage `json:"conversation"`
		Store        *bool           `json:"store"`
	}
	if json.Unmarshal(body, &s) != nil {
		return State{}, nil
	}
	var st State
	st.NoStore = s.Store != nil && !*s.Store
	if s.Previous != nil {
		if *s.Previous == "" {
			return State{}, PreviousNotFound("")
		}
		st.Previous = *s.Previous
	}
	if c := bytes.TrimSpace(s.Conversation); len(c) > 0 && string(c) != "null" {
		id := string(c)
		var o struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(c, &id) != nil && json.Unmarshal(c, &o) == nil {
			id = o.ID
		}
		return State{}, llm.BadRequest("conversation", "Conversation with id '%s' not found.", id)
	}
	return st, nil
}

func decodeInput(raw json.RawMessage) ([]llm.Message, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, llm.BadRequest("input", "Missing required parameter: 'input'.")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, llm.BadRequest("input", "input: %v", err)
		}
		return []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(s)}}}, nil
	}
	var items []wireItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, llm.BadRequest("input", "input must be a string or an array of items: %v", err)
	}
	var out []llm.Message
	for i, it := range items {
		param := "input[" + strconv.Itoa(i) + "]"
		switch it.Type {
		case "", "message":
			role := llm.Role(it.Role)
			switch it.Role {
			case "developer":
				role = llm.RoleSystem
			case "system", "user", "assistant":
			default:
				return nil, llm.BadRequest(param+".role", "Invalid value: '%s'. Supported values are: 'user', 'assistant', 'system' and 'developer'.", it.Role)
			}
			parts, err := decodeContent(it.Content, param+".content")
			if err != nil {
				return nil, err
			}
			out = append(out, llm.Message{Role: role, Content: parts})
		case "function_call":
			args := ""
			if it.Arguments != nil {
				args = *it.Arguments
			}
			tc := llm.ToolCall{ID: it.CallID, Name: it.Name, Arguments: args}
			if n := len(out); n > 0 && out[n-1].Role == llm.RoleAssistant && len(out[n-1].ToolCalls) > 0 {
				out[n-1].ToolCalls = append(out[n-1].ToolCalls, tc)
			} else {
				out = append(out, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{tc}})
			}
		case "function_call_output":
			parts, err := decodeContent(it.Output, param+".output")
			if err != nil {
				return nil, err
			}
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: it.CallID, Content: parts})
		default:
			return nil, llm.BadRequest(param+".type", "input item type %q is not supported by this gateway", it.Type)
		}
	}
	return out, nil
}

func decodeContent(raw json.RawMessage, param string) ([]llm.Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, llm.BadRequest(param, "%v", err)
		}
		return []llm.Part{llm.TextPart(s)}, nil
	}
	var ps []wirePart
	if err := json.Unmarshal(raw, &ps); err != nil {
		return nil, llm.BadRequest(param, "content must be a string or an array of parts: %v", err)
	}
	out := make([]llm.Part, 0, len(ps))
	for j, p := range ps {
		switch p.Type {
		case "input_text", "output_text", "text":
			out = append(out, llm.TextPart(p.Text))
		case "refusal":
			out = append(out, llm.TextPart(p.Refusal))
		case "input_image":
			out = append(out, llm.Part{Type: llm.PartImage, URL: p.ImageURL})
		default:
			return nil, llm.BadRequest(param+"["+strconv.Itoa(j)+"].type", "content part type %q is not supported by this gateway", p.Type)
		}
	}
	return out, nil
}

func decodeToolChoice(raw json.RawMessage) (*llm.ToolChoice, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch m := llm.ToolChoiceMode(s); m {
		case llm.ToolChoiceAuto, llm.ToolChoiceNone, llm.ToolChoiceRequired:
			return &llm.ToolChoice{Mode: m}, nil
		}
		return nil, llm.BadRequest("tool_choice", "Invalid value: '%s'. Supported values are: 'none', 'auto' and 'required'.", s)
	}
	var o struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &o); err != nil || o.Type != "function" || o.Name == "" {
		return nil, llm.BadRequest("tool_choice", "tool_choice must be 'none', 'auto', 'required' or {\"type\":\"function\",\"name\":...}")
	}
	return &llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: o.Name}, nil
}

// EncodeRequest writes a Responses request: system messages become
// instructions when they lead the conversation, other messages input items.
func (Codec) EncodeRequest(req *llm.Request) ([]byte, error) {
	w := wireRequest{Model: req.Model, MaxOutputTokens: req.MaxTokens, Temperature: req.Temperature, TopP: req.TopP,
		Stream: req.Stream, User: req.User, Metadata: req.Metadata}
	if req.TopK != nil {
		return nil, &llm.UnsupportedError{Format: Format, Feature: "top_k"}
	}
	if req.Seed != nil {
		return nil, &llm.UnsupportedError{Format: Format, Feature: "seed"}
	}
	if len(req.Stop) > 0 {
		return nil, &llm.UnsupportedError{Format: Format, Feature: "stop"}
	}
	msgs := req.Messages
	var instr []string
	for len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		instr = append(instr, msgs[0].Text())
		msgs = msgs[1:]
	}
	w.Instructions = strings.Join(instr, "\n\n")
	items := []wireItem{}
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleTool:
			out, _ := json.Marshal(m.Text())
			items = append(items, wireItem{Type: "function_call_output", CallID: m.ToolCallID, Output: out})
			continue
		case llm.RoleAssistant:
			if len(m.Content) > 0 {
				items = append(items, wireItem{Type: "message", Role: "assistant", Content: encodeParts(m.Content, "output_text")})
			}
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				items = append(items, wireItem{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: &args})
			}
			continue
		}
		items = append(items, wireItem{Type: "message", Role: string(m.Role), Content: encodeParts(m.Content, "input_text")})
	}
	w.Input, _ = json.Marshal(items)
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict})
	}
	if tc := req.ToolChoice; tc != nil {
		if tc.Mode == llm.ToolChoiceTool {
			w.ToolChoice, _ = json.Marshal(map[string]string{"type": "function", "name": tc.Name})
		} else if tc.Mode != "" {
			w.ToolChoice, _ = json.Marshal(string(tc.Mode))
		}
		if tc.DisableParallel {
			f := false
			w.ParallelToolCalls = &f
		}
	}
	if rf := req.ResponseFormat; rf != nil && rf.Type != "" {
		w.Text = &wireText{Format: &wireFormat{Type: string(rf.Type), Name: rf.Name, Schema: rf.Schema, Strict: rf.Strict}}
	}
	body, err := json.Marshal(w)
	if err != nil || len(req.Extra) == 0 {
		return body, err
	}
	var all map[string]json.RawMessage
	_ = json.Unmarshal(body, &all)
	for k, v := range req.Extra {
		if _, ok := all[k]; !ok {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

func encodeParts(ps []llm.Part, textType string) json.RawMessage {
	out := make([]wirePart, 0, len(ps))
	for _, p := range ps {
		if p.Type == llm.PartImage {
			out = append(out, wirePart{Type: "input_image", ImageURL: p.URL})
			continue
		}
		out = append(out, wirePart{Type: textType, Text: p.Text})
	}
	b, _ := json.Marshal(out)
	return b
}
