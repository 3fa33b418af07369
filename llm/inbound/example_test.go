package inbound_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/inbound"
)

// A server answers every path it does not route in the shape of the API
// the path belongs to.
func ExampleFallback() {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {})
	mux.Handle("/", inbound.Fallback(mux))
	for _, req := range []struct{ method, path string }{
		{"POST", "/v1/embeddings"},
		{"POST", "/v1/messages/count_tokens"},
		{"GET", "/v1/messages"},
		{"POST", "/v1beta/models/gemini-2.5-flash:embedContent"},
	} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(req.method, req.path, nil))
		fmt.Println(w.Code, w.Body.String())
	}
	// Output:
	// 404 {"error":{"message":"Invalid URL (POST /v1/embeddings)","type":"invalid_request_error","param":null,"code":null}}
	// 404 {"type":"error","error":{"type":"not_found_error","message":"Not Found: POST /v1/messages/count_tokens"}}
	// 405 {"type":"error","error":{"type":"invalid_request_error","message":"Method GET not allowed for /v1/messages (allowed: POST)"}}
	// 404 {"error":{"code":404,"message":"The requested URL /v1beta/models/gemini-2.5-flash:embedContent was not found on this server (POST).","status":"NOT_FOUND"}}
}

// An answer served by another format's upstream is presented in the
// client's style: its model, its ID prefixes.
func ExamplePresent() {
	resp := &llm.Response{ID: "chatcmpl-abc", Model: "gpt-4o", ToolCalls: []llm.ToolCall{{ID: "call_x1", Name: "f"}}}
	out := inbound.Present(resp, llm.FormatAnthropic, "chat")
	fmt.Println(out.ID, out.Model, out.ToolCalls[0].ID)
	fmt.Println(resp.ID, resp.Model, resp.ToolCalls[0].ID)
	// Output:
	// msg_abc chat toolu_x1
	// chatcmpl-abc gpt-4o call_x1
}
