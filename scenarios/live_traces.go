package scenarios

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/brownout-dev/brownout/gateway/tracing"
)

// TraceSample is the trace of one request of a live run (Options.Traces):
// the one with the most upstream attempts, the earliest among equals — a
// request that shows the gateway at work (retries, fail-overs,
// continuations) when the run had any.
type TraceSample struct {
	TraceID   string `json:"trace_id"`
	RequestID string `json:"request_id"`
	Route     string `json:"route"`
	// Status is the HTTP status the client got; Error the error type when
	// the request failed ("" when served).
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
	// Target and Tier served the request.
	Target string `json:"target,omitempty"`
	Tier   string `json:"tier,omitempty"`
	// Duration is the request's, from its span.
	Duration time.Duration `json:"duration_ns"`
	// Attempts are its upstream attempts in order.
	Attempts []TraceAttempt `json:"attempts"`
	// Events are the request span's events in order (brownout.retry,
	// brownout.failover, brownout.continuation, brownout.skipped,
	// brownout.backoff), with the target they name.
	Events []string `json:"events,omitempty"`
}

// TraceAttempt is one upstream attempt of a TraceSample (its client span).
type TraceAttempt struct {
	Attempt int    `json:"attempt"`
	Target  string `json:"target"`
	Tier    string `json:"tier"`
	// Reason is first, retry or failover; Continuation prefill or replay
	// when the attempt continued a partial answer.
	Reason       string        `json:"reason"`
	Continuation string        `json:"continuation,omitempty"`
	Outcome      string        `json:"outcome"`
	Status       int           `json:"status,omitempty"`
	Start        time.Duration `json:"start_ns"` // after the request began
	Duration     time.Duration `json:"duration_ns"`
	OutputTokens int           `json:"output_tokens,omitempty"`
}

// WriteTo writes the sample as a few lines of text (live progress).
func (t *TraceSample) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "sample trace %s (request %s, route %s): %d, %d attempts, %s", t.TraceID, t.RequestID, t.Route,
		t.Status, len(t.Attempts), t.Duration.Round(time.Millisecond))
	if t.Target != "" {
		fmt.Fprintf(&b, ", served by %s (%s)", t.Target, t.Tier)
	}
	if t.Error != "" {
		fmt.Fprintf(&b, ", failed: %s", t.Error)
	}
	b.WriteByte('\n')
	for _, a := range t.Attempts {
		fmt.Fprintf(&b, "  attempt %d +%s %s %s (%s", a.Attempt, a.Start.Round(time.Millisecond), a.Target, a.Outcome, a.Reason)
		if a.Continuation != "" {
			b.WriteString(", " + a.Continuation)
		}
		fmt.Fprintf(&b, ") %s\n", a.Duration.Round(time.Millisecond))
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// traceKeeper is a span processor that keeps the spans of the requests in
// flight and, as each request's server span ends, the sample so far: its
// memory is bounded by the requests in flight, whatever the run's length.
type traceKeeper struct {
	tp *sdktrace.TracerProvider

	mu     sync.Mutex
	open   map[trace.TraceID][]sdktrace.ReadOnlySpan // client spans of requests in flight
	best   []sdktrace.ReadOnlySpan                   // the sample's spans, server span first
	bestN  int
	bestAt time.Time
}

// newTraceKeeper returns a keeper with its tracer provider (every trace
// sampled, spans handed over synchronously).
func newTraceKeeper() *traceKeeper {
	k := &traceKeeper{open: map[trace.TraceID][]sdktrace.ReadOnlySpan{}}
	k.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(k), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	return k
}

// provider is the tracer provider to give the gateway: nil when k is nil
// (no traces).
func (k *traceKeeper) provider() trace.TracerProvider {
	if k == nil {
		return nil
	}
	return k.tp
}

func (k *traceKeeper) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// maxOpenSpans bounds the client spans held for requests in flight (a
// request whose server span never ends, cut by the end of the run, leaves
// its spans behind).
const maxOpenSpans = 100_000

func (k *traceKeeper) OnEnd(s sdktrace.ReadOnlySpan) {
	id := s.SpanContext().TraceID()
	k.mu.Lock()
	defer k.mu.Unlock()
	if s.SpanKind() != trace.SpanKindServer {
		if len(k.open) < maxOpenSpans {
			k.open[id] = append(k.open[id], s)
		}
		return
	}
	clients := k.open[id]
	delete(k.open, id)
	if n := len(clients); n > k.bestN || (n == k.bestN && n > 0 && s.StartTime().Before(k.bestAt)) {
		k.best, k.bestN, k.bestAt = append([]sdktrace.ReadOnlySpan{s}, clients...), n, s.StartTime()
	}
}

func (k *traceKeeper) Shutdown(context.Context) error   { return nil }
func (k *traceKeeper) ForceFlush(context.Context) error { return nil }

// sample returns the sample trace; nil when k is nil or no request
// reached an upstream.
func (k *traceKeeper) sample() *TraceSample {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.best) == 0 {
		return nil
	}
	srv := k.best[0]
	attrs := attrMap(srv.Attributes())
	t := &TraceSample{
		TraceID:   srv.SpanContext().TraceID().String(),
		RequestID: attrs[string(tracing.RequestID)].AsString(),
		Route:     attrs["gen_ai.request.model"].AsString(),
		Status:    int(attrs["http.response.status_code"].AsInt64()),
		Target:    attrs[string(tracing.Target)].AsString(),
		Tier:      attrs[string(tracing.Tier)].AsString(),
		Duration:  srv.EndTime().Sub(srv.StartTime()),
	}
	if srv.Status().Code == codes.Error {
		t.Error = attrs["error.type"].AsString()
	}
	for _, e := range srv.Events() {
		ev := e.Name
		if v, ok := attrMap(e.Attributes)[string(tracing.Target)]; ok {
			ev += " " + v.AsString()
		}
		t.Events = append(t.Events, ev)
	}
	clients := slices.Clone(k.best[1:])
	slices.SortFunc(clients, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	for _, c := range clients {
		a := attrMap(c.Attributes())
		t.Attempts = append(t.Attempts, TraceAttempt{
			Attempt:      int(a[string(tracing.Attempt)].AsInt64()),
			Target:       a[string(tracing.Target)].AsString(),
			Tier:         a[string(tracing.Tier)].AsString(),
			Reason:       a[string(tracing.Reason)].AsString(),
			Continuation: a[string(tracing.Continuation)].AsString(),
			Outcome:      a[string(tracing.Outcome)].AsString(),
			Status:       int(a["http.response.status_code"].AsInt64()),
			Start:        c.StartTime().Sub(srv.StartTime()),
			Duration:     c.EndTime().Sub(c.StartTime()),
			OutputTokens: int(a["gen_ai.usage.output_tokens"].AsInt64()),
		})
	}
	return t
}

func attrMap(kvs []attribute.KeyValue) map[string]attribute.Value {
	m := make(map[string]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}
