package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/brownout-dev/brownout/llm"
)

// modelled lists the top-level request fields the normalized model carries.
// Every other field goes to Request.Extra and back.
var modelled = map[string]bool{
	"model": true, "messages": true, "system": true, "max_tokens": true,
	"temperature": true, "top_p": true, "top_k": true, "stop_sequences": true,
	"stream": true, "metadata": true, "tools": true, "tool_choice": true,
	"output_config": true,
}

// imageTypes are the media types the Messages API accepts for base64 images.
var imageTypes = map[string]bool{
	"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true,
}

// DecodeRequest parses a Messages API request body (POST /v1/messages).
//
// The system prompt becomes one llm.RoleSystem message at the start (one part
// per text block); each tool_result block becomes its own llm.RoleTool
// message, named after the tool_use it answers; output_config.format becomes
// ResponseFormat. Fields the normalized model does not know go to Extra
// verbatim. cache_control markers on blocks and tools are accepted and
// dropped: they are caching hints, not content. Block types the model cannot
// carry (thinking, document, server tools...) are a 400 naming the field.
func (Codec) DecodeRequest(body []byte) (*llm.Request, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, badJSON("", err)
	}
	if top == nil {
		return nil, llm.BadRequest("", "request body must be a JSON object")
	}
	req := &llm.Request{IncludeUsage: true}
	d := reqDecoder{top: top}

	if !d.str("model", &req.Model) {
		return nil, d.err
	}
	if req.Model == "" {
		return nil, llm.BadRequest("model", "field required")
	}
	raw, ok := top["max_tokens"]
	if !ok || isNull(raw) {
		return nil, llm.BadRequest("max_tokens", "field required")
	}
	if err := json.Unmarshal(raw, &req.MaxTokens); err != nil {
		return nil, badJSON("max_tokens", err)
	}
	if req.MaxTokens < 1 {
		return nil, llm.BadRequest("max_tokens", "must be at least 1, got %d", req.MaxTokens)
	}
	if raw, ok := top["system"]; ok && !isNull(raw) {
		sys, err := decodeSystem(raw)
		if err != nil {
			return nil, err
		}
		if sys != nil {
			req.Messages = append(req.Messages, *sys)
		}
	}
	raw, ok = top["messages"]
	if !ok || isNull(raw) {
		return nil, llm.BadRequest("messages", "field required")
	}
	msgs, err := decodeMessages(raw)
	if err != nil {
		return nil, err
	}
	req.Messages = append(req.Messages, msgs...)

	if !d.float("temperature", &req.Temperature) || !d.float("top_p", &req.TopP) {
		return nil, d.err
	}
	if raw, ok := top["top_k"]; ok && !isNull(raw) {
		var k int
		if err := json.Unmarshal(raw, &k); err != nil {
			return nil, badJSON("top_k", err)
		}
		req.TopK = &k
	}
	if raw, ok := top["stop_sequences"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &req.Stop); err != nil {
			return nil, badJSON("stop_sequences", err)
		}
	}
	if raw, ok := top["stream"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &req.Stream); err != nil {
			return nil, badJSON("stream", err)
		}
	}
	if raw, ok := top["metadata"]; ok && !isNull(raw) {
		if req.User, err = decodeMetadata(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := top["tools"]; ok && !isNull(raw) {
		if req.Tools, err = decodeTools(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := top["tool_choice"]; ok && !isNull(raw) {
		if req.ToolChoice, err = decodeToolChoice(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := top["output_config"]; ok && !isNull(raw) {
		rest, rf, err := decodeOutputConfig(raw)
		if err != nil {
			return nil, err
		}
		req.ResponseFormat = rf
		if rest != nil {
			req.Extra = map[string]json.RawMessage{"output_config": rest}
		}
	}
	for k, v := range top {
		if modelled[k] {
			continue
		}
		if req.Extra == nil {
			req.Extra = make(map[string]json.RawMessage)
		}
		req.Extra[k] = v
	}
	return req, nil
}

// reqDecoder reads optional scalar fields and remembers the first error.
type reqDecoder struct {
	top map[string]json.RawMessage
	err error
}

func (d *reqDecoder) str(name string, dst *string) bool {
	raw, ok := d.top[name]
	if !ok || isNull(raw) {
		return true
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		d.err = badJSON(name, err)
		return false
	}
	return true
}

func (d *reqDecoder) float(name string, dst **float64) bool {
	raw, ok := d.top[name]
	if !ok || isNull(raw) {
		return true
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		d.err = badJSON(name, err)
		return false
	}
	*dst = &f
	return true
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// badJSON turns a json error at param into a 400, naming the nested field
// when the json package knows it.
func badJSON(param string, err error) *llm.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			param = join(param, te.Field)
		}
		return llm.BadRequest(param, "expected %s, got JSON %s", kindName(te.Type.Kind().String()), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return llm.BadRequest(param, "invalid JSON at byte %d: %v", se.Offset, se.Error())
	}
	return llm.BadRequest(param, "invalid JSON: %v", err)
}

func kindName(k string) string {
	switch k {
	case "int", "int64", "int32":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return k
}

func join(prefix, field string) string {
	if prefix == "" {
		return field
	}
	if field == "" {
		return prefix
	}
	return prefix + "." + field
}

func idx(prefix string, i int) string { return prefix + "." + strconv.Itoa(i) }

// wireBlock is any content block, request or response side.
type wireBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	Source    *wireSource     `json:"source"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type wireSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

func decodeSystem(raw json.RawMessage) (*llm.Message, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, badJSON("system", err)
		}
		if s == "" {
			return nil, nil
		}
		return &llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart(s)}}, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, llm.BadRequest("system", "expected a string or an array of text blocks")
	}
	if len(blocks) == 0 {
		return nil, nil
	}
	m := &llm.Message{Role: llm.RoleSystem}
	for i, b := range blocks {
		p := idx("system", i)
		var wb wireBlock
		if err := json.Unmarshal(b, &wb); err != nil {
			return nil, badJSON(p, err)
		}
		if wb.Type != "text" {
			return nil, llm.BadRequest(p+".type", "system blocks must be of type text, got %q", wb.Type)
		}
		if wb.Text == nil {
			return nil, llm.BadRequest(p+".text", "field required")
		}
		m.Content = append(m.Content, llm.TextPart(*wb.Text))
	}
	return m, nil
}

func decodeMessages(raw json.RawMessage) ([]llm.Message, error) {
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, badJSON("messages", err)
	}
	if len(msgs) == 0 {
		return nil, llm.BadRequest("messages", "at least one message is required")
	}
	toolNames := map[string]string{}
	var out []llm.Message
	for i, rm := range msgs {
		p := idx("messages", i)
		var wm struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(rm, &wm); err != nil {
			return nil, badJSON(p, err)
		}
		if wm.Content == nil || isNull(wm.Content) {
			return nil, llm.BadRequest(p+".content", "field required")
		}
		switch wm.Role {
		case "user", "assistant":
		case "":
			return nil, llm.BadRequest(p+".role", "field required")
		default:
			return nil, llm.BadRequest(p+".role", "must be \"user\" or \"assistant\", got %q", wm.Role)
		}
		role := llm.Role(wm.Role)
		c := bytes.TrimSpace(wm.Content)
		if len(c) > 0 && c[0] == '"' {
			var s string
			if err := json.Unmarshal(c, &s); err != nil {
				return nil, badJSON(p+".content", err)
			}
			out = append(out, llm.Message{Role: role, Content: []llm.Part{llm.TextPart(s)}})
			continue
		}
		var blocks []json.RawMessage
		if err := json.Unmarshal(c, &blocks); err != nil {
			return nil, llm.BadRequest(p+".content", "expected a string or an array of content blocks")
		}
		cur := llm.Message{Role: role}
		flush := func() {
			if len(cur.Content) > 0 || len(cur.ToolCalls) > 0 {
				out = append(out, cur)
			}
			cur = llm.Message{Role: role}
		}
		for j, rb := range blocks {
			bp := idx(p+".content", j)
			var wb wireBlock
			if err := json.Unmarshal(rb, &wb); err != nil {
				return nil, badJSON(bp, err)
			}
			switch {
			case wb.Type == "":
				return nil, llm.BadRequest(bp+".type", "field required")
			case wb.Type == "text":
				if wb.Text == nil {
					return nil, llm.BadRequest(bp+".text", "field required")
				}
				cur.Content = append(cur.Content, llm.TextPart(*wb.Text))
			case wb.Type == "image" && role == llm.RoleUser:
				part, err := decodeImage(bp, wb.Source)
				if err != nil {
					return nil, err
				}
				cur.Content = append(cur.Content, part)
			case wb.Type == "tool_use" && role == llm.RoleAssistant:
				tc, err := decodeToolUse(bp, &wb)
				if err != nil {
					return nil, err
				}
				toolNames[tc.ID] = tc.Name
				cur.ToolCalls = append(cur.ToolCalls, tc)
			case wb.Type == "tool_result" && role == llm.RoleUser:
				flush()
				tm, err := decodeToolResult(bp, &wb)
				if err != nil {
					return nil, err
				}
				tm.Name = toolNames[tm.ToolCallID]
				out = append(out, tm)
			case wb.Type == "image" || wb.Type == "tool_use" || wb.Type == "tool_result":
				return nil, llm.BadRequest(bp+".type", "a %s block is not allowed in a %s message", wb.Type, role)
			default:
				return nil, llm.BadRequest(bp+".type", "unsupported content block type %q", wb.Type)
			}
		}
		if len(blocks) == 0 {
			// An empty content array is still a turn; keep it so that
			// encoding gives it back.
			out = append(out, cur)
			continue
		}
		flush()
	}
	return out, nil
}

func decodeImage(p string, src *wireSource) (llm.Part, error) {
	if src == nil {
		return llm.Part{}, llm.BadRequest(p+".source", "field required")
	}
	switch src.Type {
	case "base64":
		if !imageTypes[src.MediaType] {
			return llm.Part{}, llm.BadRequest(p+".source.media_type", "must be one of image/jpeg, image/png, image/gif, image/webp, got %q", src.MediaType)
		}
		data, err := base64.StdEncoding.DecodeString(src.Data)
		if err != nil {
			return llm.Part{}, llm.BadRequest(p+".source.data", "invalid base64: %v", err)
		}
		if len(data) == 0 {
			return llm.Part{}, llm.BadRequest(p+".source.data", "field required")
		}
		return llm.Part{Type: llm.PartImage, MediaType: src.MediaType, Data: data}, nil
	case "url":
		if src.URL == "" {
			return llm.Part{}, llm.BadRequest(p+".source.url", "field required")
		}
		if strings.HasPrefix(src.URL, "data:") {
			return llm.Part{}, llm.BadRequest(p+".source.url", "inline data goes in a base64 source, not a data: URL")
		}
		return llm.Part{Type: llm.PartImage, URL: src.URL}, nil
	case "":
		return llm.Part{}, llm.BadRequest(p+".source.type", "field required")
	default:
		return llm.Part{}, llm.BadRequest(p+".source.type", "unsupported image source type %q", src.Type)
	}
}

func decodeToolUse(p string, wb *wireBlock) (llm.ToolCall, error) {
	if wb.ID == "" {
		return llm.ToolCall{}, llm.BadRequest(p+".id", "field required")
	}
	if wb.Name == "" {
		return llm.ToolCall{}, llm.BadRequest(p+".name", "field required")
	}
	in := bytes.TrimSpace(wb.Input)
	if len(in) == 0 || in[0] != '{' {
		return llm.ToolCall{}, llm.BadRequest(p+".input", "must be a JSON object")
	}
	return llm.ToolCall{ID: wb.ID, Name: wb.Name, Arguments: compact(in)}, nil
}

// compact returns JSON text without insignificant space: Anthropic sends
// tool input as an object, whose spacing carries no meaning.
func compact(raw []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

func decodeToolResult(p string, wb *wireBlock) (llm.Message, error) {
	if wb.ToolUseID == "" {
		return llm.Message{}, llm.BadRequest(p+".tool_use_id", "field required")
	}
	m := llm.Message{Role: llm.RoleTool, ToolCallID: wb.ToolUseID, IsError: wb.IsError}
	c := bytes.TrimSpace(wb.Content)
	if len(c) == 0 || string(c) == "null" {
		return m, nil
	}
	if c[0] == '"' {
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return llm.Message{}, badJSON(p+".content", err)
		}
		m.Content = []llm.Part{llm.TextPart(s)}
		return m, nil
	}
	var blocks []wireBlock
	if err := json.Unmarshal(c, &blocks); err != nil {
		return llm.Message{}, badJSON(p+".content", err)
	}
	for k, b := range blocks {
		bp := idx(p+".content", k)
		switch b.Type {
		case "text":
			if b.Text == nil {
				return llm.Message{}, llm.BadRequest(bp+".text", "field required")
			}
			m.Content = append(m.Content, llm.TextPart(*b.Text))
		case "image":
			part, err := decodeImage(bp, b.Source)
			if err != nil {
				return llm.Message{}, err
			}
			m.Content = append(m.Content, part)
		case "":
			return llm.Message{}, llm.BadRequest(bp+".type", "field required")
		default:
			return llm.Message{}, llm.BadRequest(bp+".type", "unsupported tool result block type %q", b.Type)
		}
	}
	return m, nil
}

func decodeMetadata(raw json.RawMessage) (string, error) {
	var md map[string]json.RawMessage
	if err := json.Unmarshal(raw, &md); err != nil {
		return "", badJSON("metadata", err)
	}
	var user string
	for k, v := range md {
		if k != "user_id" {
			return "", llm.BadRequest("metadata."+k, "extra inputs are not permitted")
		}
		if isNull(v) {
			continue
		}
		if err := json.Unmarshal(v, &user); err != nil {
			return "", badJSON("metadata.user_id", err)
		}
	}
	return user, nil
}

func decodeTools(raw json.RawMessage) ([]llm.Tool, error) {
	var wts []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
		Strict      bool            `json:"strict"`
	}
	if err := json.Unmarshal(raw, &wts); err != nil {
		return nil, badJSON("tools", err)
	}
	tools := make([]llm.Tool, 0, len(wts))
	for i, wt := range wts {
		p := idx("tools", i)
		if wt.Type != "" && wt.Type != "custom" {
			return nil, llm.BadRequest(p+".type", "unsupported tool type %q: only custom tools are supported", wt.Type)
		}
		if wt.Name == "" {
			return nil, llm.BadRequest(p+".name", "field required")
		}
		schema := bytes.TrimSpace(wt.InputSchema)
		if len(schema) == 0 || schema[0] != '{' {
			return nil, llm.BadRequest(p+".input_schema", "field required: a JSON Schema object")
		}
		tools = append(tools, llm.Tool{Name: wt.Name, Description: wt.Description, Parameters: json.RawMessage(schema), Strict: wt.Strict})
	}
	return tools, nil
}

func decodeToolChoice(raw json.RawMessage) (*llm.ToolChoice, error) {
	var wc struct {
		Type                   string `json:"type"`
		Name                   string `json:"name"`
		DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
	}
	if err := json.Unmarshal(raw, &wc); err != nil {
		return nil, badJSON("tool_choice", err)
	}
	tc := &llm.ToolChoice{DisableParallel: wc.DisableParallelToolUse}
	switch wc.Type {
	case "auto":
		tc.Mode = llm.ToolChoiceAuto
	case "any":
		tc.Mode = llm.ToolChoiceRequired
	case "none":
		tc.Mode = llm.ToolChoiceNone
	case "tool":
		if wc.Name == "" {
			return nil, llm.BadRequest("tool_choice.name", "field required")
		}
		tc.Mode, tc.Name = llm.ToolChoiceTool, wc.Name
	case "":
		return nil, llm.BadRequest("tool_choice.type", "field required")
	default:
		return nil, llm.BadRequest("tool_choice.type", "must be auto, any, tool or none, got %q", wc.Type)
	}
	return tc, nil
}

// decodeOutputConfig splits output_config into its format (the normalized
// ResponseFormat) and the rest (kept in Extra), nil when nothing is left.
func decodeOutputConfig(raw json.RawMessage) (json.RawMessage, *llm.ResponseFormat, error) {
	var oc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &oc); err != nil {
		return nil, nil, badJSON("output_config", err)
	}
	var rf *llm.ResponseFormat
	if f, ok := oc["format"]; ok && !isNull(f) {
		var wf struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		}
		if err := json.Unmarshal(f, &wf); err != nil {
			return nil, nil, badJSON("output_config.format", err)
		}
		if wf.Type != "json_schema" {
			return nil, nil, llm.BadRequest("output_config.format.type", "must be json_schema, got %q", wf.Type)
		}
		schema := bytes.TrimSpace(wf.Schema)
		if len(schema) == 0 || schema[0] != '{' {
			return nil, nil, llm.BadRequest("output_config.format.schema", "field required: a JSON Schema object")
		}
		// Anthropic's structured outputs always constrain decoding.
		rf = &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Schema: json.RawMessage(schema), Strict: true}
	}
	delete(oc, "format")
	if len(oc) == 0 {
		return nil, rf, nil
	}
	rest, err := marshalObject(oc)
	if err != nil {
		return nil, nil, llm.BadRequest("output_config", "%v", err)
	}
	return rest, rf, nil
}

// marshalObject writes m with its keys sorted.
func marshalObject(m map[string]json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		if err := json.Compact(&buf, m[k]); err != nil {
			return nil, fmt.Errorf("field %s: %w", k, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
