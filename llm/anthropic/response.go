package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/brownout-dev/brownout/llm"
)

// wireUsage is the usage object. Pointers tell a field that is absent (or
// null) from a zero: message_delta carries only the counts it updates.
type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
}

// merge overwrites u's counts with those present in v (every count is a
// whole-message total).
func (u *wireUsage) merge(v *wireUsage) {
	if v == nil {
		return
	}
	if v.InputTokens != nil {
		u.InputTokens = v.InputTokens
	}
	if v.CacheCreationInputTokens != nil {
		u.CacheCreationInputTokens = v.CacheCreationInputTokens
	}
	if v.CacheReadInputTokens != nil {
		u.CacheReadInputTokens = v.CacheReadInputTokens
	}
	if v.OutputTokens != nil {
		u.OutputTokens = v.OutputTokens
	}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// normalize converts to llm.Usage, whose InputTokens counts cached and
// cache-creation tokens too; Anthropic's input_tokens counts neither.
func (u *wireUsage) normalize() llm.Usage {
	in, cw, cr := deref(u.InputTokens), deref(u.CacheCreationInputTokens), deref(u.CacheReadInputTokens)
	return llm.Usage{
		InputTokens:         in + cw + cr,
		OutputTokens:        deref(u.OutputTokens),
		CachedInputTokens:   cr,
		CacheCreationTokens: cw,
	}
}

// outUsage is the usage object as the API writes it: every count present.
type outUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// wireUsageOf converts llm.Usage back, taking the cache counts out of
// input_tokens.
func wireUsageOf(u llm.Usage) outUsage {
	return outUsage{
		InputTokens:              max(0, u.InputTokens-u.CachedInputTokens-u.CacheCreationTokens),
		CacheCreationInputTokens: u.CacheCreationTokens,
		CacheReadInputTokens:     u.CachedInputTokens,
		OutputTokens:             u.OutputTokens,
	}
}

// FinishReason maps an Anthropic stop_reason to the normalized finish reason:
// end_turn, stop_sequence and pause_turn are stop; max_tokens and
// model_context_window_exceeded are length; tool_use is tool_calls; refusal is
// content_filter. An unknown reason is "".
func FinishReason(stopReason string) llm.FinishReason {
	switch stopReason {
	case "end_turn", "stop_sequence", "pause_turn":
		return llm.FinishStop
	case "max_tokens", "model_context_window_exceeded":
		return llm.FinishLength
	case "tool_use":
		return llm.FinishToolCalls
	case "refusal":
		return llm.FinishContentFilter
	}
	return ""
}

// StopReason maps a normalized finish reason to an Anthropic stop_reason. It
// returns "" for FinishError and unknown reasons, which Anthropic cannot say.
func StopReason(r llm.FinishReason) string {
	switch r {
	case llm.FinishStop:
		return "end_turn"
	case llm.FinishLength:
		return "max_tokens"
	case llm.FinishToolCalls:
		return "tool_use"
	case llm.FinishContentFilter:
		return "refusal"
	}
	return ""
}

type wireResponse struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Role       string          `json:"role"`
	Model      string          `json:"model"`
	Content    []wireBlock     `json:"content"`
	StopReason *string         `json:"stop_reason"`
	Usage      *wireUsage      `json:"usage"`
	Error      json.RawMessage `json:"error"`
}

// DecodeResponse parses a Messages API response (a message object). Text
// blocks are concatenated into Content, tool_use blocks become ToolCalls with
// their input as Arguments; thinking and redacted_thinking blocks are skipped
// (the normalized model has no place for them). An error object
// ({"type":"error",...}) is returned as its *llm.Error.
func (c Codec) DecodeResponse(body []byte) (*llm.Response, error) {
	var wr wireResponse
	if err := json.Unmarshal(body, &wr); err != nil {
		return nil, fmt.Errorf("anthropic: decode response: %w", err)
	}
	if wr.Type == "error" {
		e := c.DecodeError(0, nil, body)
		e.Status = llm.StatusFor(e.Type)
		return nil, e
	}
	if wr.Type != "message" {
		return nil, fmt.Errorf("anthropic: decode response: type is %q, want \"message\"", wr.Type)
	}
	resp := &llm.Response{ID: wr.ID, Model: wr.Model}
	var text strings.Builder
	for i, b := range wr.Content {
		switch b.Type {
		case "text":
			if b.Text != nil {
				text.WriteString(*b.Text)
			}
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return nil, fmt.Errorf("anthropic: decode response: content.%d: tool_use without id or name", i)
			}
			args := compact(b.Input)
			if args == "" || args == "null" {
				args = "{}"
			}
			resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		case "thinking", "redacted_thinking":
		default:
			return nil, fmt.Errorf("anthropic: decode response: content.%d.type: unsupported content block type %q", i, b.Type)
		}
	}
	resp.Content = text.String()
	if wr.StopReason != nil {
		resp.FinishReason = FinishReason(*wr.StopReason)
		if resp.FinishReason == "" {
			return nil, fmt.Errorf("anthropic: decode response: stop_reason: unknown value %q", *wr.StopReason)
		}
	}
	if wr.Usage != nil {
		resp.Usage = wr.Usage.normalize()
	}
	return resp, nil
}

type outResponse struct {
	ID           string   `json:"id"`
	Type         string   `json:"type"`
	Role         string   `json:"role"`
	Model        string   `json:"model"`
	Content      []any    `json:"content"`
	StopReason   *string  `json:"stop_reason"`
	StopSequence *string  `json:"stop_sequence"`
	Usage        outUsage `json:"usage"`
}

// EncodeResponse writes a message object. Content is one text block (none
// when empty), then a tool_use block per call; a Refusal is one more text
// block. Created is not written (the API has no such field). It returns an
// *llm.UnsupportedError for FinishError, which has no stop_reason, and for
// tool call arguments that are not a JSON object.
func (Codec) EncodeResponse(resp *llm.Response) ([]byte, error) {
	out := outResponse{ID: resp.ID, Type: "message", Role: "assistant", Model: resp.Model, Content: []any{}, Usage: wireUsageOf(resp.Usage)}
	if resp.Content != "" {
		out.Content = append(out.Content, outText{Type: "text", Text: resp.Content})
	}
	if resp.Refusal != "" {
		out.Content = append(out.Content, outText{Type: "text", Text: resp.Refusal})
	}
	for i, tc := range resp.ToolCalls {
		in, err := toolInput(tc.Arguments)
		if err != nil {
			return nil, unsupported(idx("tool_calls", i)+".arguments", err.Error())
		}
		out.Content = append(out.Content, outToolUse{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: in})
	}
	if resp.FinishReason != "" {
		sr := StopReason(resp.FinishReason)
		if sr == "" {
			return nil, unsupported("finish_reason."+string(resp.FinishReason), "Anthropic has no such stop_reason")
		}
		out.StopReason = &sr
	}
	return marshal(out)
}
