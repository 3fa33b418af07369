package tracing

import (
	"cmp"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

// ScopeName is the instrumentation scope of the gateway's spans.
const ScopeName = "github.com/brownout-dev/brownout/gateway"

// maxAttrLen bounds string attributes that come from a client (the model
// it asked for): a span is not a place to store a megabyte.
const maxAttrLen = 256

// Redactor scrubs credentials from text (the gateway's redactor): every
// error message that reaches a span goes through it.
type Redactor interface {
	String(s string) string
}

// Tracer makes the gateway's spans. A nil *Tracer is tracing turned off:
// every method is a no-op, Handler returns its handler unchanged, and the
// request path does no tracing work at all.
type Tracer struct {
	tr   trace.Tracer
	prop propagation.TextMapPropagator
}

// New returns a Tracer drawing spans from tp (nil tp: nil, tracing off).
// Trace context travels as W3C traceparent/tracestate and baggage headers.
func New(tp trace.TracerProvider) *Tracer {
	if tp == nil {
		return nil
	}
	return &Tracer{
		tr:   tp.Tracer(ScopeName),
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
}

type requestKey struct{}

// Handler wraps an inbound API's handler: each request gets a server span,
// the child of the trace context its headers carry (traceparent), named by
// pattern ("POST /v1/chat/completions") and ended with the response's
// status once next returns. format is the API's wire format
// (llm.Format). On a nil Tracer, Handler returns next.
func (t *Tracer) Handler(pattern, format string, next http.HandlerFunc) http.HandlerFunc {
	if t == nil {
		return next
	}
	method, route, ok := strings.Cut(pattern, " ")
	if !ok {
		method, route = "", pattern
	}
	op := Operation(format)
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		attrs := []attribute.KeyValue{keyOperation.String(op), keyRoute.String(route), keyURLPath.String(clip(r.URL.Path))}
		if method != "" {
			attrs = append(attrs, keyMethod.String(method))
		}
		ctx, span := t.tr.Start(ctx, pattern, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		req := &Request{t: t, span: span}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				// The server recovers it and answers 500 (unless the
				// answer was under way): the span says so and re-panics.
				req.failed = true
				req.span.SetAttributes(keyErrorType.String("panic"))
				req.span.SetStatus(codes.Error, "panic serving the request")
				req.end(cmp.Or(sw.status, http.StatusInternalServerError))
				panic(v)
			}
			req.end(sw.status)
		}()
		next(sw, r.WithContext(context.WithValue(ctx, requestKey{}, req)))
	}
}

// statusWriter notes the response's status for the server span.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// FlushError flushes what was written (a stream's events) to the client.
func (s *statusWriter) FlushError() error {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return http.NewResponseController(s.ResponseWriter).Flush()
}

// Flush is FlushError for writers that look for an http.Flusher.
func (s *statusWriter) Flush() { _ = s.FlushError() }

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Request is the trace of one inbound request: its server span and the
// client span of the upstream attempt in flight. A nil *Request (tracing
// off, or a request Handler did not wrap) ignores every call. It is used by
// the request's goroutine only.
type Request struct {
	t       *Tracer
	span    trace.Span
	attempt trace.Span // the client span of the attempt in flight
	redact  Redactor
	failed  bool

	sent       int    // attempts that reached Send
	prevTarget string // the target and outcome of the last attempt sent
	prevClass  policy.Class
}

// Begin returns the trace of the request Handler started in ctx, now that
// the gateway has decoded it (nil when t is nil or ctx has none). id is the
// request's X-Request-Id; redact scrubs error messages.
func (t *Tracer) Begin(ctx context.Context, id string, req *llm.Request, redact Redactor) *Request {
	if t == nil {
		return nil
	}
	r, _ := ctx.Value(requestKey{}).(*Request)
	if r == nil {
		return nil
	}
	r.redact = redact
	attrs := []attribute.KeyValue{RequestID.String(clip(id)), keyReqModel.String(clip(req.Model)), Stream.Bool(req.Stream)}
	if req.MaxTokens > 0 {
		attrs = append(attrs, keyMaxTokens.Int(req.MaxTokens))
	}
	r.span.SetAttributes(attrs...)
	return r
}

