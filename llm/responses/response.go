package responses

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/llm"
)

type wireResponse struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	CreatedAt         int64              `json:"created_at"`
	Status            string             `json:"status"`
	Error             *wireRespError     `json:"error"`
	IncompleteDetails *incompleteDetails `json:"incomplete_details"`
	Model             string             `json:"model"`
	Output            []outputItem       `json:"output"`
	ParallelToolCalls bool               `json:"parallel_tool_calls"`
	ToolChoice        string             `json:"tool_choice"`
	Tools             []wireTool         `json:"tools"`
	Usage             *wireUsage         `json:"usage"`
}

type wireRespError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type incompleteDetails struct {
	Reason string `json:"reason"`
}

type outputItem struct {
	Type      string       `json:"type"`
	ID        string       `json:"id"`
	Status    string       `json:"status"`
	Role      string       `json:"role,omitempty"`
	Content   []outputPart `json:"content,omitempty"`
	CallID    string       `json:"call_id,omitempty"`
	Name      string       `json:"name,omitempty"`
	Arguments *string      `json:"arguments,omitempty"`
}

type outputPart struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	Refusal     string `json:"refusal,omitempty"`
	Annotations []any  `json:"annotations,omitempty"`
}

type wireUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

func toWireUsage(u llm.Usage) *wireUsage {
	w := &wireUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	w.InputTokensDetails.CachedTokens = u.CachedInputTokens
	w.OutputTokensDetails.ReasoningTokens = u.ReasoningTokens
	return w
}

func (w *wireUsage) usage() llm.Usage {
	if w == nil {
		return llm.Usage{}
	}
	return llm.Usage{InputTokens: w.InputTokens, OutputTokens: w.OutputTokens,
		CachedInputTokens: w.InputTokensDetails.CachedTokens, ReasoningTokens: w.OutputTokensDetails.ReasoningTokens}
}

// responseID gives an id the Responses API's prefix.
func responseID(id string) string {
	if strings.HasPrefix(id, "resp_") {
		return id
	}
	return "resp_" + id
}

// itemID derives an output item's id from the response's.
func itemID(prefix, respID string, n int) string {
	id := strings.TrimPrefix(respID, "resp_")
	if n > 0 {
		return prefix + id + "_" + strconv.Itoa(n)
	}
	return prefix + id
}

// status is the response status and incomplete reason of a finish reason.
func status(f llm.FinishReason) (string, *incompleteDetails) {
	switch f {
	case llm.FinishLength:
		return "incomplete", &incompleteDetails{Reason: "max_output_tokens"}
	case llm.FinishContentFilter:
		return "incomplete", &incompleteDetails{Reason: "content_filter"}
	}
	return "completed", nil
}

func (c Codec) envelope(id, model string, created int64) wireResponse {
	if created == 0 {
		created = c.now().Unix()
	}
	return wireResponse{ID: responseID(id), Object: "response", CreatedAt: created, Status: "in_progress",
		Model: model, Output: []outputItem{}, ParallelToolCalls: true, ToolChoice: "auto", Tools: []wireTool{}}
}

// EncodeResponse writes a response object: a message item with the text
// (or the refusal), then a function_call item per tool call.
func (c Codec) EncodeResponse(r *llm.Response) ([]byte, error) {
	w := c.envelope(r.ID, r.Model, r.Created)
	w.Status, w.IncompleteDetails = status(r.FinishReason)
	if r.Content != "" || r.Refusal != "" {
		p := outputPart{Type: "output_text", Text: r.Content, Annotations: []any{}}
		if r.Content == "" {
			p = outputPart{Type: "refusal", Refusal: r.Refusal}
		}
		w.Output = append(w.Output, outputItem{Type: "message", ID: itemID("msg_", w.ID, 0), Status: "completed", Role: "assistant", Content: []outputPart{p}})
	}
	for i, tc := range r.ToolCalls {
		args := tc.Arguments
		w.Output = append(w.Output, outputItem{Type: "function_call", ID: itemID("fc_", w.ID, i), Status: "completed",
			CallID: tc.ID, Name: tc.Name, Arguments: &args})
	}
	w.Usage = toWireUsage(r.Usage)
	return json.Marshal(w)
}

// DecodeResponse reads a response object.
func (Codec) DecodeResponse(body []byte) (*llm.Response, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, err
	}
	return w.response(), nil
}

func (w *wireResponse) response() *llm.Response {
	r := &llm.Response{ID: w.ID, Model: w.Model, Created: w.CreatedAt, Usage: w.Usage.usage(), FinishReason: llm.FinishStop}
	for _, it := range w.Output {
		switch it.Type {
		case "message":
			for _, p := range it.Content {
				r.Content += p.Text
				r.Refusal += p.Refusal
			}
		case "function_call":
			tc := llm.ToolCall{ID: it.CallID, Name: it.Name}
			if it.Arguments != nil {
				tc.Arguments = *it.Arguments
			}
			r.ToolCalls = append(r.ToolCalls, tc)
		}
	}
	switch {
	case w.Status == "failed":
		r.FinishReason = llm.FinishError
	case w.IncompleteDetails != nil && w.IncompleteDetails.Reason == "content_filter":
		r.FinishReason = llm.FinishContentFilter
	case w.IncompleteDetails != nil:
		r.FinishReason = llm.FinishLength
	case len(r.ToolCalls) > 0:
		r.FinishReason = llm.FinishToolCalls
	}
	return r
}

func (c Codec) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
