package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
	"github.com/brownout-dev/brownout/llm/gemini"
)

const validInvoice = `{"invoice_number": "INV-2026-0412", "issue_date": "2026-03-12", "currency": "EUR", "total": 236.9,
 "line_items": [{"description": "Torque wrench", "quantity": 3, "unit_price": 49}]}`

// answer is a well-behaved model for the example suite.
func answer(req *llm.Request) *llm.Response {
	r := &llm.Response{ID: "resp_1", Model: req.Model, FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 40, OutputTokens: 30}}
	switch {
	case req.ResponseFormat != nil:
		r.Content = validInvoice
	case len(req.Tools) > 0:
		r.ToolCalls = []llm.ToolCall{{ID: "call_1", Name: req.Tools[0].Name, Arguments: `{"city": "Lisbon"}`}}
		r.FinishReason = llm.FinishToolCalls
	case strings.Contains(req.LastUserText(), "capital of France"):
		r.Content = "The capital of France is Paris."
	default:
		r.Content = "To reset your password, open the sign-in page, choose \"Forgot password\" and follow the reset link we email you."
	}
	return r
}

// drifting is a fallback whose format drifts: JSON wrapped in prose and a
// code fence, tool calls with empty arguments. Its plain answers are fine.
func drifting(req *llm.Request) *llm.Response {
	r := answer(req)
	switch {
	case req.ResponseFormat != nil:
		r.Content = "Sure! Here is the extracted invoice:\n```json\n" + validInvoice + "\n```"
	case len(req.Tools) > 0:
		r.ToolCalls[0].Arguments = "{}"
	}
	return r
}

type seen struct {
	mu      sync.Mutex
	headers []http.Header
	paths   []string
}

// fakeProvider serves one wire format with the llm codecs: it decodes the
// request as the real API would and encodes behave's answer.
func fakeProvider(t *testing.T, f llm.Format, behave func(*llm.Request) *llm.Response, s *seen) *httptest.Server {
	codec, err := codecs.Codec(f)
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if s != nil {
			s.mu.Lock()
			s.headers = append(s.headers, r.Header.Clone())
			s.paths = append(s.paths, r.URL.RequestURI())
			s.mu.Unlock()
		}
		req, err := codec.DecodeRequest(body)
		if err != nil {
			status, b := codec.EncodeError(err.(*llm.Error))
			w.WriteHeader(status)
			w.Write(b)
			return
		}
		if f == llm.FormatGemini {
			model, stream, err := gemini.ParsePath(r.URL.Path)
			require.NoError(t, err)
			req.Model, req.Stream = model, stream
		}
		if strings.Contains(req.LastUserText(), "overloaded") {
			w.Header().Set("Retry-After", "3")
			status, b := codec.EncodeError(&llm.Error{Status: 529, Type: llm.ErrOverloaded, Message: "Overloaded"})
			w.WriteHeader(status)
			w.Write(b)
			return
		}
		if req.Stream {
			streamAnswer(w, codec, behave(req), req.LastUserText())
			return
		}
		b, err := codec.EncodeResponse(behave(req))
		require.NoError(t, err)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// streamAnswer streams resp word by word; prompts containing "cut" end the
// stream after two words, "inband" sends an in-band error.
func streamAnswer(w http.ResponseWriter, codec llm.Codec, resp *llm.Response, prompt string) {
	w.Header().Set("Content-Type", "text/event-stream")
	enc := codec.NewStreamEncoder(w)
	enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: resp.ID, Model: resp.Model})
	for i, word := range strings.SplitAfter(resp.Content, " ") {
		if i == 2 && strings.Contains(prompt, "cut") {
			return
		}
		enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: word})
	}
	if strings.Contains(prompt, "inband") {
		enc.Encode(llm.StreamEvent{Type: llm.EventError, Err: &llm.Error{Status: 529, Type: llm.ErrOverloaded, Message: "Overloaded"}})
		return
	}
	for i, tc := range resp.ToolCalls {
		enc.Encode(llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}})
	}
	enc.Encode(llm.StreamEvent{Type: llm.EventFinish, FinishReason: resp.FinishReason})
	u := resp.Usage
	enc.Encode(llm.StreamEvent{Type: llm.EventUsage, Usage: &u})
	enc.Close()
}

