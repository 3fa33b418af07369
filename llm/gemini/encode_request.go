package gemini

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/brownout-dev/brownout/llm"
)

func unsupported(feature, reason string, args ...any) error {
	return &llm.UnsupportedError{Format: llm.FormatGemini, Feature: feature, Reason: fmt.Sprintf(reason, args...)}
}

// EncodeRequest writes a generateContent request body. Model and Stream are
// not written: they belong in the URL (see [Path]). Leading system messages
// become systemInstruction; consecutive tool messages become one user turn of
// functionResponse parts (a tool message without Name takes the name of the
// call it answers). Tool parameters and response schemas are written as
// JSON Schema (parametersJsonSchema, responseJsonSchema). ResponseFormat.Name
// is a label Gemini has no place for and is not written.
//
// What Gemini cannot express is an *llm.UnsupportedError: a system message
// after the conversation started, participant names, tool choice with
// parallel calls disabled, strict tools, user and metadata, tool-call
// arguments that are not a JSON object, and Extra keys other than Gemini's
// own (safetySettings, cachedContent, generationConfig.<field>).
func (Codec) EncodeRequest(req *llm.Request) ([]byte, error) {
	if req == nil {
		return nil, errors.New("gemini: nil request")
	}
	if req.User != "" {
		return nil, unsupported("user", "Gemini requests carry no end-user id")
	}
	if len(req.Metadata) > 0 {
		return nil, unsupported("metadata", "Gemini requests carry no metadata")
	}
	top := make(map[string]any, 8)
	gen := make(map[string]any, 8)

	msgs := req.Messages
	var sys []part
	i := 0
	for ; i < len(msgs) && msgs[i].Role == llm.RoleSystem; i++ {
		if err := plainMessage(msgs[i], i); err != nil {
			return nil, err
		}
		for j, p := range msgs[i].Content {
			if p.Type != llm.PartText {
				return nil, unsupported(fmt.Sprintf("messages[%d].content[%d]", i, j), "Gemini system instructions hold text only")
			}
			sys = append(sys, textPart(p.Text))
		}
	}
	if len(sys) > 0 {
		top["systemInstruction"] = content{Parts: sys}
	}
	names := make(map[string]string) // tool-call id -> function name
	var contents []content
	lastTool := false // the last content holds only function responses
	for ; i < len(msgs); i++ {
		m := msgs[i]
		at := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case llm.RoleSystem:
			return nil, unsupported(at, "Gemini has one system instruction, before the conversation; this system message comes after it started")
		case llm.RoleUser:
			if err := plainMessage(m, i); err != nil {
				return nil, err
			}
			parts, err := mediaParts(m.Content, at)
			if err != nil {
				return nil, err
			}
			if len(parts) == 0 {
				return nil, unsupported(at, "Gemini contents need at least one part; this message is empty")
			}
			contents = append(contents, content{Role: "user", Parts: parts})
			lastTool = false
		case llm.RoleAssistant:
			if m.Name != "" || m.IsError || m.ToolCallID != "" {
				return nil, unsupported(at+".name", "Gemini model turns carry no name, tool_call_id or is_error")
			}
			parts, err := mediaParts(m.Content, at)
			if err != nil {
				return nil, err
			}
			for j, tc := range m.ToolCalls {
				args, err := appendArgs(nil, tc.Arguments)
				if err != nil {
					return nil, unsupported(fmt.Sprintf("%s.tool_calls[%d].arguments", at, j), "Gemini function-call args must be a JSON object")
				}
				if tc.Name == "" {
					return nil, unsupported(fmt.Sprintf("%s.tool_calls[%d].name", at, j), "a Gemini function call needs a name")
				}
				fc := &functionCall{Name: tc.Name, Args: args}
				if !isSyntheticID(tc.ID) {
					fc.ID = tc.ID
				}
				if tc.ID != "" {
					names[tc.ID] = tc.Name
				}
				parts = append(parts, part{FunctionCall: fc})
			}
			if len(parts) == 0 {
				return nil, unsupported(at, "Gemini contents need at least one part; this assistant message is empty")
			}
			contents = append(contents, content{Role: "model", Parts: parts})
			lastTool = false
		case llm.RoleTool:
			fr, err := functionResponsePart(m, at, names)
			if err != nil {
				return nil, err
			}
			if lastTool {
				c := &contents[len(contents)-1]
				c.Parts = append(c.Parts, fr)
			} else {
				contents = append(contents, content{Role: "user", Parts: []part{fr}})
				lastTool = true
			}
		default:
			return nil, unsupported(at+".role", "unknown role %q", m.Role)
		}
	}
	if len(contents) == 0 {
		return nil, unsupported("messages", "Gemini needs at least one user or model turn")
	}
	top["contents"] = contents

	if len(req.Tools) > 0 {
		decls := make([]functionDeclaration, len(req.Tools))
		for j, t := range req.Tools {
			at := fmt.Sprintf("tools[%d]", j)
			if t.Strict {
				return nil, unsupported(at+".strict", "Gemini has no per-function strict flag")
			}
			decls[j] = functionDeclaration{Name: t.Name, Description: t.Description}
			if len(t.Parameters) > 0 && !isNull(t.Parameters) {
				p, err := compactObject(t.Parameters)
				if err != nil {
					return nil, unsupported(at+".parameters", "parameters must be a JSON Schema object")
				}
				decls[j].ParametersJSONSchema = p
			}
		}
		top["tools"] = []tool{{FunctionDeclarations: decls}}
	}
	if tc := req.ToolChoice; tc != nil {
		if tc.DisableParallel {
			return nil, unsupported("tool_choice.disable_parallel", "Gemini cannot forbid parallel function calls")
		}
		var fc functionCallingConfig
		switch tc.Mode {
		case llm.ToolChoiceAuto:
			fc.Mode = "AUTO"
		case llm.ToolChoiceNone:
			fc.Mode = "NONE"
		case llm.ToolChoiceRequired:
			fc.Mode = "ANY"
		case llm.ToolChoiceTool:
			if tc.Name == "" {
				return nil, unsupported("tool_choice.name", "a forced tool needs a name")
			}
			fc.Mode, fc.AllowedFunctionNames = "ANY", []string{tc.Name}
		default:
			return nil, unsupported("tool_choice.mode", "unknown tool choice mode %q", tc.Mode)
		}
		top["toolConfig"] = toolConfig{FunctionCallingConfig: fc}
	}

	if req.MaxTokens < 0 || req.MaxTokens > math.MaxInt32 {
		return nil, unsupported("max_tokens", "out of Gemini's range")
	}
	if req.MaxTokens > 0 {
		gen["maxOutputTokens"] = req.MaxTokens
	}
	if req.Temperature != nil {
		gen["temperature"] = *req.Temperature
	}
	if req.TopP != nil {
		gen["topP"] = *req.TopP
	}
	if req.TopK != nil {
		gen["topK"] = *req.TopK
	}
	if req.Seed != nil {
		if *req.Seed < math.MinInt32 || *req.Seed > math.MaxInt32 {
			return nil, unsupported("seed", "Gemini seeds are 32-bit")
		}
		gen["seed"] = *req.Seed
	}
	if len(req.Stop) > 0 {
		gen["stopSequences"] = req.Stop
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case llm.ResponseText:
			gen["responseMimeType"] = "text/plain"
		case llm.ResponseJSONObject:
			gen["responseMimeType"] = "application/json"
		case llm.ResponseJSONSchema:
			gen["responseMimeType"] = "application/json"
			s, err := compactObject(rf.Schema)
			if err != nil {
				return nil, unsupported("response_format.schema", "the schema must be a JSON object")
			}
			gen["responseJsonSchema"] = s
		default:
			return nil, unsupported("response_format.type", "unknown response format %q", rf.Type)
		}
	}

	keys := make([]string, 0, len(req.Extra))
	for k := range req.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := req.Extra[k]
		if !json.Valid(v) {
			return nil, unsupported("extra."+k, "not valid JSON")
		}
		if g, ok := strings.CutPrefix(k, genPrefix); ok && slices.Contains(genExtra, g) {
			gen[g] = v
		} else if slices.Contains(topExtra, k) {
			top[k] = v
		} else {
			return nil, unsupported("extra."+k, "not a Gemini request field")
		}
	}
	if len(gen) > 0 {
		top["generationConfig"] = gen
	}
	return json.Marshal(top)
}

