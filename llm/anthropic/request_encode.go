package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/brownout-dev/brownout/llm"
)

// Wire types for encoding, fields in the order the API documents them.
type (
	outRequest struct {
		Model         string          `json:"model"`
		MaxTokens     int             `json:"max_tokens"`
		System        any             `json:"system,omitempty"`
		Messages      []outMessage    `json:"messages"`
		Tools         []outTool       `json:"tools,omitempty"`
		ToolChoice    *outToolChoice  `json:"tool_choice,omitempty"`
		Temperature   *float64        `json:"temperature,omitempty"`
		TopP          *float64        `json:"top_p,omitempty"`
		TopK          *int            `json:"top_k,omitempty"`
		StopSequences []string        `json:"stop_sequences,omitempty"`
		Stream        bool            `json:"stream,omitempty"`
		Metadata      *outMetadata    `json:"metadata,omitempty"`
		OutputConfig  json.RawMessage `json:"output_config,omitempty"`
	}
	outMessage struct {
		Role    string `json:"role"`
		Content any    `json:"content"` // string or []any of blocks
	}
	outText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	outImage struct {
		Type   string    `json:"type"`
		Source outSource `json:"source"`
	}
	outSource struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type,omitempty"`
		Data      string `json:"data,omitempty"`
		URL       string `json:"url,omitempty"`
	}
	outToolUse struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	outToolResult struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		Content   any    `json:"content,omitempty"`
		IsError   bool   `json:"is_error,omitempty"`
	}
	outTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
		Strict      bool            `json:"strict,omitempty"`
	}
	outToolChoice struct {
		Type                   string `json:"type"`
		Name                   string `json:"name,omitempty"`
		DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
	}
	outMetadata struct {
		UserID string `json:"user_id"`
	}
)

