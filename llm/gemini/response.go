package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/llm"

	"github.com/brownout-dev/brownout/internal/jsonstr"
)

// finishFrom maps a Gemini finishReason. STOP with function calls is
// tool_calls; every safety-type reason is content_filter; reasons that say
// generation failed (MALFORMED_FUNCTION_CALL, OTHER, ...) are error. "" and
// FINISH_REASON_UNSPECIFIED mean no finish yet.
func finishFrom(r string, calls bool) llm.FinishReason {
	switch r {
	case "", "FINISH_REASON_UNSPECIFIED":
		return ""
	case "STOP":
		if calls {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	case "MAX_TOKENS":
		return llm.FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return llm.FinishContentFilter
	default: // OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS, ...
		return llm.FinishError
	}
}

// finishTo maps a normalized finish reason to Gemini's.
func finishTo(r llm.FinishReason) string {
	switch r {
	case "":
		return ""
	case llm.FinishStop, llm.FinishToolCalls:
		return "STOP"
	case llm.FinishLength:
		return "MAX_TOKENS"
	case llm.FinishContentFilter:
		return "SAFETY"
	default:
		return "OTHER"
	}
}

// usageFrom converts usageMetadata. InputTokens is promptTokenCount (which
// includes cached tokens) plus toolUsePromptTokenCount; OutputTokens is
// candidatesTokenCount plus thoughtsTokenCount, so that, as in the normalized
// model, output includes reasoning.
func usageFrom(u *usageMetadata) llm.Usage {
	return llm.Usage{
		InputTokens:       u.PromptTokenCount + u.ToolUsePromptTokenCount,
		OutputTokens:      u.CandidatesTokenCount + u.ThoughtsTokenCount,
		CachedInputTokens: u.CachedContentTokenCount,
		ReasoningTokens:   u.ThoughtsTokenCount,
	}
}

// DecodeResponse reads a generateContent response. Only the first candidate
// is read. Text is the concatenation of its text parts, thought parts (the
// model's reasoning summaries) excluded; function calls without an id get
// "call_N" (N counting the response's calls from 0). A response with no
// candidate whose prompt was blocked (promptFeedback.blockReason) finishes
// with content_filter. An {"error": ...} body is returned as an *llm.Error.
func (Codec) DecodeResponse(body []byte) (*llm.Response, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("gemini: decode response: %w", err)
	}
	if r.Error != nil {
		return nil, fromErrorObject(r.Error.Code, r.Error)
	}
	out := &llm.Response{ID: r.ResponseID, Model: r.ModelVersion}
	if r.CreateTime != "" {
		t, err := time.Parse(time.RFC3339Nano, r.CreateTime)
		if err != nil {
			return nil, fmt.Errorf("gemini: decode response: createTime: %w", err)
		}
		out.Created = t.Unix()
	}
	if r.UsageMetadata != nil {
		out.Usage = usageFrom(r.UsageMetadata)
	}
	if len(r.Candidates) == 0 {
		if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
			out.FinishReason = llm.FinishContentFilter
			return out, nil
		}
		return nil, errors.New("gemini: decode response: no candidates")
	}
	c := &r.Candidates[0]
	var text []byte
	if c.Content != nil {
		for j, p := range c.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				id := p.FunctionCall.ID
				if id == "" {
					id = syntheticID(len(out.ToolCalls))
				}
				args, err := argsText(p.FunctionCall.Args)
				if err != nil {
					return nil, fmt.Errorf("gemini: decode response: candidates[0].content.parts[%d].functionCall.args: %w", j, err)
				}
				out.ToolCalls = append(out.ToolCalls, llm.ToolCall{ID: id, Name: p.FunctionCall.Name, Arguments: args})
			case p.Text != nil:
				if !p.Thought {
					text = append(text, *p.Text...)
				}
			default:
				return nil, fmt.Errorf("gemini: decode response: candidates[0].content.parts[%d]: only text and functionCall parts are supported", j)
			}
		}
	}
	out.Content = string(text)
	out.FinishReason = finishFrom(c.FinishReason, len(out.ToolCalls) > 0)
	return out, nil
}

// argsText is the arguments text of a function call: the args object
// compacted, "{}" when absent.
func argsText(args json.RawMessage) (string, error) {
	if len(args) == 0 || isNull(args) {
		return "{}", nil
	}
	c, err := compactObject(args)
	if err != nil {
		return "", err
	}
	return string(c), nil
}

