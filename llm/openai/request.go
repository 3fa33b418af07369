package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brownout-dev/brownout/llm"
)

// Request fields the codec models; every other top-level field goes to Extra.
var modeled = map[string]bool{
	"model": true, "messages": true, "tools": true, "tool_choice": true,
	"parallel_tool_calls": true, "response_format": true, "max_tokens": true,
	"max_completion_tokens": true, "temperature": true, "top_p": true, "seed": true,
	"stop": true, "stream": true, "stream_options": true, "user": true, "metadata": true,
}

// DecodeRequest parses a Chat Completions request body. A malformed body is
// an *llm.Error (400, invalid_request) whose Param names the field.
func (c Codec) DecodeRequest(body []byte) (*llm.Request, error) {
	if req, ok := parseRequest(body); ok {
		return req, nil
	}
	return c.decodeRequestJSON(body)
}

// decodeRequestJSON is DecodeRequest with encoding/json: the general path,
// and the reference the fast path (parseRequest) agrees with.
func (Codec) decodeRequestJSON(body []byte) (*llm.Request, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, llm.BadRequest("", "We could not parse the JSON body of your request: expected a JSON object")
	}
	req := &llm.Request{}
	var err error
	if req.Model, err = requiredString(top, "model", "model"); err != nil {
		return nil, err
	}
	if req.Messages, err = decodeMessages(top["messages"]); err != nil {
		return nil, err
	}
	if raw := top["tools"]; !isNull(raw) {
		if req.Tools, err = decodeTools(raw); err != nil {
			return nil, err
		}
	}
	if raw := top["tool_choice"]; !isNull(raw) {
		if req.ToolChoice, err = decodeToolChoice(raw); err != nil {
			return nil, err
		}
	}
	if raw := top["parallel_tool_calls"]; !isNull(raw) {
		var parallel bool
		if err := json.Unmarshal(raw, &parallel); err != nil {
			return nil, invalidType("parallel_tool_calls", "a boolean", raw)
		}
		// Without tools the flag has no effect; with tools and no
		// tool_choice, the choice is OpenAI's default, auto.
		if !parallel && len(req.Tools) > 0 {
			if req.ToolChoice == nil {
				req.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceAuto}
			}
			req.ToolChoice.DisableParallel = true
		}
	}
	if raw := top["response_format"]; !isNull(raw) {
		if req.ResponseFormat, err = decodeResponseFormat(raw); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{"max_tokens", "max_completion_tokens"} {
		raw := top[name]
		if isNull(raw) {
			continue
		}
		n, err := decodeInt(raw, name)
		if err != nil {
			return nil, err
		}
		if n < 1 {
			return nil, llm.BadRequest(name, "Invalid '%s': integer below minimum value. Expected a value >= 1, but got %d instead.", name, n)
		}
		req.MaxTokens = int(n) // max_completion_tokens, read last, wins
	}
	if req.Temperature, err = decodeFloat(top["temperature"], "temperature", 0, 2); err != nil {
		return nil, err
	}
	if req.TopP, err = decodeFloat(top["top_p"], "top_p", 0, 1); err != nil {
		return nil, err
	}
	if raw := top["seed"]; !isNull(raw) {
		n, err := decodeInt(raw, "seed")
		if err != nil {
			return nil, err
		}
		req.Seed = &n
	}
	if raw := top["stop"]; !isNull(raw) {
		if req.Stop, err = decodeStop(raw); err != nil {
			return nil, err
		}
	}
	if raw := top["stream"]; !isNull(raw) {
		if err := json.Unmarshal(raw, &req.Stream); err != nil {
			return nil, invalidType("stream", "a boolean", raw)
		}
	}
	if raw := top["stream_options"]; !isNull(raw) {
		var so map[string]json.RawMessage
		if err := json.Unmarshal(raw, &so); err != nil {
			return nil, invalidType("stream_options", "an object", raw)
		}
		if !req.Stream {
			return nil, llm.BadRequest("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
		}
		if iu := so["include_usage"]; !isNull(iu) {
			if err := json.Unmarshal(iu, &req.IncludeUsage); err != nil {
				return nil, invalidType("stream_options.include_usage", "a boolean", iu)
			}
		}
	}
	if raw := top["user"]; !isNull(raw) {
		if err := json.Unmarshal(raw, &req.User); err != nil {
			return nil, invalidType("user", "a string", raw)
		}
	}
	if raw := top["metadata"]; !isNull(raw) {
		if err := json.Unmarshal(raw, &req.Metadata); err != nil {
			return nil, invalidType("metadata", "an object of strings", raw)
		}
	}
	for k, v := range top {
		if modeled[k] {
			continue
		}
		if req.Extra == nil {
			req.Extra = map[string]json.RawMessage{}
		}
		req.Extra[k] = slices.Clone(v)
	}
	return req, nil
}

func invalidType(param, want string, raw json.RawMessage) *llm.Error {
	return llm.BadRequest(param, "Invalid type for '%s': expected %s, but got %s instead.", param, want, kind(raw))
}

func requiredString(obj map[string]json.RawMessage, key, param string) (string, error) {
	raw, ok := obj[key]
	if !ok || isNull(raw) {
		return "", llm.BadRequest(param, "Missing required parameter: '%s'.", param)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalidType(param, "a string", raw)
	}
	return s, nil
}

func optionalString(obj map[string]json.RawMessage, key, param string) (string, error) {
	raw := obj[key]
	if isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalidType(param, "a string", raw)
	}
	return s, nil
}