func userReq(text string) *llm.Request {
	return &llm.Request{MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(text)}}}}
}

func TestSendEachFormat(t *testing.T) {
	tests := []struct {
		format   llm.Format
		base     string // appended to the server URL
		wantPath string
		keyHdr   string
		keyVal   string
	}{
		{llm.FormatOpenAI, "", "/v1/chat/completions", "Authorization", "Bearer sk-test-secret"},
		{llm.FormatOpenAI, "/v1", "/v1/chat/completions", "Authorization", "Bearer sk-test-secret"},
		{llm.FormatAnthropic, "", "/v1/messages", "X-Api-Key", "sk-test-secret"},
		{llm.FormatGemini, "", "/v1beta/models/gemini-2.5-flash:generateContent", "X-Goog-Api-Key", "sk-test-secret"},
		{llm.FormatGemini, "/v1beta", "/v1beta/models/gemini-2.5-flash:generateContent", "X-Goog-Api-Key", "sk-test-secret"},
	}
	for _, tt := range tests {
		t.Run(string(tt.format)+tt.base, func(t *testing.T) {
			var s seen
			srv := fakeProvider(t, tt.format, answer, &s)
			c, err := New(Endpoint{URL: srv.URL + tt.base, Format: tt.format, APIKey: "sk-test-secret"}, srv.Client())
			require.NoError(t, err)
			target := evals.Target{Provider: "p", Model: "gemini-2.5-flash"}
			resp, err := c.Send(context.Background(), target, "chat", userReq("What is the capital of France?"))
			require.NoError(t, err)
			require.Equal(t, "The capital of France is Paris.", resp.Content)
			require.Equal(t, llm.FinishStop, resp.FinishReason)
			require.Equal(t, []string{tt.wantPath}, s.paths)
			h := s.headers[0]
			require.Equal(t, tt.keyVal, h.Get(tt.keyHdr))
			require.Empty(t, h.Get(HeaderHint), "no hint straight to a provider")
			if tt.format == llm.FormatAnthropic {
				require.Equal(t, AnthropicVersion, h.Get("anthropic-version"))
			}
		})
	}
}

func TestSendStreamed(t *testing.T) {
	for _, f := range []llm.Format{llm.FormatOpenAI, llm.FormatAnthropic, llm.FormatGemini} {
		t.Run(string(f), func(t *testing.T) {
			var s seen
			srv := fakeProvider(t, f, answer, &s)
			c, err := New(Endpoint{URL: srv.URL, Format: f}, srv.Client())
			require.NoError(t, err)
			tg := evals.Target{Provider: "p", Model: "m"}
			req := userReq("What is the capital of France?")
			req.Stream = true
			resp, err := c.Send(context.Background(), tg, "chat", req)
			require.NoError(t, err)
			require.Equal(t, "The capital of France is Paris.", resp.Content)
			require.Equal(t, llm.FinishStop, resp.FinishReason)
			require.Equal(t, 30, resp.Usage.OutputTokens)
			require.Equal(t, "text/event-stream", s.headers[0].Get("Accept"))
			if f == llm.FormatGemini {
				require.Equal(t, "/v1beta/models/m:streamGenerateContent?alt=sse", s.paths[0])
			}

			req = userReq("capital of France, but cut")
			req.Stream = true
			_, err = c.Send(context.Background(), tg, "chat", req)
			require.ErrorIs(t, err, ErrStreamCut)

			req = userReq("capital of France, inband error")
			req.Stream = true
			_, err = c.Send(context.Background(), tg, "chat", req)
			var le *llm.Error
			require.ErrorAs(t, err, &le, "an in-band error is the provider's error")
			require.Contains(t, le.Message, "Overloaded")
		})
	}
}

