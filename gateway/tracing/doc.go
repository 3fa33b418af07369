// Package tracing gives the gateway OpenTelemetry traces: a server span for
// every inbound request and a client span for every upstream attempt, with
// the attributes of the OpenTelemetry semantic conventions for generative AI
// (semconv v1.40: gen_ai.operation.name, gen_ai.provider.name,
// gen_ai.request.model, gen_ai.response.model, gen_ai.usage.input_tokens and
// gen_ai.usage.output_tokens, gen_ai.response.finish_reasons) and for HTTP
// (http.route, http.response.status_code, server.address, error.type).
//
// The story of a request is in its trace: each client span carries the
// attempt's number (brownout.attempt), why it was made
// (brownout.attempt.reason: first, retry or failover), its target and tier,
// whether it continues a partial answer (brownout.continuation: prefill or
// replay) and its outcome class (brownout.outcome, also error.type when it
// failed; a redacted error message is the span's status). The server span
// has an event for each retry, fail-over, continuation, backoff and skipped
// target, and ends with the target and tier that served, the attempts made
// and the usage. A watchdog verdict (first-token deadline, idle stall,
// token-rate floor, total deadline) is an event of the attempt's span.
//
// Trace context is W3C traceparent (and baggage): accepted from the inbound
// request, whose span becomes the parent, and sent to the upstream with the
// attempt's span as the parent.
//
// # Cost when off
//
// A nil *Tracer is tracing turned off: Handler returns the handler it was
// given, Begin returns a nil *Request, and every method of a nil *Request
// returns at once. The gateway holds a nil Tracer unless tracing is on, so
// the request path makes no tracer-provider call at all.
//
// # Export
//
// NewProvider builds a batching tracer provider with an OTLP exporter over
// HTTP (protobuf) or gRPC, configured by Settings and the standard OTEL_*
// environment variables (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, ...); Settings.Check reports the
// values the SDK would refuse or ignore, naming the field or the variable.
// Tracing is off unless Settings.Enabled or the environment names an OTLP
// endpoint.
package tracing