func decodeInt(raw json.RawMessage, param string) (int64, error) {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		return 0, invalidType(param, "an integer", raw)
	}
	return n, nil
}

func decodeFloat(raw json.RawMessage, param string, lo, hi float64) (*float64, error) {
	if isNull(raw) {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, invalidType(param, "a number", raw)
	}
	if f < lo {
		return nil, llm.BadRequest(param, "Invalid '%s': decimal below minimum value. Expected a value >= %g, but got %g instead.", param, lo, f)
	}
	if f > hi {
		return nil, llm.BadRequest(param, "Invalid '%s': decimal above maximum value. Expected a value <= %g, but got %g instead.", param, hi, f)
	}
	return &f, nil
}

func decodeStop(raw json.RawMessage) ([]string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, invalidType("stop", "one of a string or an array of strings", raw)
	}
	if len(list) > 4 {
		return nil, llm.BadRequest("stop", "Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length %d instead.", len(list))
	}
	return list, nil
}

func decodeObject(raw json.RawMessage, param string) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, invalidType(param, "an object", raw)
	}
	return obj, nil
}

func decodeArray(raw json.RawMessage, param string) ([]json.RawMessage, error) {
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err != nil || arr == nil {
		return nil, invalidType(param, "an array", raw)
	}
	return arr, nil
}

