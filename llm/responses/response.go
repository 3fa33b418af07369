package responses

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/llm"
)

// wireResponse is a Response object, with every field the API writes (the
// SDKs' parsers read several of them as required, even when null).
type wireResponse struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"`
	CreatedAt          int64              `json:"created_at"`
	Status             string             `json:"status"`
	Background         bool               `json:"background"`
	Error              *wireRespError     `json:"error"`
	IncompleteDetails  *incompleteDetails `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	Model              string             `json:"model"`
	Output             []outputItem       `json:"output"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Reasoning          wireReasoning      `json:"reasoning"`
	ServiceTier        string             `json:"service_tier"`
	Store              bool               `json:"store"`
	Temperature        *float64           `json:"temperature"`
	Text               wireText           `json:"text"`
	ToolChoice         string             `json:"tool_choice"`
	Tools              []wireTool         `json:"tools"`
	TopP               *float64           `json:"top_p"`
	Truncation         string             `json:"truncation"`
	Usage              *wireUsage         `json:"usage"`
	User               *string            `json:"user"`
	Metadata           map[string]string  `json:"metadata"`
}

type wireReasoning struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

type wireRespError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type incompleteDetails struct {
	Reason string `json:"reason"`
}

// outputItem is an output item: a message or a function_call. Each kind is
// written with exactly its own fields (see MarshalJSON).
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

// MarshalJSON writes a message item with its content array (empty while
// it is being written: clients iterate it) and a function_call item with
// its arguments (empty, not absent, before the first delta).
func (it outputItem) MarshalJSON() ([]byte, error) {
	switch it.Type {
	case "message":
		content := it.Content
		if content == nil {
			content = []outputPart{}
		}
		return json.Marshal(struct {
			ID      string       `json:"id"`
			Type    string       `json:"type"`
			Status  string       `json:"status"`
			Content []outputPart `json:"content"`
			Role    string       `json:"role"`
		}{it.ID, it.Type, it.Status, content, it.Role})
	case "function_call":
		args := ""
		if it.Arguments != nil {
			args = *it.Arguments
		}
		return json.Marshal(struct {
			ID        string `json:"id"`
			Type      string `json:"type"`
			Status    string `json:"status"`
			Arguments string `json:"arguments"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
		}{it.ID, it.Type, it.Status, args, it.CallID, it.Name})
	}
	type plain outputItem
	return json.Marshal(plain(it))
}

// outputPart is a message content part: output_text (always with its
// annotations and logprobs arrays, and its text even when empty) or refusal.
type outputPart struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	Refusal     string `json:"refusal,omitempty"`
	Annotations []any  `json:"annotations,omitempty"`
}

// MarshalJSON writes the fields of the part's type, and only those.
func (p outputPart) MarshalJSON() ([]byte, error) {
	if p.Type == "refusal" {
		return json.Marshal(struct {
			Type    string `json:"type"`
			Refusal string `json:"refusal"`
		}{p.Type, p.Refusal})
	}
	ann := p.Annotations
	if ann == nil {
		ann = []any{}
	}
	return json.Marshal(struct {
		Type        string `json:"type"`
		Annotations []any  `json:"annotations"`
		Logprobs    []any  `json:"logprobs"`
		Text        string `json:"text"`
	}{p.Type, ann, []any{}, p.Text})
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

// ResponseID is the id a response with id (an upstream's) is written with:
// an id that has the API's prefix is kept; any other (an upstream's
// chatcmpl-…, msg_…, a Gemini responseId) is replaced by "resp_" and 48
// hex digits derived from it, so the same upstream answer always gets the
// same id.
func ResponseID(id string) string {
	if strings.HasPrefix(id, "resp_") {
		return id
	}
	return "resp_" + hexID(id)
}

// itemID derives an output item's id (prefix "msg_" or "fc_" and 48 hex
// digits, the API's shape) from the response's id and the item's index.
func itemID(prefix, respID string, n int) string {
	return prefix + hexID(respID+"/"+prefix+strconv.Itoa(n))
}

// hexID is 48 hex digits derived from s.
func hexID(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:24])
}

// status is the response status and incomplete reason of a finish reason;
// an incomplete response's last output item is incomplete too.
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
	return wireResponse{ID: ResponseID(id), Object: "response", CreatedAt: created, Status: "in_progress",
		Model: model, Output: []outputItem{}, ParallelToolCalls: true, ServiceTier: "default", Store: true,
		Text: wireText{Format: &wireFormat{Type: "text"}}, ToolChoice: "auto", Tools: []wireTool{},
		Truncation: "disabled", Metadata: map[string]string{}}
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
		w.Output = append(w.Output, outputItem{Type: "function_call", ID: itemID("fc_", w.ID, len(w.Output)), Status: "completed",
			CallID: callID(tc.ID, w.ID, i), Name: tc.Name, Arguments: &args})
	}
	if w.Status == "incomplete" && len(w.Output) > 0 {
		w.Output[len(w.Output)-1].Status = "incomplete"
	}
	w.Usage = toWireUsage(r.Usage)
	return json.Marshal(w)
}

// callID is a tool call's call_id: the upstream's, or "call_" and 24
// characters derived from the response id when the upstream gave none.
func callID(id, respID string, n int) string {
	if id != "" {
		return id
	}
	return "call_" + hexID(respID + "/call_" + strconv.Itoa(n))[:24]
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
