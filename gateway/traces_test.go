package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
)

// memTraces is a tracer provider keeping every ended span in memory.
func memTraces(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	return tp, exp
}

// spanTree renders a request's spans as an indented tree: the server span,
// its retry/failover/continuation/skip events, and its client spans in
// start order with the attributes that tell the story. Span IDs and links
// are checked by the renderer: a client span whose parent is not the
// server span, or of another trace, is rendered as an orphan.
func spanTree(spans tracetest.SpanStubs) string {
	var b strings.Builder
	byStart := slices.Clone(spans)
	slices.SortFunc(byStart, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	for _, s := range byStart {
		if s.SpanKind != trace.SpanKindServer {
			continue
		}
		fmt.Fprintf(&b, "SERVER %s %s\n", s.Name, attrs(s.Attributes, "http.response.status_code", "gen_ai.operation.name",
			"gen_ai.request.model", "gen_ai.response.model", "brownout.attempts", "brownout.tier", "brownout.target", "error.type"))
		for _, e := range s.Events {
			if e.Name == "brownout.backoff" { // its length is jitter
				continue
			}
			fmt.Fprintf(&b, "  event %s %s\n", e.Name, attrs(e.Attributes, "brownout.attempt", "brownout.target",
				"brownout.previous.target", "brownout.previous.outcome", "brownout.continuation", "brownout.outcome"))
		}
		for _, c := range byStart {
			if c.SpanKind != trace.SpanKindClient {
				continue
			}
			if c.Parent.SpanID() != s.SpanContext.SpanID() || c.SpanContext.TraceID() != s.SpanContext.TraceID() {
				fmt.Fprintf(&b, "  ORPHAN %s\n", c.Name)
				continue
			}
			fmt.Fprintf(&b, "  CLIENT %s %s status=%s\n", c.Name, attrs(c.Attributes, "brownout.attempt", "brownout.attempt.reason",
				"brownout.continuation", "brownout.target", "brownout.tier", "gen_ai.provider.name", "gen_ai.response.model",
				"gen_ai.response.finish_reasons", "brownout.outcome", "error.type", "http.response.status_code"), c.Status.Code)
		}
	}
	return b.String()
}

// attrs renders the named attributes present in kvs, in the order named.
func attrs(kvs []attribute.KeyValue, names ...string) string {
	var parts []string
	for _, n := range names {
		for _, kv := range kvs {
			if string(kv.Key) == n {
				parts = append(parts, n+"="+kv.Value.String())
			}
		}
	}
	return strings.Join(parts, " ")
}

func attr(kvs []attribute.KeyValue, name string) (attribute.Value, bool) {
	for _, kv := range kvs {
		if string(kv.Key) == name {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestTraceRetryThenFailoverMidStream: the primary answers 429 (retried on
// the same target), then cuts its stream after 5 tokens (failed over to
// the equivalent, which continues the answer from a prefill). The trace
// is one server span with three client spans under it, each attempt's
// number, reason, target, tier and outcome on it, and the retry, the
// fail-over and the continuation as events of the server span.
func TestTraceRetryThenFailoverMidStream(t *testing.T) {
	m := startMocks(t)
	cfg := m.config(t, "")
	cfg.Routes[0].Targets[0].Retry.Attempts = 2
	cfg.Routes[0].Targets[0].Retry.Base = yamlfile.Duration(time.Millisecond)
	tp, exp := memTraces(t)
	g := startGateway(t, cfg, gateway.Options{TracerProvider: tp})
	addFault(t, m.alpha, `{kind: http_error, status: 429, first: 1}`)
	addFault(t, m.alpha, `{kind: cut, after: 5}`)

	r := g.do(t, true, nil)
	require.Equal(t, 200, r.status)
	require.True(t, r.clean, "the continuation completed the answer: %s", r.errEv)

	want := `SERVER POST /v1/chat/completions http.response.status_code=200 gen_ai.operation.name=chat gen_ai.request.model=chat gen_ai.response.model=claude-sonnet brownout.attempts=3 brownout.tier=equivalent brownout.target=beta:claude-sonnet
  event brownout.retry brownout.attempt=2 brownout.target=alpha:gpt-4o brownout.previous.target=alpha:gpt-4o brownout.previous.outcome=rate_limited
  event brownout.failover brownout.attempt=3 brownout.target=beta:claude-sonnet brownout.previous.target=alpha:gpt-4o brownout.previous.outcome=cut_mid_stream
  event brownout.continuation brownout.attempt=3 brownout.target=beta:claude-sonnet brownout.continuation=prefill
  CLIENT chat gpt-4o brownout.attempt=1 brownout.attempt.reason=first brownout.target=alpha:gpt-4o brownout.tier=primary gen_ai.provider.name=openai brownout.outcome=rate_limited error.type=rate_limited http.response.status_code=429 status=Error
  CLIENT chat gpt-4o brownout.attempt=2 brownout.attempt.reason=retry brownout.target=alpha:gpt-4o brownout.tier=primary gen_ai.provider.name=openai brownout.outcome=cut_mid_stream error.type=cut_mid_stream http.response.status_code=200 status=Error
  CLIENT chat claude-sonnet brownout.attempt=3 brownout.attempt.reason=failover brownout.continuation=prefill brownout.target=beta:claude-sonnet brownout.tier=equivalent gen_ai.provider.name=anthropic gen_ai.response.model=claude-sonnet gen_ai.response.finish_reasons=["stop"] brownout.outcome=ok http.response.status_code=200 status=Unset
`
	assert.Equal(t, want, spanTree(exp.GetSpans()))

	// Usage and the upstream's address are on the client spans.
	for _, s := range exp.GetSpans() {
		if s.SpanKind != trace.SpanKindClient {
			continue
		}
		addr, ok := attr(s.Attributes, "server.address")
		assert.True(t, ok && addr.AsString() == "127.0.0.1", "%s: server.address %v", s.Name, addr.String())
		if v, _ := attr(s.Attributes, "brownout.outcome"); v.AsString() == "ok" {
			out, ok := attr(s.Attributes, "gen_ai.usage.output_tokens")
			assert.True(t, ok && out.AsInt64() > 0, "output tokens on the ok attempt")
		}
	}
}

// recordingTransport notes the traceparent of every upstream request.
type recordingTransport struct {
	mu     sync.Mutex
	parent []string
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	rt.parent = append(rt.parent, r.Header.Get("Traceparent"))
	rt.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (rt *recordingTransport) seen() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return slices.Clone(rt.parent)
}

// TestTraceEveryInboundAPI: each inbound API gets a server span named by
// its route, the child of the caller's traceparent; the upstream attempt's
// client span is its child, and the upstream receives the client span's
// trace context.
func TestTraceEveryInboundAPI(t *testing.T) {
	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, tc := range []struct {
		path, body, route, op string
	}{
		{"/v1/chat/completions", openaiBody(false), "/v1/chat/completions", "chat"},
		{"/v1/messages", anthropicBody(false), "/v1/messages", "chat"},
		{"/v1/responses", `{"model":"chat","input":"tell me about brownouts"}`, "/v1/responses", "chat"},
		{"/v1beta/models/chat:generateContent", `{"contents":[{"role":"user","parts":[{"text":"tell me about brownouts"}]}]}`, "/v1beta/models/{call}", "generate_content"},
	} {
		t.Run(tc.route, func(t *testing.T) {
			m := startMocks(t)
			tp, exp := memTraces(t)
			rec := &recordingTransport{}
			g := startGateway(t, m.config(t, ""), gateway.Options{TracerProvider: tp, Transport: rec})
			resp := post(t, g.url, tc.path, tc.body, map[string]string{"Traceparent": "00-" + callerTrace + "-" + callerSpan + "-01"})
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			require.Equal(t, 200, resp.StatusCode)

			spans := exp.GetSpans()
			require.Len(t, spans, 2)
			var server, client tracetest.SpanStub
			for _, s := range spans {
				if s.SpanKind == trace.SpanKindServer {
					server = s
				} else {
					client = s
				}
			}
			assert.Equal(t, "POST "+tc.route, server.Name)
			assert.Equal(t, callerTrace, server.SpanContext.TraceID().String(), "the caller's trace")
			assert.Equal(t, callerSpan, server.Parent.SpanID().String(), "the caller's span is the parent")
			assert.True(t, server.Parent.IsRemote())
			assert.Equal(t, "route="+tc.route+" op="+tc.op, "route="+emit(server.Attributes, "http.route")+" op="+emit(server.Attributes, "gen_ai.operation.name"))
			assert.Equal(t, trace.SpanKindClient, client.SpanKind)
			assert.Equal(t, server.SpanContext.SpanID(), client.Parent.SpanID())
			assert.Equal(t, "chat gpt-4o", client.Name)
			assert.Equal(t, []string{"00-" + callerTrace + "-" + client.SpanContext.SpanID().String() + "-01"}, rec.seen(),
				"the upstream request carries the client span's context")
		})
	}
}

func emit(kvs []attribute.KeyValue, name string) string {
	v, _ := attr(kvs, name)
	return v.String()
}

// TestTraceOffSendsNoTraceContext: with tracing off the gateway neither
// makes spans nor forwards the caller's traceparent.
func TestTraceOffSendsNoTraceContext(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	m := startMocks(t)
	rec := &recordingTransport{}
	g := startGateway(t, m.config(t, ""), gateway.Options{Transport: rec})
	r := g.do(t, false, map[string]string{"Traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	require.Equal(t, 200, r.status)
	assert.Equal(t, []string{""}, rec.seen())
}

// TestTraceSecretsRedacted: an upstream error echoing the provider key
// reaches the span's status redacted; no attribute, event or status of any
// span carries a configured secret.
func TestTraceSecretsRedacted(t *testing.T) {
	m := startMocks(t)
	tp, exp := memTraces(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{TracerProvider: tp})
	addFault(t, m.alpha, `{kind: http_error, status: 401, message: "invalid key sk-alpha-secret (Bearer sk-alpha-secret)"}`)
	r := g.do(t, false, nil)
	require.Equal(t, 200, r.status)
	spans := exp.GetSpans()
	require.NotEmpty(t, spans)
	var failed bool
	for _, s := range spans {
		text := fmt.Sprint(s.Name, s.Attributes, s.Events, s.Status)
		for _, secret := range []string{"sk-alpha-secret", "sk-beta-secret", "sk-gamma-secret"} {
			assert.NotContains(t, text, secret, s.Name)
		}
		if s.Status.Code == codes.Error && strings.Contains(s.Status.Description, gateway.Redacted) {
			failed = true
			assert.Equal(t, "auth", emit(s.Attributes, "error.type"))
		}
	}
	assert.True(t, failed, "the 401 attempt's span has the redacted message")
}

// TestTraceFailedRequest: when every target fails the server span is an
// error with the error's type and the attempts made.
func TestTraceFailedRequest(t *testing.T) {
	m := startMocks(t)
	tp, exp := memTraces(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{TracerProvider: tp})
	for _, p := range []*mockprovider.Provider{m.alpha, m.beta, m.gamma} {
		addFault(t, p, `{kind: http_error, status: 503}`)
	}
	r := g.do(t, false, nil)
	require.Equal(t, 503, r.status)
	tree := spanTree(exp.GetSpans())
	assert.Contains(t, tree, "SERVER POST /v1/chat/completions http.response.status_code=503 gen_ai.operation.name=chat gen_ai.request.model=chat brownout.attempts=3 error.type=")
	assert.Equal(t, 3, strings.Count(tree, "brownout.outcome=overloaded error.type=overloaded"), tree)
	for _, s := range exp.GetSpans() {
		assert.Equal(t, codes.Error, s.Status.Code, s.Name)
	}
}