func decodeMessages(raw json.RawMessage) ([]llm.Message, error) {
	if isNull(raw) {
		return nil, llm.BadRequest("messages", "Missing required parameter: 'messages'.")
	}
	arr, err := decodeArray(raw, "messages")
	if err != nil {
		return nil, err
	}
	if len(arr) == 0 {
		return nil, llm.BadRequest("messages", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	msgs := make([]llm.Message, 0, len(arr))
	toolNames := map[string]string{} // tool call id -> function name
	for i, mraw := range arr {
		p := fmt.Sprintf("messages[%d]", i)
		obj, err := decodeObject(mraw, p)
		if err != nil {
			return nil, err
		}
		role, err := requiredString(obj, "role", p+".role")
		if err != nil {
			return nil, err
		}
		m := llm.Message{}
		if m.Name, err = optionalString(obj, "name", p+".name"); err != nil {
			return nil, err
		}
		switch role {
		case "system", "developer", "user":
			m.Role = llm.RoleUser
			if role != "user" {
				m.Role = llm.RoleSystem
			}
			if m.Content, err = decodeContent(obj, p, role == "user", true); err != nil {
				return nil, err
			}
		case "assistant":
			m.Role = llm.RoleAssistant
			if !isNull(obj["content"]) {
				if m.Content, err = decodeContent(obj, p, false, false); err != nil {
					return nil, err
				}
			}
			refusal, err := optionalString(obj, "refusal", p+".refusal")
			if err != nil {
				return nil, err
			}
			if refusal != "" {
				m.Content = append(m.Content, llm.TextPart(refusal))
			}
			if raw := obj["tool_calls"]; !isNull(raw) {
				if m.ToolCalls, err = decodeToolCalls(raw, p+".tool_calls"); err != nil {
					return nil, err
				}
				for _, tc := range m.ToolCalls {
					toolNames[tc.ID] = tc.Name
				}
			}
			if !isNull(obj["function_call"]) {
				return nil, llm.BadRequest(p+".function_call", "The deprecated 'function_call' message field is not supported; use 'tool_calls'.")
			}
			if len(m.Content) == 0 && len(m.ToolCalls) == 0 {
				return nil, llm.BadRequest(p+".content", "Missing required parameter: '%s.content' (an assistant message needs content or tool_calls).", p)
			}
		case "tool":
			m.Role = llm.RoleTool
			if m.ToolCallID, err = requiredString(obj, "tool_call_id", p+".tool_call_id"); err != nil {
				return nil, err
			}
			if m.ToolCallID == "" {
				return nil, llm.BadRequest(p+".tool_call_id", "Invalid '%s.tool_call_id': empty string. Expected a string with minimum length 1.", p)
			}
			if m.Content, err = decodeContent(obj, p, false, true); err != nil {
				return nil, err
			}
			m.Name = toolNames[m.ToolCallID]
		case "function":
			return nil, llm.BadRequest(p+".role", "The deprecated 'function' role is not supported; use 'tool'.")
		default:
			return nil, llm.BadRequest(p+".role", "Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'.", role)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// decodeContent reads a message's content: a string or an array of parts.
// Images are allowed in user messages only.
func decodeContent(obj map[string]json.RawMessage, p string, images, required bool) ([]llm.Part, error) {
	raw, ok := obj["content"]
	param := p + ".content"
	if !ok || isNull(raw) {
		if required {
			return nil, llm.BadRequest(param, "Missing required parameter: '%s'.", param)
		}
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []llm.Part{llm.TextPart(s)}, nil
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err != nil {
		return nil, invalidType(param, "one of a string or array of objects", raw)
	}
	if len(arr) == 0 {
		return nil, llm.BadRequest(param, "Invalid '%s': empty array. Expected an array with minimum length 1, but got an empty array instead.", param)
	}
	parts := make([]llm.Part, 0, len(arr))
	for j, praw := range arr {
		pp := fmt.Sprintf("%s[%d]", param, j)
		pobj, err := decodeObject(praw, pp)
		if err != nil {
			return nil, err
		}
		typ, err := requiredString(pobj, "type", pp+".type")
		if err != nil {
			return nil, err
		}
		switch typ {
		case "text":
			text, err := requiredString(pobj, "text", pp+".text")
			if err != nil {
				return nil, err
			}
			parts = append(parts, llm.TextPart(text))
		case "refusal":
			text, err := requiredString(pobj, "refusal", pp+".refusal")
			if err != nil {
				return nil, err
			}
			parts = append(parts, llm.TextPart(text))
		case "image_url":
			if !images {
				return nil, llm.BadRequest(pp+".type", "Invalid value: 'image_url'. Image content parts are only supported for messages with role 'user'.")
			}
			iraw := pobj["image_url"]
			if isNull(iraw) {
				return nil, llm.BadRequest(pp+".image_url", "Missing required parameter: '%s.image_url'.", pp)
			}
			iobj, err := decodeObject(iraw, pp+".image_url")
			if err != nil {
				return nil, err
			}
			url, err := requiredString(iobj, "url", pp+".image_url.url")
			if err != nil {
				return nil, err
			}
			if url == "" {
				return nil, llm.BadRequest(pp+".image_url.url", "Invalid '%s.image_url.url': empty string. Expected a valid URL.", pp)
			}
			parts = append(parts, imagePart(url))
		default:
			return nil, llm.BadRequest(pp+".type", "Content part type '%s' is not supported by this gateway; supported types are 'text', 'image_url' and 'refusal'.", typ)
		}
	}
	return parts, nil
}

// imagePart turns an image URL into a part; a base64 data: URI becomes
// inline data so that other formats can carry it.
func imagePart(url string) llm.Part {
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		if mt, ok2 := strings.CutSuffix(meta, ";base64"); ok && ok2 {
			if b, err := base64.StdEncoding.DecodeString(data); err == nil && len(b) > 0 &&
				base64.StdEncoding.EncodeToString(b) == data {
				return llm.Part{Type: llm.PartImage, MediaType: mt, Data: b}
			}
		}
	}
	return llm.Part{Type: llm.PartImage, URL: url}
}

func decodeToolCalls(raw json.RawMessage, p string) ([]llm.ToolCall, error) {
	arr, err := decodeArray(raw, p)
	if err != nil {
		return nil, err
	}
	calls := make([]llm.ToolCall, 0, len(arr))
	for k, craw := range arr {
		cp := fmt.Sprintf("%s[%d]", p, k)
		cobj, err := decodeObject(craw, cp)
		if err != nil {
			return nil, err
		}
		var tc llm.ToolCall
		if tc.ID, err = requiredString(cobj, "id", cp+".id"); err != nil {
			return nil, err
		}
		if typ, err := requiredString(cobj, "type", cp+".type"); err != nil {
			return nil, err
		} else if typ != "function" {
			return nil, llm.BadRequest(cp+".type", "Tool call type '%s' is not supported by this gateway; expected 'function'.", typ)
		}
		fraw := cobj["function"]
		if isNull(fraw) {
			return nil, llm.BadRequest(cp+".function", "Missing required parameter: '%s.function'.", cp)
		}
		fobj, err := decodeObject(fraw, cp+".function")
		if err != nil {
			return nil, err
		}
		if tc.Name, err = requiredString(fobj, "name", cp+".function.name"); err != nil {
			return nil, err
		}
		if tc.Arguments, err = requiredString(fobj, "arguments", cp+".function.arguments"); err != nil {
			return nil, err
		}
		calls = append(calls, tc)
	}
	return calls, nil
}

func decodeTools(raw json.RawMessage) ([]llm.Tool, error) {
	arr, err := decodeArray(raw, "tools")
	if err != nil {
		return nil, err
	}
	tools := make([]llm.Tool, 0, len(arr))
	for i, traw := range arr {
		p := fmt.Sprintf("tools[%d]", i)
		obj, err := decodeObject(traw, p)
		if err != nil {
			return nil, err
		}
		typ, err := requiredString(obj, "type", p+".type")
		if err != nil {
			return nil, err
		}
		if typ != "function" {
			return nil, llm.BadRequest(p+".type", "Tool type '%s' is not supported by this gateway; expected 'function'.", typ)
		}
		fraw := obj["function"]
		if isNull(fraw) {
			return nil, llm.BadRequest(p+".function", "Missing required parameter: '%s.function'.", p)
		}
		fobj, err := decodeObject(fraw, p+".function")
		if err != nil {
			return nil, err
		}
		var t llm.Tool
		if t.Name, err = requiredString(fobj, "name", p+".function.name"); err != nil {
			return nil, err
		}
		if !validToolName(t.Name) {
			return nil, llm.BadRequest(p+".function.name", "Invalid '%s.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.", p)
		}
		if t.Description, err = optionalString(fobj, "description", p+".function.description"); err != nil {
			return nil, err
		}
		if praw := fobj["parameters"]; !isNull(praw) {
			if _, err := decodeObject(praw, p+".function.parameters"); err != nil {
				return nil, err
			}
			t.Parameters = slices.Clone(praw)
		}
		if sraw := fobj["strict"]; !isNull(sraw) {
			if err := json.Unmarshal(sraw, &t.Strict); err != nil {
				return nil, invalidType(p+".function.strict", "a boolean", sraw)
			}
		}
		tools = append(tools, t)
	}
	return tools, nil
}

func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func decodeToolChoice(raw json.RawMessage) (*llm.ToolChoice, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case "auto", "none", "required":
			return &llm.ToolChoice{Mode: llm.ToolChoiceMode(s)}, nil
		}
		return nil, llm.BadRequest("tool_choice", "Invalid value: '%s'. Supported values are: 'none', 'auto', and 'required'.", s)
	}
	obj, err := decodeObject(raw, "tool_choice")
	if err != nil {
		return nil, invalidType("tool_choice", "one of a string or an object", raw)
	}
	typ, err := requiredString(obj, "type", "tool_choice.type")
	if err != nil {
		return nil, err
	}
	if typ != "function" {
		return nil, llm.BadRequest("tool_choice.type", "Tool choice type '%s' is not supported by this gateway; expected 'function'.", typ)
	}
	fraw := obj["function"]
	if isNull(fraw) {
		return nil, llm.BadRequest("tool_choice.function", "Missing required parameter: 'tool_choice.function'.")
	}
	fobj, err := decodeObject(fraw, "tool_choice.function")
	if err != nil {
		return nil, err
	}
	name, err := requiredString(fobj, "name", "tool_choice.function.name")
	if err != nil {
		return nil, err
	}
	return &llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: name}, nil
}

func decodeResponseFormat(raw json.RawMessage) (*llm.ResponseFormat, error) {
	obj, err := decodeObject(raw, "response_format")
	if err != nil {
		return nil, err
	}
	typ, err := requiredString(obj, "type", "response_format.type")
	if err != nil {
		return nil, err
	}
	switch typ {
	case "text":
		return &llm.ResponseFormat{Type: llm.ResponseText}, nil
	case "json_object":
		return &llm.ResponseFormat{Type: llm.ResponseJSONObject}, nil
	case "json_schema":
	default:
		return nil, llm.BadRequest("response_format.type", "Invalid value: '%s'. Supported values are: 'text', 'json_object', and 'json_schema'.", typ)
	}
	sraw := obj["json_schema"]
	if isNull(sraw) {
		return nil, llm.BadRequest("response_format.json_schema", "Missing required parameter: 'response_format.json_schema'.")
	}
	sobj, err := decodeObject(sraw, "response_format.json_schema")
	if err != nil {
		return nil, err
	}
	rf := &llm.ResponseFormat{Type: llm.ResponseJSONSchema}
	if rf.Name, err = requiredString(sobj, "name", "response_format.json_schema.name"); err != nil {
		return nil, err
	}
	if schema := sobj["schema"]; !isNull(schema) {
		if _, err := decodeObject(schema, "response_format.json_schema.schema"); err != nil {
			return nil, err
		}
		rf.Schema = slices.Clone(schema)
	}
	if st := sobj["strict"]; !isNull(st) {
		if err := json.Unmarshal(st, &rf.Strict); err != nil {
			return nil, invalidType("response_format.json_schema.strict", "a boolean", st)
		}
	}
	return rf, nil
}

// Wire shapes for encoding.
type (
	wireRequest struct {
		Model               string              `json:"model"`
		Messages            []wireMessage       `json:"messages"`
		Tools               []wireTool          `json:"tools,omitempty"`
		ToolChoice          any                 `json:"tool_choice,omitempty"`
		ParallelToolCalls   *bool               `json:"parallel_tool_calls,omitempty"`
		ResponseFormat      *wireResponseFormat `json:"response_format,omitempty"`
		MaxCompletionTokens int                 `json:"max_completion_tokens,omitempty"`
		Temperature         *float64            `json:"temperature,omitempty"`
		TopP                *float64            `json:"top_p,omitempty"`
		Seed                *int64              `json:"seed,omitempty"`
		Stop                []string            `json:"stop,omitempty"`
		Stream              bool                `json:"stream,omitempty"`
		StreamOptions       *wireStreamOptions  `json:"stream_options,omitempty"`
		User                string              `json:"user,omitempty"`
		Metadata            map[string]string   `json:"metadata,omitempty"`
	}
	wireStreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	wireMessage struct {
		Role       string         `json:"role"`
		Name       string         `json:"name,omitempty"`
		Content    any            `json:"content,omitempty"`
		ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	wirePart struct {
		Type     string        `json:"type"`
		Text     *string       `json:"text,omitempty"`
		ImageURL *wireImageURL `json:"image_url,omitempty"`
	}
	wireImageURL struct {
		URL string `json:"url"`
	}
	wireToolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function wireFunction `json:"function"`
	}
	wireFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	wireTool struct {
		Type     string          `json:"type"`
		Function wireFunctionDef `json:"function"`
	}
	wireFunctionDef struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
		Strict      bool            `json:"strict,omitempty"`
	}
	wireToolChoiceFunction struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	wireResponseFormat struct {
		Type       string          `json:"type"`
		JSONSchema *wireJSONSchema `json:"json_schema,omitempty"`
	}
	wireJSONSchema struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema,omitempty"`
		Strict bool            `json:"strict,omitempty"`
	}
)