// EncodeResponse writes a generateContent response with one candidate.
// Tool-call arguments must be a JSON object (Gemini's args is a Struct);
// tool-call ids of the form "call_N" are not written (decoding regenerates
// them). Created is written as createTime. A refusal cannot be expressed (Gemini has no
// refusal field) and is an *llm.UnsupportedError. The cache-creation count
// stays inside promptTokenCount, which Gemini does not break down.
func (Codec) EncodeResponse(resp *llm.Response) ([]byte, error) {
	if resp == nil {
		return nil, errors.New("gemini: nil response")
	}
	if resp.Refusal != "" {
		return nil, &llm.UnsupportedError{Format: llm.FormatGemini, Feature: "refusal", Reason: "Gemini has no refusal field; a refusal is content"}
	}
	c := chunk{id: responseID(resp.ID), model: resp.Model, created: resp.Created, candidate: true,
		finish: finishTo(resp.FinishReason), usage: &resp.Usage}
	if resp.Content != "" || len(resp.ToolCalls) == 0 {
		c.text, c.hasText = resp.Content, resp.Content != ""
	}
	c.calls = resp.ToolCalls
	b, err := c.append(nil)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// responseID is the responseId written for id: Gemini's own is kept; an id
// with another API's prefix (chatcmpl-, msg_, resp_ — an answer served by
// an upstream of another format) becomes 22 URL-safe base64 characters
// derived from it, the shape of Gemini's, so the same answer keeps the same
// id.
func responseID(id string) string {
	for _, p := range [...]string{"chatcmpl-", "msg_", "resp_"} {
		if strings.HasPrefix(id, p) {
			sum := sha256.Sum256([]byte(id))
			return base64.RawURLEncoding.EncodeToString(sum[:])[:22]
		}
	}
	return id
}

// chunk is one GenerateContentResponse to write: a whole response or a
// stream chunk.
type chunk struct {
	id, model string
	created   int64
	candidate bool // write a candidate even if it has no parts
	hasText   bool
	text      string
	calls     []llm.ToolCall
	finish    string
	usage     *llm.Usage
}

// append writes c as JSON, by hand: it is the hot path of every stream.
func (c *chunk) append(b []byte) ([]byte, error) {
	b = append(b, '{')
	if c.candidate || c.hasText || len(c.calls) > 0 || c.finish != "" {
		b = append(b, `"candidates":[{"content":{`...)
		if c.hasText || len(c.calls) > 0 {
			b = append(b, `"parts":[`...)
			if c.hasText {
				b = append(b, `{"text":`...)
				b = appendString(b, c.text)
				b = append(b, '}')
			}
			for i, tc := range c.calls {
				if i > 0 || c.hasText {
					b = append(b, ',')
				}
				b = append(b, `{"functionCall":{`...)
				if tc.ID != "" && !isSyntheticID(tc.ID) {
					b = append(b, `"id":`...)
					b = appendString(b, tc.ID)
					b = append(b, ',')
				}
				b = append(b, `"name":`...)
				b = appendString(b, tc.Name)
				b = append(b, `,"args":`...)
				var err error
				if b, err = appendArgs(b, tc.Arguments); err != nil {
					return nil, &llm.UnsupportedError{Format: llm.FormatGemini, Feature: "tool_calls[" + strconv.Itoa(i) + "].arguments",
						Reason: "Gemini function-call args must be a JSON object"}
				}
				b = append(b, "}}"...)
			}
			b = append(b, "],"...)
		}
		b = append(b, `"role":"model"}`...)
		if c.finish != "" {
			b = append(b, `,"finishReason":`...)
			b = appendString(b, c.finish)
		}
		b = append(b, `,"index":0}],`...)
	}
	if u := c.usage; u != nil {
		b = append(b, `"usageMetadata":{`...)
		n := len(b)
		b = appendCount(b, n, "promptTokenCount", u.InputTokens)
		b = appendCount(b, n, "candidatesTokenCount", u.OutputTokens-u.ReasoningTokens)
		b = appendCount(b, n, "totalTokenCount", u.InputTokens+u.OutputTokens)
		b = appendCount(b, n, "cachedContentTokenCount", u.CachedInputTokens)
		b = appendCount(b, n, "thoughtsTokenCount", u.ReasoningTokens)
		b = append(b, "},"...)
	}
	if c.model != "" {
		b = append(b, `"modelVersion":`...)
		b = appendString(b, c.model)
		b = append(b, ',')
	}
	if c.created != 0 {
		b = append(b, `"createTime":"`...)
		b = time.Unix(c.created, 0).UTC().AppendFormat(b, time.RFC3339)
		b = append(b, `",`...)
	}
	if c.id != "" {
		b = append(b, `"responseId":`...)
		b = appendString(b, c.id)
		b = append(b, ',')
	}
	if b[len(b)-1] == ',' {
		b = b[:len(b)-1]
	}
	return append(b, '}'), nil
}

// appendCount writes "name":v, omitting zero as proto JSON does; start is
// where the object's first member goes.
func appendCount(b []byte, start int, name string, v int) []byte {
	if v == 0 {
		return b
	}
	if len(b) > start {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":`...)
	return strconv.AppendInt(b, int64(v), 10)
}

// appendArgs writes tool-call arguments, compacted; "" is {}.
func appendArgs(b []byte, args string) ([]byte, error) {
	i := 0
	for i < len(args) && (args[i] == ' ' || args[i] == '\t' || args[i] == '\n' || args[i] == '\r') {
		i++
	}
	if i == len(args) {
		return append(b, "{}"...), nil
	}
	if args[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, []byte(args)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// appendString writes s as a JSON string, escaping as encoding/json does by
// default (HTML characters included, as Google's API does).
func appendString(b []byte, s string) []byte { return jsonstr.Append(b, s, true) }
