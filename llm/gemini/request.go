package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/brownout-dev/brownout/llm"
)

// Codec is the Gemini API's generateContent wire format
// (generativelanguage.googleapis.com v1beta). It implements [llm.Codec].
type Codec struct{}

var _ llm.Codec = Codec{}

// Format returns llm.FormatGemini.
func (Codec) Format() llm.Format { return llm.FormatGemini }

// Top-level request fields Gemini accepts that brownout carries through
// Request.Extra by name.
var topExtra = []string{"safetySettings", "cachedContent"}

// generationConfig fields brownout carries through Request.Extra under the
// key "generationConfig.<name>".
var genExtra = []string{
	"candidateCount", "presencePenalty", "frequencyPenalty", "responseLogprobs", "logprobs",
	"responseModalities", "mediaResolution", "speechConfig", "thinkingConfig", "imageConfig",
	"enableEnhancedCivicAnswers",
}

const genPrefix = "generationConfig."

// Part fields Gemini knows that brownout does not model: a request using them
// is refused with a 400 naming the field rather than silently losing them.
var unmodelledPartFields = []string{
	"thoughtSignature", "executableCode", "codeExecutionResult", "videoMetadata",
	"mediaResolution", "toolCall", "toolResponse", "partMetadata",
}

// Tool kinds other than function declarations (server-side tools).
var unmodelledTools = []string{
	"googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext", "fileSearch",
	"computerUse", "googleMaps", "mcpServers", "retrieval", "enterpriseWebSearch",
}

// syntheticID is the tool-call id the decoders give the n-th function call of
// a request or response that carries no id of its own.
func syntheticID(n int) string { return "call_" + strconv.Itoa(n) }