// EncodeRequest writes a Chat Completions request body. Features the format
// cannot carry are an *llm.UnsupportedError.
func (Codec) EncodeRequest(req *llm.Request) ([]byte, error) {
	if req.TopK != nil {
		return nil, unsupported("top_k", "Chat Completions has no top_k parameter")
	}
	w := wireRequest{
		Model:               req.Model,
		Messages:            make([]wireMessage, 0, len(req.Messages)),
		MaxCompletionTokens: req.MaxTokens,
		Temperature:         req.Temperature,
		TopP:                req.TopP,
		Seed:                req.Seed,
		Stop:                req.Stop,
		Stream:              req.Stream,
		User:                req.User,
		Metadata:            req.Metadata,
	}
	if req.IncludeUsage && req.Stream {
		w.StreamOptions = &wireStreamOptions{IncludeUsage: true}
	}
	for i, m := range req.Messages {
		wm, err := encodeMessage(i, m)
		if err != nil {
			return nil, err
		}
		w.Messages = append(w.Messages, wm)
	}
	for i, t := range req.Tools {
		if !validToolName(t.Name) {
			return nil, unsupported(fmt.Sprintf("tools[%d].name", i), fmt.Sprintf("tool name %q does not match ^[a-zA-Z0-9_-]{1,64}$", t.Name))
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunctionDef{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict,
		}})
	}
	if tc := req.ToolChoice; tc != nil {
		switch tc.Mode {
		case "":
		case llm.ToolChoiceAuto, llm.ToolChoiceNone, llm.ToolChoiceRequired:
			w.ToolChoice = string(tc.Mode)
		case llm.ToolChoiceTool:
			var f wireToolChoiceFunction
			f.Type = "function"
			f.Function.Name = tc.Name
			w.ToolChoice = f
		default:
			return nil, unsupported("tool_choice", fmt.Sprintf("unknown mode %q", tc.Mode))
		}
		if tc.DisableParallel {
			w.ParallelToolCalls = new(bool)
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case llm.ResponseText, llm.ResponseJSONObject:
			w.ResponseFormat = &wireResponseFormat{Type: string(rf.Type)}
		case llm.ResponseJSONSchema:
			// OpenAI requires a name; an unnamed schema (from Anthropic or
			// Gemini) gets a stable one.
			name := rf.SchemaName()
			w.ResponseFormat = &wireResponseFormat{Type: "json_schema", JSONSchema: &wireJSONSchema{Name: name, Schema: rf.Schema, Strict: rf.Strict}}
		default:
			return nil, unsupported("response_format.type", fmt.Sprintf("unknown type %q", rf.Type))
		}
	}
	body, ok := appendRequest(make([]byte, 0, requestSizeHint(req)), &w)
	if !ok {
		var err error
		if body, err = marshal(w); err != nil {
			return nil, fmt.Errorf("openai: encode request: %w", err)
		}
	}
	return appendExtra(body, req.Extra)
}