// Send starts the client span of an attempt about to be sent (hr, to the
// provider named provider, of kind kind — gateway.ProviderKind) as a child
// of the server span, and puts its trace context in hr's headers
// (traceparent). Retries, fail-overs and continuations are events of the
// server span and attributes of the client span.
func (r *Request) Send(d *policy.Decision, provider, kind string, hr *http.Request) {
	if r == nil {
		return
	}
	r.endAttempt("abandoned") // a Send without Observe (cannot happen)
	key := d.Target.Key()
	reason := "first"
	if r.sent > 0 {
		reason = "failover"
		if key == r.prevTarget {
			reason = "retry"
		}
	}
	r.sent++
	op := OpChat
	if kind == "gemini" {
		op = OpGenerateContent
	}
	attrs := []attribute.KeyValue{
		keyOperation.String(op),
		keyProvider.String(ProviderName(kind, provider)),
		keyReqModel.String(d.Target.Model),
		Provider.String(provider),
		Target.String(key),
		Tier.String(d.Tier),
		Attempt.Int(d.Try),
		Reason.String(reason),
	}
	if host, port := hostPort(hr); host != "" {
		attrs = append(attrs, keyServerAddr.String(host))
		if port > 0 {
			attrs = append(attrs, keyServerPort.Int(port))
		}
	}
	cont := ""
	switch {
	case d.Prefill:
		cont = "prefill"
	case d.Replay:
		cont = "replay"
	}
	if cont != "" {
		attrs = append(attrs, Continuation.String(cont))
	}
	if reason != "first" {
		ev := EventFailover
		if reason == "retry" {
			ev = EventRetry
		}
		r.span.AddEvent(ev, trace.WithAttributes(Attempt.Int(d.Try), Target.String(key), Tier.String(d.Tier),
			PreviousTarget.String(r.prevTarget), PreviousOutcome.String(string(r.prevClass))))
	}
	if cont != "" {
		r.span.AddEvent(EventContinuation, trace.WithAttributes(Attempt.Int(d.Try), Target.String(key), Continuation.String(cont)))
	}
	ctx, span := r.t.tr.Start(hr.Context(), op+" "+d.Target.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	r.t.prop.Inject(ctx, propagation.HeaderCarrier(hr.Header))
	r.attempt = span
}

// Answer is what an attempt's answer said of itself, for its client span.
type Answer struct {
	Model  string           // the model the upstream named
	Finish llm.FinishReason // "" when it did not finish
}

// Observe ends the attempt of d with its outcome: the client span gets the
// outcome class, usage and the answer (ok), or error.type and a redacted
// error. An attempt that was never sent (Send not called: a skipped
// target) is an event of the server span.
func (r *Request) Observe(d *policy.Decision, o *policy.Outcome, a Answer) {
	if r == nil {
		return
	}
	span := r.attempt
	if span == nil {
		attrs := []attribute.KeyValue{Attempt.Int(d.Try), Outcome.String(string(o.Class))}
		if d.Target != nil {
			attrs = append(attrs, Target.String(d.Target.Key()), Tier.String(d.Tier))
		}
		if o.Err != nil {
			attrs = append(attrs, Detail.String(r.scrub(o.Err.Message)))
		}
		r.span.AddEvent(EventSkipped, trace.WithAttributes(attrs...))
		return
	}
	r.attempt = nil
	r.prevTarget, r.prevClass = d.Target.Key(), o.Class
	attrs := []attribute.KeyValue{Outcome.String(string(o.Class))}
	if o.Status > 0 {
		attrs = append(attrs, keyStatus.Int(o.Status))
	}
	if o.TTFT > 0 {
		attrs = append(attrs, TTFT.Float64(ms(o.TTFT)))
	}
	if o.Usage.InputTokens > 0 {
		attrs = append(attrs, keyInTokens.Int(o.Usage.InputTokens))
	}
	if out := max(o.Usage.OutputTokens, o.OutputTokens); out > 0 {
		attrs = append(attrs, keyOutTokens.Int(out))
	}
	if o.Class == policy.OK {
		if a.Model != "" {
			attrs = append(attrs, keyRespModel.String(clip(a.Model)))
		}
		if a.Finish != "" {
			attrs = append(attrs, keyFinish.StringSlice([]string{string(a.Finish)}))
		}
		span.SetAttributes(attrs...)
		span.End()
		return
	}
	attrs = append(attrs, keyErrorType.String(string(o.Class)))
	span.SetAttributes(attrs...)
	if watchdog(o.Class) {
		span.AddEvent(EventWatchdog, trace.WithAttributes(Outcome.String(string(o.Class)), TTFT.Float64(ms(o.TTFT))))
	}
	msg := string(o.Class)
	if o.Err != nil && o.Err.Message != "" {
		msg = r.scrub(o.Err.Message)
	}
	span.SetStatus(codes.Error, msg)
	span.End()
}

// Wait notes a backoff before the next attempt, on target (nil: unknown).
func (r *Request) Wait(wait time.Duration, target *policy.Target) {
	if r == nil || wait <= 0 {
		return
	}
	attrs := []attribute.KeyValue{Wait.Float64(ms(wait))}
	if target != nil {
		attrs = append(attrs, Target.String(target.Key()))
	}
	r.span.AddEvent(EventBackoff, trace.WithAttributes(attrs...))
}

// Served is how a request was answered, for its server span.
type Served struct {
	Target   string // provider:model that produced the answer ("" none)
	Model    string // that target's model
	Tier     string // the degradation tier that served ("cache" for an exact hit)
	Attempts int
	Usage    llm.Usage
	Finish   llm.FinishReason
}

// Served records on the server span how the request was answered.
func (r *Request) Served(s Served) {
	if r == nil {
		return
	}
	attrs := []attribute.KeyValue{Attempts.Int(s.Attempts), Tier.String(s.Tier)}
	if s.Target != "" {
		attrs = append(attrs, Target.String(s.Target))
	}
	if s.Model != "" {
		attrs = append(attrs, keyRespModel.String(s.Model))
	}
	if s.Usage.InputTokens > 0 {
		attrs = append(attrs, keyInTokens.Int(s.Usage.InputTokens))
	}
	if s.Usage.OutputTokens > 0 {
		attrs = append(attrs, keyOutTokens.Int(s.Usage.OutputTokens))
	}
	if s.Finish != "" {
		attrs = append(attrs, keyFinish.StringSlice([]string{string(s.Finish)}))
	}
	r.span.SetAttributes(attrs...)
}

// Failed records on the server span that the request failed with e after
// attempts upstream attempts (an error response, or an in-band error that
// ended a stream).
func (r *Request) Failed(e *llm.Error, attempts int) {
	if r == nil {
		return
	}
	r.failed = true
	typ, msg := "error", "request failed"
	if e != nil {
		typ = string(e.Type)
		if e.Code != "" {
			typ = r.scrub(e.Code)
		}
		msg = r.scrub(e.Message)
	}
	r.span.SetAttributes(Attempts.Int(attempts), keyErrorType.String(clip(typ)))
	r.span.SetStatus(codes.Error, msg)
}

// end ends the server span (and an attempt left open) with the response's
// status.
func (r *Request) end(status int) {
	r.endAttempt("abandoned")
	if status == 0 {
		status = http.StatusOK // nothing written: net/http answers 200
	}
	r.span.SetAttributes(keyStatus.Int(status))
	if status >= 500 && !r.failed {
		r.span.SetAttributes(keyErrorType.String(strconv.Itoa(status)))
		r.span.SetStatus(codes.Error, "")
	}
	r.span.End()
}

// endAttempt ends a client span still open with an error.
func (r *Request) endAttempt(why string) {
	if r.attempt == nil {
		return
	}
	r.attempt.SetAttributes(keyErrorType.String(why))
	r.attempt.SetStatus(codes.Error, why)
	r.attempt.End()
	r.attempt = nil
}

func (r *Request) scrub(s string) string {
	if r.redact != nil {
		s = r.redact.String(s)
	}
	return clip(s)
}

// watchdog reports whether c is a verdict of the stream watchdog.
func watchdog(c policy.Class) bool {
	switch c {
	case policy.TimeoutTTFT, policy.Stall, policy.TokenRateFloor, policy.TimeoutTotal:
		return true
	}
	return false
}

func hostPort(hr *http.Request) (string, int) {
	if hr.URL == nil {
		return "", 0
	}
	host, port, err := net.SplitHostPort(hr.URL.Host)
	if err != nil {
		host = hr.URL.Host
		switch hr.URL.Scheme {
		case "https":
			return host, 443
		case "http":
			return host, 80
		}
		return host, 0
	}
	p, _ := strconv.Atoi(port)
	return host, p
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func clip(s string) string {
	if len(s) > maxAttrLen {
		return strings.ToValidUTF8(s[:maxAttrLen], "")
	}
	return s
}
