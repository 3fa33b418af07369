package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/evals/client"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/anthropic"
)

func ExampleClient_Send() {
	os.Setenv("ANTHROPIC_API_KEY", "sk-ant-example") // keys come from the environment
	// A stand-in for https://api.anthropic.com, speaking the Messages API.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := anthropic.Codec{}.DecodeRequest(body)
		b, _ := anthropic.Codec{}.EncodeResponse(&llm.Response{ID: "msg_1", Model: req.Model,
			Content: "Paris.", FinishReason: llm.FinishStop})
		fmt.Println(r.URL.Path, req.Model, r.Header.Get("x-api-key"))
		w.Write(b)
	}))
	defer srv.Close()

	c, _ := client.New(client.Endpoint{URL: srv.URL, Format: llm.FormatAnthropic, APIKey: os.Getenv("ANTHROPIC_API_KEY")}, srv.Client())
	req := &llm.Request{MaxTokens: 50, Messages: []llm.Message{{Role: llm.RoleUser,
		Content: []llm.Part{llm.TextPart("Capital of France?")}}}}
	resp, err := c.Send(context.Background(), evals.Target{Provider: "anthropic", Model: "claude-sonnet-4-5"}, "chat", req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Content, resp.FinishReason)
	// Output:
	// /v1/messages claude-sonnet-4-5 sk-ant-example
	// Paris. stop
}