// isSyntheticID reports whether id has the form of a syntheticID ("call_" and
// digits). Encoders do not write such ids: decoding regenerates them.
func isSyntheticID(id string) bool {
	d, ok := strings.CutPrefix(id, "call_")
	if !ok || d == "" {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// DecodeRequest parses a generateContent request body. Model and Stream are
// left unset: they live in the URL (see [ParsePath]). Keys may be written in
// lowerCamelCase or snake_case, as Google accepts both.
//
// Each user turn becomes a RoleUser message, except that every functionResponse
// part becomes a RoleTool message (Name, ToolCallID, Content: the response
// object as JSON text, or the bare string of a response that is only
// {"output": "..."}; a response that is only {"error": "..."} sets IsError).
// Each model turn becomes one RoleAssistant message: text and media parts in
// Content, functionCall parts in ToolCalls. A function call without an id gets
// "call_N", N counting the request's function calls from 0; a functionResponse
// without an id is linked to the earliest unanswered call of the previous
// model turn with the same name. systemInstruction becomes a leading
// RoleSystem message.
//
// parameters and responseSchema (Gemini's OpenAPI schema subset) are converted
// to JSON Schema (lower-case types, nullable as a "null" type);
// parametersJsonSchema and responseJsonSchema are kept as they are.
func (Codec) DecodeRequest(body []byte) (*llm.Request, error) {
	top, err := decodeObject(body, "")
	if err != nil {
		return nil, err
	}
	req := &llm.Request{}
	if si, ok, err := top.object("systemInstruction"); err != nil {
		return nil, err
	} else if ok {
		m, err := decodeSystem(si)
		if err != nil {
			return nil, err
		}
		req.Messages = append(req.Messages, m)
	}
	contents, ok, err := top.array("contents")
	if err != nil {
		return nil, err
	}
	if !ok || len(contents) == 0 {
		return nil, llm.BadRequest("contents", "contents must not be empty")
	}
	d := requestDecoder{req: req}
	for i, c := range contents {
		if err := d.content(c, index("contents", i)); err != nil {
			return nil, err
		}
	}
	if err := decodeTools(top, req); err != nil {
		return nil, err
	}
	if err := decodeToolConfig(top, req); err != nil {
		return nil, err
	}
	if err := decodeGenerationConfig(top, req); err != nil {
		return nil, err
	}
	for _, k := range topExtra {
		if v, ok := top.take(k); ok {
			setExtra(req, k, v)
		}
	}
	if err := top.done(); err != nil {
		return nil, err
	}
	return req, nil
}

func setExtra(req *llm.Request, k string, v json.RawMessage) {
	if req.Extra == nil {
		req.Extra = make(map[string]json.RawMessage)
	}
	req.Extra[k] = v
}

func decodeSystem(o *object) (llm.Message, error) {
	if _, _, err := o.str("role"); err != nil {
		return llm.Message{}, err
	}
	parts, ok, err := o.array("parts")
	if err != nil {
		return llm.Message{}, err
	}
	if !ok || len(parts) == 0 {
		return llm.Message{}, llm.BadRequest(o.at("parts"), "systemInstruction must have at least one part")
	}
	if err := o.done(); err != nil {
		return llm.Message{}, err
	}
	m := llm.Message{Role: llm.RoleSystem}
	for j, raw := range parts {
		path := index(o.at("parts"), j)
		p, err := decodePart(raw, path)
		if err != nil {
			return llm.Message{}, err
		}
		if p.kind != "text" {
			return llm.Message{}, llm.BadRequest(path, "systemInstruction parts must be text, not %s", p.kind)
		}
		m.Content = append(m.Content, p.part)
	}
	return m, nil
}

// decodedPart is one request part.
type decodedPart struct {
	kind string // text, inlineData, fileData, functionCall, functionResponse
	part llm.Part
	call *functionCall     // Args compacted, "{}" when absent
	resp *functionResponse // Response compacted
}

var partKinds = []string{"text", "inlineData", "fileData", "functionCall", "functionResponse"}

func decodePart(raw json.RawMessage, path string) (decodedPart, error) {
	o, err := decodeObject(raw, path)
	if err != nil {
		return decodedPart{}, err
	}
	if v, ok := o.take("thought"); ok {
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return decodedPart{}, llm.BadRequest(o.at("thought"), "thought must be a boolean")
		}
		if b {
			return decodedPart{}, unsupportedField(o.at("thought"))
		}
	}
	for _, k := range unmodelledPartFields {
		if _, ok := o.fields[k]; ok {
			return decodedPart{}, unsupportedField(o.at(k))
		}
	}
	var kind string
	for _, k := range partKinds {
		if _, ok := o.fields[k]; ok {
			if kind != "" {
				return decodedPart{}, llm.BadRequest(o.at(k), "a part holds one of text, inlineData, fileData, functionCall or functionResponse; this one has both %s and %s", kind, k)
			}
			kind = k
		}
	}
	var v json.RawMessage
	if kind != "" {
		v, _ = o.take(kind)
	}
	if err := o.done(); err != nil {
		return decodedPart{}, err
	}
	p := decodedPart{kind: kind}
	at := o.at(kind)
	switch kind {
	case "":
		return p, llm.BadRequest(path, "part has no data: set text, inlineData, fileData, functionCall or functionResponse")
	case "text":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return p, llm.BadRequest(at, "text must be a string")
		}
		p.part = llm.TextPart(s)
	case "inlineData":
		b, err := decodeObject(v, at)
		if err != nil {
			return p, err
		}
		mime, ok, err := b.str("mimeType")
		if err != nil {
			return p, err
		}
		if !ok || mime == "" {
			return p, llm.BadRequest(b.at("mimeType"), "inlineData.mimeType is required")
		}
		data, ok, err := b.str("data")
		if err != nil {
			return p, err
		}
		if !ok {
			return p, llm.BadRequest(b.at("data"), "inlineData.data is required")
		}
		raw, err := decodeBase64(data)
		if err != nil {
			return p, llm.BadRequest(b.at("data"), "inlineData.data is not base64: %v", err)
		}
		if err := b.done(); err != nil {
			return p, err
		}
		p.part = llm.Part{Type: llm.PartImage, MediaType: mime, Data: raw}
	case "fileData":
		f, err := decodeObject(v, at)
		if err != nil {
			return p, err
		}
		mime, _, err := f.str("mimeType")
		if err != nil {
			return p, err
		}
		uri, ok, err := f.str("fileUri")
		if err != nil {
			return p, err
		}
		if !ok || uri == "" {
			return p, llm.BadRequest(f.at("fileUri"), "fileData.fileUri is required")
		}
		if err := f.done(); err != nil {
			return p, err
		}
		p.part = llm.Part{Type: llm.PartImage, MediaType: mime, URL: uri}
	case "functionCall":
		f, err := decodeObject(v, at)
		if err != nil {
			return p, err
		}
		c := &functionCall{}
		if c.ID, c.Name, err = idAndName(f, "functionCall"); err != nil {
			return p, err
		}
		c.Args = json.RawMessage("{}")
		if v, ok := f.take("args"); ok {
			if c.Args, err = compactObject(v); err != nil {
				return p, llm.BadRequest(f.at("args"), "functionCall.args must be a JSON object")
			}
		}
		if err := f.done(); err != nil {
			return p, err
		}
		p.call = c
	case "functionResponse":
		f, err := decodeObject(v, at)
		if err != nil {
			return p, err
		}
		r := &functionResponse{}
		if r.ID, r.Name, err = idAndName(f, "functionResponse"); err != nil {
			return p, err
		}
		v, ok := f.take("response")
		if !ok {
			return p, llm.BadRequest(f.at("response"), "functionResponse.response is required")
		}
		if r.Response, err = compactObject(v); err != nil {
			return p, llm.BadRequest(f.at("response"), "functionResponse.response must be a JSON object")
		}
		for _, k := range []string{"willContinue", "scheduling", "parts"} {
			if _, ok := f.fields[k]; ok {
				return p, unsupportedField(f.at(k))
			}
		}
		if err := f.done(); err != nil {
			return p, err
		}
		p.resp = r
	}
	return p, nil
}

