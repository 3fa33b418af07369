package tracing

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

// TestOffIsFree: a nil Tracer returns the handler it was given, and a nil
// Request ignores every call.
func TestOffIsFree(t *testing.T) {
	var tr *Tracer
	assert.Nil(t, New(nil))
	next := func(http.ResponseWriter, *http.Request) {}
	assert.Equal(t, reflect.ValueOf(next).Pointer(), reflect.ValueOf(tr.Handler("POST /x", "openai", next)).Pointer())
	req := httptest.NewRequest(http.MethodPost, "/x", nil)
	r := tr.Begin(req.Context(), "id", &llm.Request{}, nil)
	assert.Nil(t, r)
	d := &policy.Decision{Target: &policy.Target{Provider: "p", Model: "m"}, Try: 1}
	assert.NotPanics(t, func() {
		r.Send(d, "p", "openai", req)
		r.Observe(d, &policy.Outcome{Class: policy.OK}, Answer{})
		r.Wait(time.Second, d.Target)
		r.Served(Served{})
		r.Failed(nil, 0)
	})
	assert.Empty(t, req.Header.Get("Traceparent"))
}

// lower is a Redactor for tests: it replaces "hunter2" wherever it is.
type lower struct{}

func (lower) String(s string) string { return strings.ReplaceAll(s, "hunter2", "[redacted]") }

func record(t *testing.T, handler func(t *Tracer, w http.ResponseWriter, r *http.Request)) tracetest.SpanStubs {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr := New(tp)
	h := tr.Handler("POST /v1/messages", "anthropic", func(w http.ResponseWriter, r *http.Request) { handler(tr, w, r) })
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) }) // the exporter forgets its spans at shutdown
	h(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/v1/messages", nil))
	return exp.GetSpans()
}

func find(spans tracetest.SpanStubs, kind trace.SpanKind) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.SpanKind == kind {
			out = append(out, s)
		}
	}
	return out
}

func get(kvs []attribute.KeyValue, k attribute.Key) string {
	for _, kv := range kvs {
		if kv.Key == k {
			return kv.Value.String()
		}
	}
	return ""
}

// TestSkipWatchdogBackoff: a target skipped without a request is an event
// of the server span (its reason redacted); a watchdog verdict is an event
// of the attempt's span; a backoff is an event with its length.
func TestSkipWatchdogBackoff(t *testing.T) {
	a := &policy.Target{Provider: "a", Model: "m1"}
	b := &policy.Target{Provider: "b", Model: "m2"}
	spans := record(t, func(tr *Tracer, w http.ResponseWriter, r *http.Request) {
		x := tr.Begin(r.Context(), "req-9", &llm.Request{Model: "chat", Stream: true, MaxTokens: 64}, lower{})
		d1 := &policy.Decision{Target: a, Try: 1, Tier: "primary"}
		x.Observe(d1, &policy.Outcome{Class: policy.Skipped, Err: &llm.Error{Message: "cannot express it with key hunter2"}}, Answer{})
		d2 := &policy.Decision{Target: b, Try: 1, Tier: "smaller"}
		up := httptest.NewRequest(http.MethodPost, "https://api.example/v1/messages", nil)
		x.Send(d2, "b", "anthropic", up)
		assert.NotEmpty(t, up.Header.Get("Traceparent"))
		x.Observe(d2, &policy.Outcome{Class: policy.TimeoutTTFT, TTFT: 1500 * time.Millisecond}, Answer{})
		x.Wait(250*time.Millisecond, b)
		x.Wait(0, b) // no wait, no event
		x.Failed(&llm.Error{Type: llm.ErrServer, Message: "upstream said hunter2"}, 1)
		w.WriteHeader(http.StatusBadGateway)
	})
	servers, clients := find(spans, trace.SpanKindServer), find(spans, trace.SpanKindClient)
	require.Len(t, servers, 1)
	require.Len(t, clients, 1)
	s, c := servers[0], clients[0]

	var evs []string
	for _, e := range s.Events {
		evs = append(evs, e.Name+" "+get(e.Attributes, Target)+" "+get(e.Attributes, Outcome)+" "+get(e.Attributes, Detail)+" "+get(e.Attributes, Wait))
	}
	assert.Equal(t, []string{
		"brownout.skipped a:m1 skipped cannot express it with key [redacted] ",
		"brownout.backoff b:m2   250",
	}, evs)
	assert.Equal(t, "502", get(s.Attributes, keyStatus))
	assert.Equal(t, "server_error", get(s.Attributes, keyErrorType))
	assert.Equal(t, "64", get(s.Attributes, keyMaxTokens))
	assert.Equal(t, "true", get(s.Attributes, Stream))
	assert.Equal(t, codes.Error, s.Status.Code)
	assert.Equal(t, "upstream said [redacted]", s.Status.Description)

	assert.Equal(t, "chat m2", c.Name)
	assert.Equal(t, "first", get(c.Attributes, Reason), "a skipped target is not an attempt")
	assert.Equal(t, "api.example 443", get(c.Attributes, keyServerAddr)+" "+get(c.Attributes, keyServerPort))
	assert.Equal(t, "timeout_ttft", get(c.Attributes, keyErrorType))
	require.Len(t, c.Events, 1)
	assert.Equal(t, EventWatchdog, c.Events[0].Name)
	assert.Equal(t, "1500", get(c.Events[0].Attributes, TTFT))
}

