package inbound

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/anthropic"
	"github.com/brownout-dev/brownout/llm/gemini"
	"github.com/brownout-dev/brownout/llm/openai"
	"github.com/brownout-dev/brownout/llm/responses"
)

// Format returns the API a request to path speaks (see the package
// documentation). h may be nil.
func Format(path string, h llm.Header) llm.Format {
	switch {
	case strings.HasPrefix(path, "/v1beta/") || strings.HasPrefix(path, "/v1alpha/") ||
		strings.HasPrefix(path, "/upload/v1beta/"):
		return llm.FormatGemini
	case strings.HasPrefix(path, "/v1/models/") && strings.Contains(path, ":"):
		return llm.FormatGemini
	case path == "/v1/messages" || strings.HasPrefix(path, "/v1/messages/") || path == "/v1/complete":
		return llm.FormatAnthropic
	case strings.HasPrefix(path, "/v1/chat/") || strings.HasPrefix(path, "/v1/responses") ||
		strings.HasPrefix(path, "/v1/completions") || strings.HasPrefix(path, "/v1/embeddings"):
		return llm.FormatOpenAI
	}
	if h != nil {
		switch {
		case h.Get("Anthropic-Version") != "":
			return llm.FormatAnthropic
		case h.Get("X-Goog-Api-Key") != "":
			return llm.FormatGemini
		}
	}
	return llm.FormatOpenAI
}

// Codec returns the codec of a wire format; OpenAI's for an unknown one.
func Codec(f llm.Format) llm.Codec {
	switch f {
	case llm.FormatAnthropic:
		return anthropic.Codec{}
	case llm.FormatGemini:
		return gemini.Codec{}
	}
	return openai.Codec{}
}

// NotFound is the error an API gives for a path it does not serve:
// OpenAI's 404 invalid_request_error "Invalid URL (POST /v1/x)" (no code),
// Anthropic's not_found_error, Gemini's NOT_FOUND.
func NotFound(f llm.Format, method, path string) *llm.Error {
	switch f {
	case llm.FormatAnthropic:
		return &llm.Error{Status: 404, Type: llm.ErrNotFound, Message: "Not Found: " + method + " " + path}
	case llm.FormatGemini:
		return &llm.Error{Status: 404, Type: llm.ErrNotFound,
			Message: "The requested URL " + path + " was not found on this server (" + method + ")."}
	}
	// An invalid request, not model_not_found: the path, not a model, is unknown.
	return &llm.Error{Status: 404, Type: llm.ErrInvalidRequest, Message: "Invalid URL (" + method + " " + path + ")"}
}

// MethodNotAllowed is the error for a path served with other methods.
func MethodNotAllowed(method, path string, allow []string) *llm.Error {
	return &llm.Error{Status: 405, Type: llm.ErrInvalidRequest,
		Message: "Method " + method + " not allowed for " + path + " (allowed: " + strings.Join(allow, ", ") + ")"}
}

// WriteError writes e in the shape of the API r speaks (Format).
func WriteError(w http.ResponseWriter, r *http.Request, e *llm.Error) {
	WriteErrorAs(w, Codec(Format(r.URL.Path, r.Header)), e)
}

// WriteErrorAs writes e as codec c shapes it. Headers are the caller's
// (Retry-After included).
func WriteErrorAs(w http.ResponseWriter, c llm.Codec, e *llm.Error) {
	status, body := c.EncodeError(e)
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Fallback answers the requests mux routes to no pattern but its own
// catch-all: register it as mux's "/" pattern. A path mux serves with
// other methods is a 405 with Allow, any other path a 404, in the shape of
// the path's API.
func Fallback(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range [...]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
			if m == r.Method {
				continue
			}
			probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
			if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header()["Allow"] = []string{strings.Join(allow, ", ")}
			WriteError(w, r, MethodNotAllowed(r.Method, r.URL.Path, allow))
			return
		}
		WriteError(w, r, NotFound(Format(r.URL.Path, r.Header), r.Method, r.URL.Path))
	})
}

// idPrefixes are the prefixes of response and tool call IDs, by format
// (Gemini's have none; the Responses API's response ids are made native by
// its encoder, which derives resp_… ids of the API's shape).
var idPrefixes = map[llm.Format][2]string{
	llm.FormatOpenAI:    {"chatcmpl-", "call_"},
	llm.FormatAnthropic: {"msg_", "toolu_"},
	responses.Format:    {"", "call_"},
}

// foreignPrefixes are the prefixes an ID loses before it takes its format's.
var foreignPrefixes = [...]string{"chatcmpl-", "msg_", "toolu_", "call_", "resp_"}

// native gives id the prefix p, dropping another format's prefix.
func native(id, p string) string {
	if p == "" || strings.HasPrefix(id, p) {
		return id
	}
	for _, fp := range foreignPrefixes {
		if rest, ok := strings.CutPrefix(id, fp); ok {
			id = rest
			break
		}
	}
	return p + id
}

// ResponseID returns id as an ID of a response in format f ("chatcmpl-…"
// for OpenAI, "msg_…" for Anthropic): an answer served by another format's
// upstream looks native to the client. The rest of the ID is kept, so the
// same upstream ID gives the same ID.
func ResponseID(f llm.Format, id string) string { return native(id, idPrefixes[f][0]) }

// ToolCallID returns id as a tool call ID of format f ("call_…",
// "toolu_…"). The client sends it back with the tool's result, and the
// upstream receives it as it was given: tool call IDs only link a result to
// its call within one conversation.
func ToolCallID(f llm.Format, id string) string {
	if id == "" {
		return id
	}
	return native(id, idPrefixes[f][1])
}

// Present makes resp look native to a client of format f that asked for
// model: the response and tool call IDs in f's style and the requested
// model name. It returns resp itself when nothing changes, else a copy
// (resp is not written: it may be cached and shared).
func Present(resp *llm.Response, f llm.Format, model string) *llm.Response {
	id := ResponseID(f, resp.ID)
	same := id == resp.ID && (model == "" || model == resp.Model)
	for i := range resp.ToolCalls {
		same = same && ToolCallID(f, resp.ToolCalls[i].ID) == resp.ToolCalls[i].ID
	}
	if same {
		return resp
	}
	out := *resp
	out.ID = id
	if model != "" {
		out.Model = model
	}
	if len(resp.ToolCalls) > 0 {
		out.ToolCalls = make([]llm.ToolCall, len(resp.ToolCalls))
		for i, tc := range resp.ToolCalls {
			tc.ID = ToolCallID(f, tc.ID)
			out.ToolCalls[i] = tc
		}
	}
	return &out
}