// compactObject checks that v is a JSON object and returns it compacted.
func compactObject(v json.RawMessage) (json.RawMessage, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodeBase64 reads proto JSON bytes: standard or URL-safe base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if len(s)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	return enc.DecodeString(s)
}

type requestDecoder struct {
	req     *llm.Request
	calls   int            // function calls seen so far
	pending []llm.ToolCall // unanswered calls of the last model turn
}

func (d *requestDecoder) content(raw json.RawMessage, path string) error {
	o, err := decodeObject(raw, path)
	if err != nil {
		return err
	}
	role, _, err := o.str("role")
	if err != nil {
		return err
	}
	parts, ok, err := o.array("parts")
	if err != nil {
		return err
	}
	if !ok || len(parts) == 0 {
		return llm.BadRequest(o.at("parts"), "a content must have at least one part")
	}
	if err := o.done(); err != nil {
		return err
	}
	switch role {
	case "model":
		return d.model(parts, o.at("parts"))
	case "user", "", "function":
		return d.user(parts, o.at("parts"))
	default:
		return llm.BadRequest(o.at("role"), `role must be "user" or "model", not %q`, role)
	}
}

func (d *requestDecoder) model(parts []json.RawMessage, path string) error {
	m := llm.Message{Role: llm.RoleAssistant}
	for j, raw := range parts {
		pp := index(path, j)
		p, err := decodePart(raw, pp)
		if err != nil {
			return err
		}
		switch p.kind {
		case "functionCall":
			id := p.call.ID
			if id == "" {
				id = syntheticID(d.calls)
			}
			d.calls++
			m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: id, Name: p.call.Name, Arguments: string(p.call.Args)})
		case "functionResponse":
			return llm.BadRequest(pp, "a functionResponse belongs in a user turn, not a model turn")
		default:
			m.Content = append(m.Content, p.part)
		}
	}
	d.pending = slices.Clone(m.ToolCalls)
	d.req.Messages = append(d.req.Messages, m)
	return nil
}

func (d *requestDecoder) user(parts []json.RawMessage, path string) error {
	cur := -1 // index in Messages of this turn's open user message
	for j, raw := range parts {
		pp := index(path, j)
		p, err := decodePart(raw, pp)
		if err != nil {
			return err
		}
		switch p.kind {
		case "functionCall":
			return llm.BadRequest(pp, "a functionCall belongs in a model turn, not a user turn")
		case "functionResponse":
			d.req.Messages = append(d.req.Messages, d.toolMessage(p.resp))
			cur = -1
		default:
			if cur < 0 {
				d.req.Messages = append(d.req.Messages, llm.Message{Role: llm.RoleUser})
				cur = len(d.req.Messages) - 1
			}
			d.req.Messages[cur].Content = append(d.req.Messages[cur].Content, p.part)
		}
	}
	return nil
}

func (d *requestDecoder) toolMessage(r *functionResponse) llm.Message {
	m := llm.Message{Role: llm.RoleTool, Name: r.Name, ToolCallID: r.ID}
	for i, c := range d.pending {
		if (r.ID != "" && c.ID == r.ID) || (r.ID == "" && c.Name == r.Name) {
			m.ToolCallID = c.ID
			d.pending = slices.Delete(d.pending, i, i+1)
			break
		}
	}
	text, isErr := responseText(r.Response)
	m.Content = []llm.Part{llm.TextPart(text)}
	m.IsError = isErr
	return m
}