// fakeGateway answers with the model it was asked for (the route) and names
// the target that served: the hinted one, or "openai:gpt-4o" without a hint
// or when the hint is "anthropic:busy" (a failover).
func fakeGateway(t *testing.T, s *seen) *httptest.Server {
	codec, _ := codecs.Codec(llm.FormatOpenAI)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		req, err := codec.DecodeRequest(body)
		require.NoError(t, err)
		served := r.Header.Get(HeaderHint)
		if served == "" || served == "anthropic:busy" {
			served = "openai:gpt-4o"
		}
		w.Header().Set(HeaderTarget, served)
		b, _ := codec.EncodeResponse(&llm.Response{ID: "x", Model: req.Model, Content: "route " + req.Model, FinishReason: llm.FinishStop})
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSendThroughGateway(t *testing.T) {
	var s seen
	gw := fakeGateway(t, &s)
	c, err := New(Endpoint{URL: gw.URL, Gateway: true}, gw.Client())
	require.NoError(t, err)
	req := userReq("hi")
	req.Model = "claude-sonnet-4-5"
	resp, err := c.Send(context.Background(), evals.Target{Provider: "anthropic", Model: "claude-sonnet-4-5"}, "chat", req)
	require.NoError(t, err)
	require.Equal(t, "route chat", resp.Content, "the model names the gateway route")
	require.Equal(t, "anthropic:claude-sonnet-4-5", s.headers[0].Get(HeaderHint))

	_, err = c.Send(context.Background(), evals.Target{Provider: "anthropic", Model: "busy"}, "chat", userReq("hi"))
	require.ErrorIs(t, err, ErrWrongTarget)
	require.ErrorContains(t, err, `openai:gpt-4o instead of anthropic:busy (does route "chat" allow hints?)`)
}

func TestSendProviderErrorKeepsRetryAfterAndHidesKey(t *testing.T) {
	srv := fakeProvider(t, llm.FormatAnthropic, answer, nil)
	c, err := New(Endpoint{URL: srv.URL, Format: llm.FormatAnthropic, APIKey: "sk-ant-secret"}, srv.Client())
	require.NoError(t, err)
	_, err = c.Send(context.Background(), evals.Target{Provider: "anthropic", Model: "claude"}, "", userReq("overloaded please"))
	var le *llm.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, 529, le.Status)
	require.Equal(t, llm.ErrOverloaded, le.Type)
	require.Equal(t, 3*time.Second, le.RetryAfter)
	require.NotContains(t, err.Error(), "sk-ant-secret")

	// Transport errors name the URL but never the key.
	dead, err := New(Endpoint{URL: "http://127.0.0.1:1", APIKey: "sk-secret"}, nil)
	require.NoError(t, err)
	_, err = dead.Send(context.Background(), evals.Target{Provider: "openai", Model: "m"}, "", userReq("x"))
	require.ErrorContains(t, err, "post http://127.0.0.1:1/v1/chat/completions")
	require.NotContains(t, err.Error(), "sk-secret")
}

func TestNewAndParseEndpointErrors(t *testing.T) {
	_, err := New(Endpoint{URL: "ftp://x"}, nil)
	require.ErrorContains(t, err, `url "ftp://x"`)
	_, err = New(Endpoint{URL: "http://x", Format: "cohere"}, nil)
	require.ErrorContains(t, err, `unknown format "cohere": want one of openai, anthropic, gemini, openai_responses`)

	p, ep, err := ParseEndpoint("backup=anthropic@http://127.0.0.1:9002", llm.FormatOpenAI)
	require.NoError(t, err)
	require.Equal(t, "backup", p)
	require.Equal(t, Endpoint{URL: "http://127.0.0.1:9002", Format: llm.FormatAnthropic}, ep)
	p, ep, err = ParseEndpoint("openai=http://user@host:1/v1", llm.FormatOpenAI)
	require.NoError(t, err)
	require.Equal(t, "openai", p)
	require.Equal(t, "http://user@host:1/v1", ep.URL, "an @ inside the URL is not a format")
	_, _, err = ParseEndpoint("nope", llm.FormatOpenAI)
	require.ErrorContains(t, err, "want PROVIDER=[FORMAT@]URL")
	_, _, err = ParseEndpoint("x=cohere@http://h", llm.FormatOpenAI)
	require.ErrorContains(t, err, `format "cohere"`)
	row, err := codecs.Lookup(llm.FormatGemini)
	require.NoError(t, err)
	require.Equal(t, "GEMINI_API_KEY", row.KeyEnv)
}

