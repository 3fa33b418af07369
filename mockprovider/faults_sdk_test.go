package mockprovider_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	anth "github.com/anthropics/anthropic-sdk-go/v2"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
)

// These tests show every fault kind from the official SDKs' point of view,
// with SDK retries disabled. Only the timing faults touch real time, with
// small delays and lower bounds only.

type streamResult struct {
	content string
	chunks  int
	finish  string
	usage   oai.CompletionUsage
	err     error
	gaps    []time.Duration // arrival of each content chunk after the request
}

func openAIStream(t *testing.T, c oai.Client, params oai.ChatCompletionNewParams) streamResult {
	t.Helper()
	params.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	start := time.Now()
	st := c.Chat.Completions.NewStreaming(context.Background(), params)
	var r streamResult
	for st.Next() {
		ch := st.Current()
		if ch.Usage.TotalTokens > 0 {
			r.usage = ch.Usage
		}
		for _, choice := range ch.Choices {
			if choice.Delta.Content != "" {
				r.content += choice.Delta.Content
				r.chunks++
				r.gaps = append(r.gaps, time.Since(start))
			}
			if choice.FinishReason != "" {
				r.finish = choice.FinishReason
			}
		}
	}
	r.err = st.Err()
	return r
}

func apiError(t *testing.T, err error) *oai.Error {
	t.Helper()
	var e *oai.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *openai.Error", err, err)
	}
	return e
}

func TestFaultHTTPError(t *testing.T) {
	ctx := context.Background()
	t.Run("openai 429 with Retry-After", func(t *testing.T) {
		_, c := startOpenAI(t, faults.Spec{Kind: faults.KindHTTPError, Status: 429, RetryAfter: yamlfile.Duration(2 * time.Second)})
		_, err := c.Chat.Completions.New(ctx, chatParams("hi"))
		e := apiError(t, err)
		if id := e.Response.Header.Get("X-Request-Id"); !strings.HasPrefix(id, "req_") || len(id) != 36 {
			t.Errorf("x-request-id %q", id)
		}
		if e.StatusCode != 429 || e.Code != "rate_limit_exceeded" || e.Response.Header.Get("Retry-After") != "2" {
			t.Fatalf("got %d %q retry-after %q", e.StatusCode, e.Code, e.Response.Header.Get("Retry-After"))
		}
	})
	t.Run("anthropic 529 overloaded_error", func(t *testing.T) {
		_, c := startAnthropic(t, faults.Spec{Kind: faults.KindHTTPError, Status: 529})
		_, err := c.Messages.New(ctx, messageParams("hi"))
		var e *anth.Error
		if !errors.As(err, &e) || e.StatusCode != 529 || e.Type() != "overloaded_error" {
			t.Fatalf("got %v", err)
		}
		if id := e.Response.Header.Get("Request-Id"); !strings.HasPrefix(id, "req_011C") {
			t.Errorf("request-id %q", id)
		}
	})
	t.Run("gemini 429 RESOURCE_EXHAUSTED", func(t *testing.T) {
		_, c := startGemini(t, faults.Spec{Kind: faults.KindHTTPError, Status: 429, RetryAfter: yamlfile.Duration(3 * time.Second)})
		_, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hi"), nil)
		var e genai.APIError
		if !errors.As(err, &e) || e.Code != 429 || e.Status != "RESOURCE_EXHAUSTED" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("openai 500 in a stream request", func(t *testing.T) {
		_, c := startOpenAI(t, faults.Spec{Kind: faults.KindHTTPError, Status: 500})
		r := openAIStream(t, c, chatParams("hi"))
		if e := apiError(t, r.err); e.StatusCode != 500 || e.Type != "server_error" {
			t.Fatalf("got %d %q", e.StatusCode, e.Type)
		}
	})
}

func TestFaultReset(t *testing.T) {
	p, c := startOpenAI(t, faults.Spec{Kind: faults.KindReset})
	_, err := c.Chat.Completions.New(context.Background(), chatParams("hi"))
	var e *oai.Error
	if err == nil || errors.As(err, &e) {
		t.Fatalf("want a transport error, got %v", err)
	}
	if j := p.Model().Journal(); len(j) != 1 || j[0].Outcome != "reset" {
		t.Fatalf("journal %+v", j)
	}
}

func TestFaultNoResponse(t *testing.T) {
	p, c := startOpenAI(t, faults.Spec{Kind: faults.KindNoResponse, For: yamlfile.Duration(150 * time.Millisecond)})
	start := time.Now()
	_, err := c.Chat.Completions.New(context.Background(), chatParams("hi"))
	if err == nil || time.Since(start) < 150*time.Millisecond {
		t.Fatalf("want an error after the hold, got %v after %v", err, time.Since(start))
	}
	if j := p.Model().Journal(); j[0].Outcome != "no_response" {
		t.Fatalf("journal %+v", j)
	}
}

func TestFaultSlowHeaders(t *testing.T) {
	_, c := startOpenAI(t, faults.Spec{Kind: faults.KindSlowHeaders, Delay: &faults.Latency{Fixed: yamlfile.Duration(150 * time.Millisecond)}})
	start := time.Now()
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("hi")); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("answered after %v", d)
	}
}