// responseText turns a functionResponse.response into tool-message text: the
// bare string of {"output": "..."} or {"error": "..."} (the latter an error
// result), else the object as JSON.
func responseText(obj json.RawMessage) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) == nil && len(m) == 1 {
		for k, v := range m {
			var s string
			if (k == "output" || k == "error") && json.Unmarshal(v, &s) == nil {
				return s, k == "error"
			}
		}
	}
	return string(obj), false
}

func decodeTools(top *object, req *llm.Request) error {
	tools, _, err := top.array("tools")
	if err != nil {
		return err
	}
	for i, raw := range tools {
		o, err := decodeObject(raw, index("tools", i))
		if err != nil {
			return err
		}
		for _, k := range unmodelledTools {
			if _, ok := o.fields[k]; ok {
				return unsupportedField(o.at(k))
			}
		}
		decls, _, err := o.array("functionDeclarations")
		if err != nil {
			return err
		}
		if err := o.done(); err != nil {
			return err
		}
		for j, raw := range decls {
			t, err := decodeFunctionDeclaration(raw, index(o.at("functionDeclarations"), j))
			if err != nil {
				return err
			}
			req.Tools = append(req.Tools, t)
		}
	}
	return nil
}

func decodeFunctionDeclaration(raw json.RawMessage, path string) (llm.Tool, error) {
	o, err := decodeObject(raw, path)
	if err != nil {
		return llm.Tool{}, err
	}
	var t llm.Tool
	if t.Name, _, err = o.str("name"); err != nil {
		return t, err
	}
	if t.Name == "" {
		return t, llm.BadRequest(o.at("name"), "functionDeclarations name is required")
	}
	if t.Description, _, err = o.str("description"); err != nil {
		return t, err
	}
	for _, k := range []string{"response", "responseJsonSchema", "behavior"} {
		if _, ok := o.fields[k]; ok {
			return t, unsupportedField(o.at(k))
		}
	}
	p, hasP := o.take("parameters")
	js, hasJS := o.take("parametersJsonSchema")
	switch {
	case hasP && hasJS:
		return t, llm.BadRequest(o.at("parametersJsonSchema"), "set parameters or parametersJsonSchema, not both")
	case hasP:
		if t.Parameters, err = openAPIToJSONSchema(p); err != nil {
			return t, llm.BadRequest(o.at("parameters"), "parameters: %v", err)
		}
	case hasJS:
		if t.Parameters, err = compactObject(js); err != nil {
			return t, llm.BadRequest(o.at("parametersJsonSchema"), "parametersJsonSchema must be a JSON object")
		}
	}
	return t, o.done()
}

func decodeToolConfig(top *object, req *llm.Request) error {
	tc, ok, err := top.object("toolConfig")
	if err != nil || !ok {
		return err
	}
	if _, ok := tc.fields["retrievalConfig"]; ok {
		return unsupportedField(tc.at("retrievalConfig"))
	}
	fc, ok, err := tc.object("functionCallingConfig")
	if err != nil {
		return err
	}
	if err := tc.done(); err != nil || !ok {
		return err
	}
	mode, _, err := fc.str("mode")
	if err != nil {
		return err
	}
	names, err := fc.strings("allowedFunctionNames")
	if err != nil {
		return err
	}
	if err := fc.done(); err != nil {
		return err
	}
	if len(names) > 0 && mode != "ANY" {
		return llm.BadRequest(fc.at("allowedFunctionNames"), "allowedFunctionNames can only be set when mode is ANY")
	}
	switch mode {
	case "AUTO", "", "MODE_UNSPECIFIED":
		req.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceAuto}
	case "NONE":
		req.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceNone}
	case "ANY":
		switch len(names) {
		case 0:
			req.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceRequired}
		case 1:
			if names[0] == "" {
				return llm.BadRequest(fc.at("allowedFunctionNames"), "allowedFunctionNames holds an empty name")
			}
			req.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: names[0]}
		default:
			return llm.BadRequest(fc.at("allowedFunctionNames"), "brownout supports at most one allowed function name, got %d", len(names))
		}
	case "VALIDATED":
		return llm.BadRequest(fc.at("mode"), "mode VALIDATED is a Gemini feature brownout does not support")
	default:
		return llm.BadRequest(fc.at("mode"), "mode must be AUTO, ANY or NONE, not %q", mode)
	}
	return nil
}