// requestSizeHint guesses the encoded size of req's common fields.
func requestSizeHint(req *llm.Request) int {
	n := 192 + len(req.Model)
	for i := range req.Messages {
		n += 48
		for j := range req.Messages[i].Content {
			n += len(req.Messages[i].Content[j].Text) + 8
		}
		for j := range req.Messages[i].ToolCalls {
			n += 64 + len(req.Messages[i].ToolCalls[j].Arguments)
		}
	}
	return n
}

// appendExtra splices pass-through fields, sorted by name, into the object.
func appendExtra(body []byte, extra map[string]json.RawMessage) ([]byte, error) {
	if len(extra) == 0 {
		return body, nil
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if modeled[k] {
			return nil, fmt.Errorf("openai: encode request: extra field %q collides with a modeled field", k)
		}
		if !json.Valid(extra[k]) {
			return nil, fmt.Errorf("openai: encode request: extra field %q is not valid JSON", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	body = body[:len(body)-1] // drop '}'
	for _, k := range keys {
		body = append(body, ',')
		body = appendString(body, k)
		body = append(body, ':')
		body = append(body, bytes.TrimSpace(extra[k])...)
	}
	return append(body, '}'), nil
}

func encodeMessage(i int, m llm.Message) (wireMessage, error) {
	// p names the message in an error; made only for one.
	p := func() string { return "messages[" + strconv.Itoa(i) + "]" }
	wm := wireMessage{Role: string(m.Role), Name: m.Name}
	if m.IsError {
		return wm, unsupported(p()+".is_error", "Chat Completions tool messages cannot flag an error")
	}
	if len(m.ToolCalls) > 0 && m.Role != llm.RoleAssistant {
		return wm, unsupported(p()+".tool_calls", "only assistant messages carry tool calls")
	}
	if m.ToolCallID != "" && m.Role != llm.RoleTool {
		return wm, unsupported(p()+".tool_call_id", "only tool messages answer a tool call")
	}
	images := false
	for j, part := range m.Content {
		switch part.Type {
		case llm.PartText:
		case llm.PartImage:
			images = true
			if part.URL == "" && len(part.Data) == 0 {
				return wm, unsupported(fmt.Sprintf("%s.content[%d]", p(), j), "image part without URL or data")
			}
		default:
			return wm, unsupported(fmt.Sprintf("%s.content[%d].type", p(), j), fmt.Sprintf("content part type %q", part.Type))
		}
	}
	if images && m.Role != llm.RoleUser {
		return wm, unsupported(p()+".content", fmt.Sprintf("images in a %s message", m.Role))
	}
	switch m.Role {
	case llm.RoleSystem, llm.RoleUser:
		wm.Content = encodeContent(m.Content, "")
	case llm.RoleAssistant:
		if len(m.Content) > 0 {
			wm.Content = encodeContent(m.Content, "")
		} else if len(m.ToolCalls) == 0 {
			wm.Content = ""
		}
		for _, tc := range m.ToolCalls {
			wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments}})
		}
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return wm, unsupported(p()+".tool_call_id", "a tool message must name the call it answers")
		}
		wm.Name = "" // tool messages carry no name; tool_call_id links them
		wm.ToolCallID = m.ToolCallID
		wm.Content = encodeContent(m.Content, "")
	default:
		return wm, unsupported(p()+".role", fmt.Sprintf("role %q", m.Role))
	}
	return wm, nil
}

// encodeContent writes a single text part as a string and anything else as
// an array of parts.
func encodeContent(parts []llm.Part, empty string) any {
	if len(parts) == 0 {
		return empty
	}
	if len(parts) == 1 && parts[0].Type == llm.PartText {
		return parts[0].Text
	}
	out := make([]wirePart, 0, len(parts))
	for _, part := range parts {
		if part.Type == llm.PartText {
			out = append(out, wirePart{Type: "text", Text: &part.Text})
			continue
		}
		url := part.URL
		if len(part.Data) > 0 {
			url = "data:" + part.MediaType + ";base64," + base64.StdEncoding.EncodeToString(part.Data)
		}
		out = append(out, wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: url}})
	}
	return out
}