func TestFaultTTFT(t *testing.T) {
	d := faults.Fixed(150 * time.Millisecond)
	_, c := startOpenAI(t, faults.Spec{Kind: faults.KindTTFT, Delay: &d})
	r := openAIStream(t, c, chatParams("hi"))
	if r.err != nil || r.gaps[0] < 150*time.Millisecond {
		t.Fatalf("err %v, first token after %v", r.err, r.gaps)
	}
}

func TestFaultTokenRate(t *testing.T) {
	_, c := startOpenAI(t, faults.Spec{Kind: faults.KindTokenRate, Rate: 200})
	r := openAIStream(t, c, chatParams("hi"))
	// 40 tokens at 200/s: the last is due 195ms after the first.
	if r.err != nil || r.chunks != 40 || r.gaps[39]-r.gaps[0] < 150*time.Millisecond {
		t.Fatalf("err %v, %d chunks, span %v", r.err, r.chunks, r.gaps[len(r.gaps)-1]-r.gaps[0])
	}
}

func TestFaultStall(t *testing.T) {
	t.Run("resume", func(t *testing.T) {
		_, c := startOpenAI(t, faults.Spec{Kind: faults.KindStall, After: intp(5), For: yamlfile.Duration(150 * time.Millisecond)})
		r := openAIStream(t, c, chatParams("hi"))
		if r.err != nil || r.chunks != 40 || r.finish != "stop" {
			t.Fatalf("err %v, %d chunks, finish %q", r.err, r.chunks, r.finish)
		}
		if gap := r.gaps[5] - r.gaps[4]; gap < 140*time.Millisecond {
			t.Fatalf("gap after token 5 is %v", gap)
		}
	})
	t.Run("close", func(t *testing.T) {
		p, c := startOpenAI(t, faults.Spec{Kind: faults.KindStall, After: intp(5), For: yamlfile.Duration(50 * time.Millisecond), Close: true})
		r := openAIStream(t, c, chatParams("hi"))
		if r.err == nil || r.chunks != 5 || r.finish != "" {
			t.Fatalf("err %v, %d chunks, finish %q", r.err, r.chunks, r.finish)
		}
		if j := p.Model().Journal(); j[0].Outcome != "cut" || j[0].TokensSent != 5 {
			t.Fatalf("journal %+v", j[0])
		}
	})
}