// Qualification end to end over real HTTP: a primary (OpenAI format), a good
// fallback (Anthropic format) and a fallback whose output format drifts.
func TestQualifyEndToEnd(t *testing.T) {
	primary := fakeProvider(t, llm.FormatOpenAI, answer, nil)
	good := fakeProvider(t, llm.FormatAnthropic, answer, nil)
	drift := fakeProvider(t, llm.FormatOpenAI, drifting, nil)
	mk := func(srv *httptest.Server, f llm.Format) *Client {
		c, err := New(Endpoint{URL: srv.URL, Format: f}, srv.Client())
		require.NoError(t, err)
		return c
	}
	router := &Router{ByProvider: map[string]*Client{
		"openai":    mk(primary, llm.FormatOpenAI),
		"anthropic": mk(good, llm.FormatAnthropic),
		"cheapco":   mk(drift, llm.FormatOpenAI),
	}}
	suite, err := evals.LoadSuite("../../examples/evals/support.yaml")
	require.NoError(t, err)
	p := evals.Target{Provider: "openai", Model: "gpt-4o"}
	pairs := []evals.Pair{
		{Primary: p, Fallback: evals.Target{Provider: "anthropic", Model: "claude-sonnet-4-5"}},
		{Primary: p, Fallback: evals.Target{Provider: "cheapco", Model: "cheap-1"}},
	}
	now := time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)
	q, reports, err := evals.Qualify(context.Background(), suite, pairs, router, evals.QualifyOptions{Threshold: 0.95, Now: now})
	require.NoError(t, err)
	require.Len(t, reports, 3)
	require.Equal(t, 1.0, reports[0].PassRate, "primary: %+v", reports[0].Cases)

	verdicts := map[string]string{}
	for _, e := range q.Entries {
		verdicts[e.Fallback+" "+e.Route] = e.Verdict
		require.Equal(t, 1.0, e.PrimaryPassRate)
	}
	require.Equal(t, map[string]string{
		"anthropic:claude-sonnet-4-5 extract": evals.VerdictQualified,
		"anthropic:claude-sonnet-4-5 tools":   evals.VerdictQualified,
		"anthropic:claude-sonnet-4-5 chat":    evals.VerdictQualified,
		"cheapco:cheap-1 extract":             evals.VerdictUnqualified,
		"cheapco:cheap-1 tools":               evals.VerdictUnqualified,
		"cheapco:cheap-1 chat":                evals.VerdictQualified,
	}, verdicts)
	var extract evals.Entry
	for _, e := range q.Entries {
		if e.Fallback == "cheapco:cheap-1" && e.Route == "extract" {
			extract = e
		}
	}
	require.Zero(t, extract.PassRate)
	require.Contains(t, extract.Failures[0], "json_valid: content is not valid JSON")

	// Round trip through the file the gateway reads at startup.
	path := t.TempDir() + "/qualification.json"
	require.NoError(t, q.WriteFile(path))
	loaded, err := evals.LoadQualification(path)
	require.NoError(t, err)
	require.Equal(t, q, loaded)
	require.True(t, loaded.Qualified("extract", "anthropic:claude-sonnet-4-5"))
	require.True(t, loaded.Qualified("extract", "anthropic/claude-sonnet-4-5"))
	require.False(t, loaded.Qualified("extract", "cheapco:cheap-1"))
	require.True(t, loaded.Qualified("chat", "cheapco:cheap-1"))
	require.True(t, loaded.Qualified("extract", "openai:gpt-4o"), "the primary is the reference")
	require.False(t, loaded.Qualified("unknown-route", "anthropic:claude-sonnet-4-5"))
	require.False(t, loaded.Qualified("extract", "openai:gpt-4o-mini"))
}