// EncodeRequest writes a Messages API request body.
//
// Leading llm.RoleSystem messages become the system prompt (a string when
// there is one text part, text blocks otherwise); consecutive llm.RoleTool
// messages, and a user message right after them, share one user turn of
// tool_result blocks. MaxTokens 0 is written as DefaultMaxTokens. A json_schema
// ResponseFormat becomes output_config.format (its Name is a label the API
// has no field for, and Anthropic structured outputs are always strict).
//
// It returns an *llm.UnsupportedError for what the Messages API cannot say: a
// system message after the first turn, seed, sampling parameters under API
// version 2026-10-21 (see Codec.Version), json_object output, metadata
// other than User, a participant name, image parts in an assistant turn, tool
// call arguments that are not a JSON object, or an Extra field that collides
// with a modelled one.
func (c Codec) EncodeRequest(req *llm.Request) ([]byte, error) {
	if c.Version != "" && c.Version != Version20230601 {
		for _, p := range []struct {
			name string
			set  bool
		}{{"temperature", req.Temperature != nil}, {"top_p", req.TopP != nil}, {"top_k", req.TopK != nil}} {
			if p.set {
				return nil, unsupported(p.name, "API version "+c.Version+" has no sampling parameters")
			}
		}
	}
	out := outRequest{
		Model:         req.Model,
		MaxTokens:     req.MaxTokens,
		Temperature:   req.Temperature,
		TopP:          req.TopP,
		TopK:          req.TopK,
		StopSequences: req.Stop,
		Stream:        req.Stream,
	}
	if out.MaxTokens == 0 {
		out.MaxTokens = DefaultMaxTokens
	}
	if req.Seed != nil {
		return nil, unsupported("seed", "the Messages API has no sampling seed")
	}
	if len(req.Metadata) > 0 {
		return nil, unsupported("metadata", "Anthropic metadata holds only user_id")
	}
	if req.User != "" {
		out.Metadata = &outMetadata{UserID: req.User}
	}
	msgs := req.Messages
	var system []outText
	for len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		m := msgs[0]
		if m.Name != "" {
			return nil, unsupported("messages.0.name", "Anthropic messages have no participant name")
		}
		for _, p := range m.Content {
			if p.Type != llm.PartText {
				return nil, unsupported("system."+string(p.Type), "the system prompt holds only text")
			}
			system = append(system, outText{Type: "text", Text: p.Text})
		}
		msgs = msgs[1:]
	}
	switch {
	case len(system) == 1:
		out.System = system[0].Text
	case len(system) > 1:
		out.System = system
	}
	offset := len(req.Messages) - len(msgs)
	var err error
	if out.Messages, err = encodeMessages(msgs, offset); err != nil {
		return nil, err
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		} else if !json.Valid(schema) {
			return nil, unsupported("tools."+t.Name+".parameters", "not valid JSON")
		}
		out.Tools = append(out.Tools, outTool{Name: t.Name, Description: t.Description, InputSchema: schema, Strict: t.Strict})
	}
	if tc := req.ToolChoice; tc != nil {
		oc := &outToolChoice{DisableParallelToolUse: tc.DisableParallel}
		switch tc.Mode {
		case llm.ToolChoiceAuto, "":
			oc.Type = "auto"
		case llm.ToolChoiceRequired:
			oc.Type = "any"
		case llm.ToolChoiceTool:
			oc.Type, oc.Name = "tool", tc.Name
		case llm.ToolChoiceNone:
			// With no tool allowed, parallel use is moot: the API has no
			// such field on {"type":"none"}.
			oc.Type, oc.DisableParallelToolUse = "none", false
		default:
			return nil, unsupported("tool_choice.mode", fmt.Sprintf("unknown mode %q", tc.Mode))
		}
		out.ToolChoice = oc
	}
	extra := req.Extra
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case llm.ResponseText, "":
		case llm.ResponseJSONObject:
			return nil, unsupported("response_format.json_object", "Anthropic structured outputs need a JSON schema")
		case llm.ResponseJSONSchema:
			if !json.Valid(rf.Schema) {
				return nil, unsupported("response_format.schema", "not valid JSON")
			}
			oc := map[string]json.RawMessage{}
			if raw, ok := extra["output_config"]; ok {
				if err := json.Unmarshal(raw, &oc); err != nil || oc == nil {
					return nil, unsupported("extra.output_config", "not a JSON object")
				}
				if _, ok := oc["format"]; ok {
					return nil, unsupported("extra.output_config.format", "collides with response_format")
				}
			}
			f, err := marshal(struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			}{"json_schema", rf.Schema})
			if err != nil {
				return nil, err
			}
			oc["format"] = f
			if out.OutputConfig, err = marshalObject(oc); err != nil {
				return nil, unsupported("extra.output_config", err.Error())
			}
			extra = maps.Clone(extra)
			delete(extra, "output_config")
		default:
			return nil, unsupported("response_format."+string(rf.Type), "unknown response format")
		}
	}
	body, err := marshal(out)
	if err != nil {
		return nil, err
	}
	return appendExtra(body, extra, outFields)
}

// outFields are the top-level names EncodeRequest writes itself.
var outFields = modelled