func TestFaultCut(t *testing.T) {
	t.Run("openai stream is an SDK error", func(t *testing.T) {
		p, c := startOpenAI(t, faults.Spec{Kind: faults.KindCut, After: intp(10)})
		r := openAIStream(t, c, chatParams("hi"))
		if r.err == nil || r.chunks != 10 || r.finish != "" {
			t.Fatalf("err %v, %d chunks, finish %q", r.err, r.chunks, r.finish)
		}
		if j := p.Model().Journal(); j[0].Outcome != "cut" || j[0].TokensSent != 10 || j[0].Fault != "cut" {
			t.Fatalf("journal %+v", j[0])
		}
	})
	t.Run("anthropic stream is an SDK error", func(t *testing.T) {
		_, c := startAnthropic(t, faults.Spec{Kind: faults.KindCut, After: intp(10)})
		st := c.Messages.NewStreaming(context.Background(), messageParams("hi"))
		var acc anth.Message
		for st.Next() {
			_ = acc.Accumulate(st.Current())
		}
		if st.Err() == nil || acc.StopReason != "" {
			t.Fatalf("err %v, stop %q", st.Err(), acc.StopReason)
		}
	})
	t.Run("non-streamed body", func(t *testing.T) {
		_, c := startOpenAI(t, faults.Spec{Kind: faults.KindCut, After: intp(10)})
		if _, err := c.Chat.Completions.New(context.Background(), chatParams("hi")); err == nil {
			t.Fatal("a cut body decoded cleanly")
		}
	})
}

func TestFaultTruncate(t *testing.T) {
	t.Run("stream ends with length at exactly N", func(t *testing.T) {
		p, c := startOpenAI(t, faults.Spec{Kind: faults.KindTruncate, At: intp(16)})
		r := openAIStream(t, c, chatParams("hi"))
		if r.err != nil || r.finish != "length" || r.chunks != 16 || r.usage.CompletionTokens != 16 {
			t.Fatalf("err %v, finish %q, %d chunks, usage %d", r.err, r.finish, r.chunks, r.usage.CompletionTokens)
		}
		if j := p.Model().Journal(); !j[0].Corrupted || j[0].TokensSent != 16 {
			t.Fatalf("journal %+v", j[0])
		}
	})
	t.Run("default is a power of two", func(t *testing.T) {
		_, c := startOpenAI(t, faults.Spec{Kind: faults.KindTruncate})
		resp, err := c.Chat.Completions.New(context.Background(), chatParams("hi"))
		if err != nil || resp.Choices[0].FinishReason != "length" || resp.Usage.CompletionTokens != 32 {
			t.Fatalf("err %v, %+v", err, resp)
		}
	})
}

func TestFaultMalformedChunk(t *testing.T) {
	p, c := startOpenAI(t, faults.Spec{Kind: faults.KindMalformedChunk, At: intp(3)})
	r := openAIStream(t, c, chatParams("hi"))
	if r.err == nil || r.chunks != 3 {
		t.Fatalf("err %v, %d chunks", r.err, r.chunks)
	}
	// The SDK hangs up at the bad event, so the outcome may still be pending.
	if j := p.Model().Journal(); j[0].Fault != "malformed_chunk" {
		t.Fatalf("journal %+v", j[0])
	}
	// And a non-streamed body.
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("hi")); err == nil {
		t.Fatal("a malformed body decoded cleanly")
	}
}

