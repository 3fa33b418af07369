package openai

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/brownout-dev/brownout/llm"
)

// Wire shapes of a chat.completion object.
type (
	wireResponse struct {
		ID      string       `json:"id"`
		Object  string       `json:"object"`
		Created int64        `json:"created"`
		Model   string       `json:"model"`
		Choices []wireChoice `json:"choices"`
		Usage   *wireUsage   `json:"usage,omitempty"`
	}
	wireChoice struct {
		Index        int                 `json:"index"`
		Message      wireResponseMessage `json:"message"`
		Logprobs     json.RawMessage     `json:"logprobs"`
		FinishReason *string             `json:"finish_reason"`
	}
	wireResponseMessage struct {
		Role        string          `json:"role"`
		Content     *string         `json:"content"`
		Refusal     *string         `json:"refusal"`
		ToolCalls   []wireToolCall  `json:"tool_calls,omitempty"`
		Annotations json.RawMessage `json:"annotations,omitempty"`
	}
	wireUsage struct {
		PromptTokens            int                      `json:"prompt_tokens"`
		CompletionTokens        int                      `json:"completion_tokens"`
		TotalTokens             int                      `json:"total_tokens"`
		PromptTokensDetails     *wirePromptTokensDetails `json:"prompt_tokens_details,omitempty"`
		CompletionTokensDetails *wireCompletionDetails   `json:"completion_tokens_details,omitempty"`
	}
	wirePromptTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	}
	wireCompletionDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	}
)

var jsonNull = json.RawMessage("null")

func toWireUsage(u llm.Usage) *wireUsage {
	return &wireUsage{
		PromptTokens:            u.InputTokens,
		CompletionTokens:        u.OutputTokens,
		TotalTokens:             u.InputTokens + u.OutputTokens,
		PromptTokensDetails:     &wirePromptTokensDetails{CachedTokens: u.CachedInputTokens, CacheWriteTokens: u.CacheCreationTokens},
		CompletionTokensDetails: &wireCompletionDetails{ReasoningTokens: u.ReasoningTokens},
	}
}

// appendUsage appends u as the JSON of toWireUsage(u), as marshal writes
// it, without the allocations of encoding/json.
func appendUsage(b []byte, u llm.Usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, int64(u.InputTokens))
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, int64(u.OutputTokens))
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, int64(u.InputTokens+u.OutputTokens))
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = appendInt(b, int64(u.CachedInputTokens))
	if u.CacheCreationTokens != 0 {
		b = append(b, `,"cache_write_tokens":`...)
		b = appendInt(b, int64(u.CacheCreationTokens))
	}
	b = append(b, `},"completion_tokens_details":{"reasoning_tokens":`...)
	b = appendInt(b, int64(u.ReasoningTokens))
	return append(b, "}}"...)
}

func fromWireUsage(w *wireUsage) llm.Usage {
	u := llm.Usage{InputTokens: w.PromptTokens, OutputTokens: w.CompletionTokens}
	if d := w.PromptTokensDetails; d != nil {
		u.CachedInputTokens = d.CachedTokens
		u.CacheCreationTokens = d.CacheWriteTokens
	}
	if d := w.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = d.ReasoningTokens
	}
	return u
}

// finishReason maps a normalized finish reason to the wire; "error" has no
// Chat Completions equivalent.
func finishReason(f llm.FinishReason) (string, error) {
	switch f {
	case llm.FinishStop, llm.FinishLength, llm.FinishToolCalls, llm.FinishContentFilter:
		return string(f), nil
	case "":
		return "stop", nil
	default:
		return "", unsupported("finish_reason", fmt.Sprintf("finish reason %q (send an error instead)", f))
	}
}

// fromFinishReason maps a wire finish reason; the deprecated function_call
// becomes tool_calls and unknown values pass through.
func fromFinishReason(s string) llm.FinishReason {
	if s == "function_call" {
		return llm.FinishToolCalls
	}
	return llm.FinishReason(s)
}

// EncodeResponse writes a chat.completion object. An empty Created is stamped
// with the codec's clock.
func (c Codec) EncodeResponse(resp *llm.Response) ([]byte, error) {
	fr, err := finishReason(resp.FinishReason)
	if err != nil {
		return nil, err
	}
	msg := wireResponseMessage{Role: "assistant", Annotations: json.RawMessage("[]")}
	if resp.Content != "" || (len(resp.ToolCalls) == 0 && resp.Refusal == "") {
		msg.Content = &resp.Content
	}
	if resp.Refusal != "" {
		msg.Refusal = &resp.Refusal
	}
	for _, tc := range resp.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments}})
	}
	created := resp.Created
	if created == 0 {
		created = c.now().Unix()
	}
	w := wireResponse{
		ID: resp.ID, Object: "chat.completion", Created: created, Model: resp.Model,
		Choices: []wireChoice{{Index: 0, Message: msg, Logprobs: jsonNull, FinishReason: &fr}},
		Usage:   toWireUsage(resp.Usage),
	}
	return marshal(w)
}

// ErrNoChoices is returned by DecodeResponse for a chat.completion without
// choices.
var ErrNoChoices = errors.New("openai: response has no choices")

// DecodeResponse parses a chat.completion object (the first choice). A body
// that is an error object decodes to that *llm.Error.
func (c Codec) DecodeResponse(body []byte) (*llm.Response, error) {
	if resp, ok := parseResponse(body); ok {
		return resp, nil
	}
	return c.decodeResponseJSON(body)
}

// decodeResponseJSON is DecodeResponse with encoding/json: the reference the
// fast path (parseResponse) agrees with, and the path for everything else.
func (c Codec) decodeResponseJSON(body []byte) (*llm.Response, error) {
	var w struct {
		wireResponse
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("openai: decode response: %w", err)
	}
	if !isNull(w.Error) && len(w.Choices) == 0 {
		return nil, c.DecodeError(200, nil, body)
	}
	if len(w.Choices) == 0 {
		return nil, ErrNoChoices
	}
	ch := w.Choices[0]
	resp := &llm.Response{ID: w.ID, Model: w.Model, Created: w.Created}
	if ch.Message.Content != nil {
		resp.Content = *ch.Message.Content
	}
	if ch.Message.Refusal != nil {
		resp.Refusal = *ch.Message.Refusal
	}
	for _, tc := range ch.Message.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if ch.FinishReason != nil {
		resp.FinishReason = fromFinishReason(*ch.FinishReason)
	}
	if w.Usage != nil {
		resp.Usage = fromWireUsage(w.Usage)
	}
	return resp, nil
}
