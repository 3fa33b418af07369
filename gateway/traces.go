package gateway

import (
	"context"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/gateway/tracing"
	"github.com/brownout-dev/brownout/llm"
)

// tracesShutdown bounds the flush of the spans still buffered at Close.
const tracesShutdown = 5 * time.Second

// startTracing sets up the tracer: Options.TracerProvider when given,
// otherwise an OTLP exporter when the configuration or the environment
// turns tracing on (TracingConfig), otherwise none — s.tracer stays nil
// and the request path does no tracing work.
func (s *Server) startTracing(cfg *Config) error {
	if s.opts.TracerProvider != nil {
		s.tracer = tracing.New(s.opts.TracerProvider)
		return nil
	}
	tp, err := tracing.NewProvider(context.Background(), cfg.Tracing.settings())
	if err != nil || tp == nil {
		return err
	}
	s.tp = tp
	s.tracer = tracing.New(tp)
	s.log.Info("tracing on: spans are exported over OTLP")
	return nil
}

// stopTracing flushes and stops the exporter the server started.
func (s *Server) stopTracing() {
	if s.tp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tracesShutdown)
	defer cancel()
	if err := s.tp.Shutdown(ctx); err != nil {
		s.log.Warn("tracing: flushing spans at shutdown", "err", err)
	}
}

// traceAttempt ends the client span of attempt d with its outcome (tracing
// on only).
func (x *exchange) traceAttempt(d *policy.Decision, o *policy.Outcome) {
	a := tracing.Answer{Model: x.upModel, Finish: x.finish}
	if !x.req.Stream {
		a = tracing.Answer{}
		if x.resp != nil {
			a = tracing.Answer{Model: x.resp.Model, Finish: x.resp.FinishReason}
		}
	}
	x.tr.Observe(d, o, a)
	x.upModel = ""
}

// traceServed notes on the request's span how it was answered (tracing on
// only).
func (x *exchange) traceServed(target, tier string, attempts int) {
	s := tracing.Served{Target: target, Tier: tier, Attempts: attempts}
	if _, m, ok := strings.Cut(target, ":"); ok {
		s.Model = m
	}
	if x.req.Stream && x.committed {
		s.Usage, s.Finish = x.usage, x.finish
	} else if x.resp != nil {
		s.Usage, s.Finish = x.resp.Usage, x.resp.FinishReason
	}
	x.tr.Served(s)
}

// traceFailed notes on the request's span that it failed with e.
func (x *exchange) traceFailed(e *llm.Error) { x.tr.Failed(e, x.lc.Attempts()) }