func TestFaultMissingDone(t *testing.T) {
	p, c := startOpenAI(t, faults.Spec{Kind: faults.KindMissingDone})
	body := `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(p.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(raw), "[DONE]") || !strings.Contains(string(raw), `"finish_reason":"stop"`) {
		t.Fatalf("stream:\n%s", raw)
	}
	// The SDK still sees the finish reason: only the end marker is missing.
	r := openAIStream(t, c, chatParams("hi"))
	if r.finish != "stop" {
		t.Fatalf("finish %q err %v", r.finish, r.err)
	}
}

func structuredParams() oai.ChatCompletionNewParams {
	p := chatParams("extract the invoice")
	p.ResponseFormat = oai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &oai.ResponseFormatJSONSchemaParam{
		JSONSchema: oai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "invoice", Schema: map[string]any{
			"type": "object", "required": []string{"number", "total"},
			"properties": map[string]any{"number": map[string]any{"type": "string"}, "total": map[string]any{"type": "number"}},
		}},
	}}
	return p
}

func TestFaultMalformedJSONContent(t *testing.T) {
	p, c := startOpenAI(t, faults.Spec{Kind: faults.KindMalformedJSONContent})
	resp, err := c.Chat.Completions.New(context.Background(), structuredParams())
	if err != nil || resp.Choices[0].FinishReason != "stop" || json.Valid([]byte(resp.Choices[0].Message.Content)) {
		t.Fatalf("err %v, %+v", err, resp)
	}
	// Not a structured request: not selected.
	resp, err = c.Chat.Completions.New(context.Background(), chatParams("What is the capital of France?"))
	if err != nil || resp.Choices[0].Message.Content != "The capital of France is Paris." {
		t.Fatalf("err %v, %+v", err, resp)
	}
	if j := p.Model().Journal(); !j[0].Corrupted || j[1].Corrupted {
		t.Fatalf("journal %+v", j)
	}
}

func toolParams(prompt string) oai.ChatCompletionNewParams {
	p := chatParams(prompt)
	p.Tools = []oai.ChatCompletionToolUnionParam{oai.ChatCompletionFunctionTool(oai.FunctionDefinitionParam{
		Name: "get_weather",
		Parameters: oai.FunctionParameters{"type": "object", "required": []string{"city"},
			"properties": map[string]any{"city": map[string]any{"type": "string"}}},
	})}
	return p
}

func TestFaultEmptyToolArgs(t *testing.T) {
	_, c := startOpenAI(t, faults.Spec{Kind: faults.KindEmptyToolArgs})
	resp, err := c.Chat.Completions.New(context.Background(), toolParams("what is the weather in Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != "{}" || resp.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("%+v", resp.Choices[0])
	}
}

func TestFaultRefusal(t *testing.T) {
	_, c := startOpenAI(t, faults.Spec{Kind: faults.KindRefusal})
	resp, err := c.Chat.Completions.New(context.Background(), chatParams("What is the capital of France?"))
	if err != nil || resp.Choices[0].Message.Content != faults.DefaultRefusal || resp.Choices[0].FinishReason != "stop" {
		t.Fatalf("err %v, %+v", err, resp)
	}
}

func TestFaultQualityDrop(t *testing.T) {
	_, c := startOpenAI(t, faults.Spec{Kind: faults.KindQualityDrop})
	resp, err := c.Chat.Completions.New(context.Background(), chatParams("What is the capital of France?"))
	if err != nil {
		t.Fatal(err)
	}
	got := resp.Choices[0].Message.Content
	if got == "The capital of France is Paris." || strings.Contains(got, "Paris") || resp.Usage.CompletionTokens != 8 {
		t.Fatalf("content %q, usage %d", got, resp.Usage.CompletionTokens)
	}
}

func TestFaultAuthFailure(t *testing.T) {
	t.Run("openai", func(t *testing.T) {
		_, c := startOpenAI(t, faults.Spec{Kind: faults.KindAuthFailure})
		_, err := c.Chat.Completions.New(context.Background(), chatParams("hi"))
		if e := apiError(t, err); e.StatusCode != 401 || e.Code != "invalid_api_key" {
			t.Fatalf("got %d %q", e.StatusCode, e.Code)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		_, c := startAnthropic(t, faults.Spec{Kind: faults.KindAuthFailure})
		_, err := c.Messages.New(context.Background(), messageParams("hi"))
		var e *anth.Error
		if !errors.As(err, &e) || e.StatusCode != 401 || e.Type() != "authentication_error" {
			t.Fatalf("got %v", err)
		}
	})
}

func TestFaultRejectParam(t *testing.T) {
	_, c := startOpenAI(t, faults.Spec{Kind: faults.KindRejectParam, Param: "temperature"})
	params := chatParams("hi")
	params.Temperature = oai.Float(0.2)
	_, err := c.Chat.Completions.New(context.Background(), params)
	if e := apiError(t, err); e.StatusCode != 400 || e.Param != "temperature" || e.Code != "unsupported_parameter" {
		t.Fatalf("got %d %q %q", e.StatusCode, e.Param, e.Code)
	}
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("hi")); err != nil {
		t.Fatalf("a request without the parameter failed: %v", err)
	}
}

func TestFaultContextLength(t *testing.T) {
	_, c := startOpenAI(t, faults.Spec{Kind: faults.KindContextLength, Window: 50})
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("short")); err != nil {
		t.Fatalf("a short prompt failed: %v", err)
	}
	_, err := c.Chat.Completions.New(context.Background(), chatParams(strings.Repeat("long prompt ", 40)))
	if e := apiError(t, err); e.StatusCode != 400 || e.Code != "context_length_exceeded" {
		t.Fatalf("got %d %q", e.StatusCode, e.Code)
	}
}

func TestFaultContentFilter(t *testing.T) {
	t.Run("output", func(t *testing.T) {
		_, c := startOpenAI(t, faults.Spec{Kind: faults.KindContentFilter, After: intp(4)})
		r := openAIStream(t, c, chatParams("hi"))
		if r.err != nil || r.finish != "content_filter" || r.chunks != 4 {
			t.Fatalf("err %v, finish %q, %d chunks", r.err, r.finish, r.chunks)
		}
	})
	t.Run("prompt", func(t *testing.T) {
		_, c := startOpenAI(t, faults.Spec{Kind: faults.KindContentFilter, Stage: "prompt"})
		_, err := c.Chat.Completions.New(context.Background(), chatParams("hi"))
		if e := apiError(t, err); e.StatusCode != 400 || e.Code != "content_filter" {
			t.Fatalf("got %d %q", e.StatusCode, e.Code)
		}
	})
}

// TestEveryKindHasAnSDKTest keeps this file complete as kinds are added.
func TestEveryKindHasAnSDKTest(t *testing.T) {
	covered := map[faults.Kind]bool{
		faults.KindHTTPError: true, faults.KindReset: true, faults.KindNoResponse: true, faults.KindSlowHeaders: true,
		faults.KindTTFT: true, faults.KindTokenRate: true, faults.KindStall: true, faults.KindCut: true,
		faults.KindTruncate: true, faults.KindMalformedChunk: true, faults.KindMissingDone: true,
		faults.KindMalformedJSONContent: true, faults.KindEmptyToolArgs: true, faults.KindRefusal: true,
		faults.KindQualityDrop: true, faults.KindAuthFailure: true, faults.KindRejectParam: true,
		faults.KindContextLength: true, faults.KindContentFilter: true,
	}
	for _, k := range faults.Kinds() {
		if !covered[k] {
			t.Errorf("fault kind %s has no SDK test", k)
		}
	}
}

func TestCapacitySheddingSDK(t *testing.T) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.Capacity = mockprovider.Capacity{RPM: 2}
	p := mockprovider.StartTest(t, s)
	c := oai.NewClient(option.WithBaseURL(p.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	for range 2 {
		if _, err := c.Chat.Completions.New(context.Background(), chatParams("hi")); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Chat.Completions.New(context.Background(), chatParams("hi"))
	e := apiError(t, err)
	h := e.Response.Header
	if e.StatusCode != 429 || h.Get("X-Ratelimit-Limit-Requests") != "2" || h.Get("X-Ratelimit-Remaining-Requests") != "0" ||
		h.Get("Retry-After") == "" || h.Get("X-Ratelimit-Reset-Requests") == "" {
		t.Fatalf("%d %v", e.StatusCode, h)
	}
	if st := p.Model().Stats(); st.Shed != 1 || st.ByOutcome["shed"] != 1 {
		t.Fatalf("%+v", st)
	}
}