// appendExtra adds extra's fields, sorted by name, to the JSON object body.
func appendExtra(body []byte, extra map[string]json.RawMessage, reserved map[string]bool) ([]byte, error) {
	if len(extra) == 0 {
		return body, nil
	}
	buf := bytes.NewBuffer(body[:len(body)-1])
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if reserved[k] {
			return nil, unsupported("extra."+k, "collides with a modelled field")
		}
		kb, _ := marshal(k)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		if err := json.Compact(buf, extra[k]); err != nil {
			return nil, unsupported("extra."+k, "not valid JSON")
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func encodeMessages(msgs []llm.Message, offset int) ([]outMessage, error) {
	var out []outMessage
	// toolTurn is true while the last user turn in out ends with tool results,
	// so that more results (and a user message right after) join it.
	toolTurn := false
	appendBlocks := func(role string, blocks []any, join bool) {
		if join && len(out) > 0 {
			last := &out[len(out)-1]
			last.Content = append(last.Content.([]any), blocks...)
			return
		}
		out = append(out, outMessage{Role: role, Content: blocks})
	}
	for i, m := range msgs {
		p := idx("messages", i+offset)
		if m.Name != "" && m.Role != llm.RoleTool {
			return nil, unsupported(p+".name", "Anthropic messages have no participant name")
		}
		if len(m.ToolCalls) > 0 && m.Role != llm.RoleAssistant {
			return nil, unsupported(p+".tool_calls", "only assistant messages make tool calls")
		}
		switch m.Role {
		case llm.RoleSystem:
			return nil, unsupported(p+".role", "a system message after the first turn: Anthropic takes the system prompt only before the conversation")
		case llm.RoleUser:
			blocks, err := encodeParts(p, m.Content, true)
			if err != nil {
				return nil, err
			}
			appendBlocks("user", blocks, toolTurn)
			toolTurn = false
		case llm.RoleAssistant:
			blocks, err := encodeParts(p, m.Content, false)
			if err != nil {
				return nil, err
			}
			for j, tc := range m.ToolCalls {
				in, err := toolInput(tc.Arguments)
				if err != nil {
					return nil, unsupported(idx(p+".tool_calls", j)+".arguments", err.Error())
				}
				blocks = append(blocks, outToolUse{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: in})
			}
			appendBlocks("assistant", blocks, false)
			toolTurn = false
		case llm.RoleTool:
			if m.ToolCallID == "" {
				return nil, unsupported(p+".tool_call_id", "a tool result needs the id of the call it answers")
			}
			tr := outToolResult{Type: "tool_result", ToolUseID: m.ToolCallID, IsError: m.IsError}
			blocks, err := encodeParts(p, m.Content, true)
			if err != nil {
				return nil, err
			}
			switch {
			case len(blocks) == 1 && isText(blocks[0]):
				tr.Content = blocks[0].(outText).Text
			case len(blocks) > 0:
				tr.Content = blocks
			}
			appendBlocks("user", []any{tr}, toolTurn)
			toolTurn = true
		default:
			return nil, unsupported(p+".role", fmt.Sprintf("unknown role %q", m.Role))
		}
	}
	// A turn of a single text block is written in the string shorthand.
	for i := range out {
		if bs := out[i].Content.([]any); len(bs) == 1 && isText(bs[0]) {
			out[i].Content = bs[0].(outText).Text
		}
	}
	if out == nil {
		out = []outMessage{}
	}
	return out, nil
}

func isText(b any) bool { _, ok := b.(outText); return ok }

func encodeParts(p string, parts []llm.Part, images bool) ([]any, error) {
	blocks := make([]any, 0, len(parts))
	for j, part := range parts {
		pp := idx(p+".content", j)
		switch part.Type {
		case llm.PartText:
			blocks = append(blocks, outText{Type: "text", Text: part.Text})
		case llm.PartImage:
			if !images {
				return nil, unsupported(pp, "an image in an assistant turn")
			}
			src, err := imageSource(part)
			if err != nil {
				return nil, unsupported(pp, err.Error())
			}
			blocks = append(blocks, outImage{Type: "image", Source: src})
		default:
			return nil, unsupported(pp+".type", fmt.Sprintf("unknown part type %q", part.Type))
		}
	}
	return blocks, nil
}

func imageSource(part llm.Part) (outSource, error) {
	if len(part.Data) > 0 {
		if !imageTypes[part.MediaType] {
			return outSource{}, fmt.Errorf("inline image of media type %q: Anthropic takes image/jpeg, image/png, image/gif and image/webp", part.MediaType)
		}
		return outSource{Type: "base64", MediaType: part.MediaType, Data: base64.StdEncoding.EncodeToString(part.Data)}, nil
	}
	if rest, ok := strings.CutPrefix(part.URL, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		mt, isB64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isB64 || mt == "" {
			return outSource{}, errors.New("a data: URI that is not base64 with a media type")
		}
		if !imageTypes[mt] {
			return outSource{}, fmt.Errorf("inline image of media type %q: Anthropic takes image/jpeg, image/png, image/gif and image/webp", mt)
		}
		if _, err := base64.StdEncoding.DecodeString(data); err != nil {
			return outSource{}, fmt.Errorf("a data: URI with invalid base64: %v", err)
		}
		return outSource{Type: "base64", MediaType: mt, Data: data}, nil
	}
	if part.URL == "" {
		return outSource{}, errors.New("an image with neither data nor URL")
	}
	return outSource{Type: "url", URL: part.URL}, nil
}

// toolInput returns a tool call's arguments as the JSON object the API
// wants; empty arguments are the empty object.
func toolInput(args string) (json.RawMessage, error) {
	s := strings.TrimSpace(args)
	if s == "" {
		return json.RawMessage(`{}`), nil
	}
	if !json.Valid([]byte(s)) || s[0] != '{' {
		return nil, errors.New("tool call arguments are not a JSON object")
	}
	return json.RawMessage(s), nil
}