// plainMessage refuses the message fields only tool and assistant messages use.
func plainMessage(m llm.Message, i int) error {
	at := fmt.Sprintf("messages[%d]", i)
	switch {
	case m.Name != "":
		return unsupported(at+".name", "Gemini has no participant names")
	case len(m.ToolCalls) > 0:
		return unsupported(at+".tool_calls", "only assistant messages make tool calls")
	case m.ToolCallID != "" || m.IsError:
		return unsupported(at+".tool_call_id", "only tool messages answer tool calls")
	}
	return nil
}

func textPart(s string) part { return part{Text: &s} }

// mediaParts converts text and image parts.
func mediaParts(ps []llm.Part, at string) ([]part, error) {
	out := make([]part, 0, len(ps)+1)
	for j, p := range ps {
		pat := fmt.Sprintf("%s.content[%d]", at, j)
		switch p.Type {
		case llm.PartText:
			out = append(out, textPart(p.Text))
		case llm.PartImage:
			switch {
			case p.Data != nil:
				if p.MediaType == "" {
					return nil, unsupported(pat+".media_type", "Gemini inline data needs a MIME type")
				}
				out = append(out, part{InlineData: &blob{MimeType: p.MediaType, Data: p.Data}})
			case strings.HasPrefix(p.URL, "data:"):
				b, err := parseDataURI(p.URL)
				if err != nil {
					return nil, unsupported(pat+".url", "%v", err)
				}
				out = append(out, part{InlineData: b})
			case p.URL != "":
				out = append(out, part{FileData: &fileData{MimeType: p.MediaType, FileURI: p.URL}})
			default:
				return nil, unsupported(pat, "an image part needs data or a URL")
			}
		default:
			return nil, unsupported(pat+".type", "unknown part type %q", p.Type)
		}
	}
	return out, nil
}

