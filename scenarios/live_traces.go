package scenarios

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/brownout-dev/brownout/gateway/tracing"
	"github.com/brownout-dev/brownout/scenarios/score"
)

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
func (k *traceKeeper) sample() *score.TraceSample {
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
	t := &score.TraceSample{
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
		t.Attempts = append(t.Attempts, score.TraceAttempt{
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