// TestStatusAndAbandon: the server span takes the status the handler
// wrote (200 when it wrote nothing; a 5xx is an error); an attempt left
// open when the request ends is closed as abandoned.
func TestStatusAndAbandon(t *testing.T) {
	for _, tc := range []struct {
		name   string
		write  func(w http.ResponseWriter)
		status string
		code   codes.Code
	}{
		{"nothing written", func(http.ResponseWriter) {}, "200", codes.Unset},
		{"body only", func(w http.ResponseWriter) { _, _ = w.Write([]byte("{}")) }, "200", codes.Unset},
		{"client error", func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadRequest) }, "400", codes.Unset},
		{"server error", func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }, "503", codes.Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := record(t, func(tr *Tracer, w http.ResponseWriter, r *http.Request) {
				x := tr.Begin(r.Context(), "id", &llm.Request{Model: "chat"}, nil)
				x.Send(&policy.Decision{Target: &policy.Target{Provider: "g", Model: "flash"}, Try: 1}, "g", "gemini",
					httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8/x", nil))
				tc.write(w)
			})
			s := find(spans, trace.SpanKindServer)[0]
			assert.Equal(t, tc.status, get(s.Attributes, keyStatus))
			assert.Equal(t, tc.code, s.Status.Code)
			c := find(spans, trace.SpanKindClient)[0]
			assert.Equal(t, "generate_content flash", c.Name)
			assert.Equal(t, "gcp.gemini", get(c.Attributes, keyProvider))
			assert.Equal(t, "abandoned", get(c.Attributes, keyErrorType))
		})
	}
}

func TestProviderName(t *testing.T) {
	for _, tc := range [][3]string{
		{"openai", "x", "openai"}, {"azure", "x", "azure.ai.openai"}, {"anthropic", "x", "anthropic"},
		{"gemini", "x", "gcp.gemini"}, {"openai_compatible", "groq", "groq"},
	} {
		assert.Equal(t, tc[2], ProviderName(tc[0], tc[1]), tc[0])
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", maxAttrLen) // two bytes each
	got := clip(long)
	assert.LessOrEqual(t, len(got), maxAttrLen)
	assert.Equal(t, strings.Repeat("é", maxAttrLen/2), got, "cut on a rune boundary")
	assert.Equal(t, "short", clip("short"))
}

// TestHandlerKeepsFlushing: the wrapped writer still flushes, both for
// http.ResponseController (the streaming proxy) and for writers that look
// for an http.Flusher (the idempotency recorder), and a flush alone is a
// 200.
func TestHandlerKeepsFlushing(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	for name, flush := range map[string]func(w http.ResponseWriter){
		"controller": func(w http.ResponseWriter) { require.NoError(t, http.NewResponseController(w).Flush()) },
		"flusher":    func(w http.ResponseWriter) { w.(http.Flusher).Flush() },
	} {
		t.Run(name, func(t *testing.T) {
			exp.Reset()
			rec := httptest.NewRecorder()
			New(tp).Handler("POST /v1/chat/completions", "openai", func(w http.ResponseWriter, r *http.Request) { flush(w) })(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil))
			assert.True(t, rec.Flushed)
			require.Len(t, exp.GetSpans(), 1)
			assert.Equal(t, "200", get(exp.GetSpans()[0].Attributes, keyStatus))
		})
	}
}

// TestHandlerPanics: a panic in the handler ends the server span as an
// error and goes on to the server's recovery.
func TestHandlerPanics(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	h := New(tp).Handler("POST /v1/responses", "openai_responses", func(http.ResponseWriter, *http.Request) { panic("boom") })
	assert.PanicsWithValue(t, "boom", func() {
		h(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/v1/responses", nil))
	})
	require.Len(t, exp.GetSpans(), 1)
	s := exp.GetSpans()[0]
	assert.Equal(t, codes.Error, s.Status.Code)
	assert.Equal(t, "panic", get(s.Attributes, keyErrorType))
	assert.Equal(t, "500", get(s.Attributes, keyStatus))
}
