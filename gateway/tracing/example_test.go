package tracing_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/gateway/tracing"
	"github.com/brownout-dev/brownout/llm"
)

// Tracing one request that fails over: the handler the gateway wraps makes
// two attempts; the first is rate limited, the second serves.
func ExampleTracer_Handler() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	t := tracing.New(tp)

	primary := &policy.Target{Provider: "openai", Model: "gpt-4o"}
	fallback := &policy.Target{Provider: "anthropic", Model: "claude-sonnet"}
	h := t.Handler("POST /v1/chat/completions", "openai", func(w http.ResponseWriter, r *http.Request) {
		tr := t.Begin(r.Context(), "req-1", &llm.Request{Model: "chat"}, nil)
		for i, target := range []*policy.Target{primary, fallback} {
			d := &policy.Decision{Kind: policy.Send, Target: target, Try: i + 1, Tier: "primary"}
			up, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, "http://127.0.0.1:9/v1/chat/completions", nil)
			tr.Send(d, target.Provider, target.Provider, up)
			o := &policy.Outcome{Class: policy.OK, Status: 200}
			if i == 0 {
				o = &policy.Outcome{Class: policy.RateLimited, Status: 429}
			}
			tr.Observe(d, o, tracing.Answer{Model: target.Model, Finish: llm.FinishStop})
		}
		tr.Served(tracing.Served{Target: fallback.Key(), Model: fallback.Model, Tier: "primary", Attempts: 2})
		w.WriteHeader(http.StatusOK)
	})
	h(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader("{}")))

	for _, s := range exp.GetSpans() {
		var events []string
		for _, e := range s.Events {
			events = append(events, e.Name)
		}
		fmt.Println(s.SpanKind, s.Name, s.Status.Code, events)
	}
	// Output:
	// client chat gpt-4o Error []
	// client chat claude-sonnet Unset []
	// server POST /v1/chat/completions Unset [brownout.failover]
}