func decodeGenerationConfig(top *object, req *llm.Request) error {
	g, ok, err := top.object("generationConfig")
	if err != nil || !ok {
		return err
	}
	if n, err := g.integer("maxOutputTokens", 1, math.MaxInt32); err != nil {
		return err
	} else if n != nil {
		req.MaxTokens = int(*n)
	}
	if req.Temperature, err = g.float("temperature"); err != nil {
		return err
	}
	if req.TopP, err = g.float("topP"); err != nil {
		return err
	}
	if n, err := g.integer("topK", 0, math.MaxInt32); err != nil {
		return err
	} else if n != nil {
		k := int(*n)
		req.TopK = &k
	}
	if req.Seed, err = g.integer("seed", math.MinInt32, math.MaxInt32); err != nil {
		return err
	}
	if req.Stop, err = g.strings("stopSequences"); err != nil {
		return err
	}
	mime, _, err := g.str("responseMimeType")
	if err != nil {
		return err
	}
	schema, hasSchema := g.take("responseSchema")
	jsonSchema, hasJSONSchema := g.take("responseJsonSchema")
	if hasSchema && hasJSONSchema {
		return llm.BadRequest(g.at("responseJsonSchema"), "set responseSchema or responseJsonSchema, not both")
	}
	switch mime {
	case "":
	case "text/plain":
		req.ResponseFormat = &llm.ResponseFormat{Type: llm.ResponseText}
	case "application/json":
		req.ResponseFormat = &llm.ResponseFormat{Type: llm.ResponseJSONObject}
	default:
		return llm.BadRequest(g.at("responseMimeType"), "responseMimeType %q is not supported: use text/plain or application/json", mime)
	}
	if hasSchema || hasJSONSchema {
		at := g.at("responseSchema")
		if hasJSONSchema {
			at = g.at("responseJsonSchema")
		}
		if mime != "application/json" {
			return llm.BadRequest(at, "a response schema needs responseMimeType application/json")
		}
		var s json.RawMessage
		if hasSchema {
			s, err = openAPIToJSONSchema(schema)
		} else {
			s, err = compactObject(jsonSchema)
		}
		if err != nil {
			return llm.BadRequest(at, "response schema: %v", err)
		}
		req.ResponseFormat = &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Schema: s}
	}
	for _, k := range genExtra {
		if v, ok := g.take(k); ok {
			setExtra(req, genPrefix+k, v)
		}
	}
	return g.done()
}

// openAPIToJSONSchema converts Gemini's Schema (an OpenAPI 3.0 subset with
// upper-case types and a nullable flag) into JSON Schema: type names lower-cased,
// nullable turned into a "null" member of type. Other keywords are kept.
func openAPIToJSONSchema(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema must be a JSON object")
	}
	convertSchema(m)
	return json.Marshal(m)
}

func convertSchema(m map[string]any) {
	if t, ok := m["type"].(string); ok {
		lt := strings.ToLower(t)
		if lt == "type_unspecified" {
			delete(m, "type")
		} else if n, _ := m["nullable"].(bool); n {
			m["type"] = []any{lt, "null"}
			delete(m, "nullable")
		} else {
			m["type"] = lt
		}
	}
	if n, ok := m["nullable"].(bool); ok && !n {
		delete(m, "nullable")
	}
	// Proto JSON writes int64 as strings ("maxItems": "3"); JSON Schema wants numbers.
	for _, k := range []string{"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"} {
		if s, ok := m[k].(string); ok {
			if _, err := strconv.ParseInt(s, 10, 64); err == nil {
				m[k] = json.Number(s)
			}
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, p := range props {
			if pm, ok := p.(map[string]any); ok {
				convertSchema(pm)
			}
		}
	}
	if items, ok := m["items"].(map[string]any); ok {
		convertSchema(items)
	}
	if anyOf, ok := m["anyOf"].([]any); ok {
		for _, s := range anyOf {
			if sm, ok := s.(map[string]any); ok {
				convertSchema(sm)
			}
		}
	}
}

// idAndName reads the optional id and the required name of a functionCall
// or functionResponse part (kind names it in errors).
func idAndName(f *object, kind string) (id, name string, err error) {
	if id, _, err = f.str("id"); err != nil {
		return "", "", err
	}
	if name, _, err = f.str("name"); err != nil {
		return "", "", err
	}
	if name == "" {
		return "", "", llm.BadRequest(f.at("name"), "%s.name is required", kind)
	}
	return id, name, nil
}