// parseDataURI reads "data:<mime>;base64,<data>".
func parseDataURI(u string) (*blob, error) {
	meta, data, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	mime, isB64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isB64 || mime == "" {
		return nil, fmt.Errorf("only base64 data: URIs with a MIME type are supported")
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, fmt.Errorf("data: URI is not base64: %v", err)
	}
	return &blob{MimeType: mime, Data: b}, nil
}

// functionResponsePart converts a tool message; see responseText for the
// inverse.
func functionResponsePart(m llm.Message, at string, names map[string]string) (part, error) {
	if len(m.ToolCalls) > 0 {
		return part{}, unsupported(at+".tool_calls", "only assistant messages make tool calls")
	}
	name := m.Name
	if name == "" {
		name = names[m.ToolCallID]
	}
	if name == "" {
		return part{}, unsupported(at+".name", "a Gemini function response needs the function's name, and no earlier call has id %q", m.ToolCallID)
	}
	var text strings.Builder
	for j, p := range m.Content {
		if p.Type != llm.PartText {
			return part{}, unsupported(fmt.Sprintf("%s.content[%d]", at, j), "Gemini function responses hold JSON, not media")
		}
		text.WriteString(p.Text)
	}
	s := text.String()
	var resp json.RawMessage
	if m.IsError {
		resp, _ = json.Marshal(map[string]string{"error": s})
	} else if obj, err := compactObject(json.RawMessage(s)); err == nil {
		resp = obj
	} else {
		resp, _ = json.Marshal(map[string]string{"output": s})
	}
	fr := &functionResponse{Name: name, Response: resp}
	if !isSyntheticID(m.ToolCallID) {
		fr.ID = m.ToolCallID
	}
	return part{FunctionResponse: fr}, nil
}
