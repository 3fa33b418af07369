package tracing

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// The gateway's own attributes, next to the OpenTelemetry GenAI and HTTP
// semantic conventions (semconv v1.40: gen_ai.provider.name,
// gen_ai.operation.name, gen_ai.request.model, gen_ai.response.model,
// gen_ai.usage.input_tokens and output_tokens,
// gen_ai.response.finish_reasons, server.address, error.type).
const (
	// RequestID is the request's X-Request-Id (server span).
	RequestID = attribute.Key("brownout.request_id")
	// Stream: the client asked for a stream (server span).
	Stream = attribute.Key("brownout.stream")
	// Attempt numbers the upstream attempts of the request from 1 (client
	// spans, and the events of the server span).
	Attempt = attribute.Key("brownout.attempt")
	// Attempts is how many upstream attempts the request made (server span).
	Attempts = attribute.Key("brownout.attempts")
	// Target is the provider:model target of an attempt, or the one that
	// served the request (server span).
	Target = attribute.Key("brownout.target")
	// Provider is the provider's name in the gateway's configuration.
	Provider = attribute.Key("brownout.provider")
	// Tier is the degradation tier of the attempt's target, or the tier
	// that served (server span).
	Tier = attribute.Key("brownout.tier")
	// Outcome is the attempt's outcome class (policy.Class: ok,
	// rate_limited, cut_mid_stream, timeout_ttft, skipped, ...).
	Outcome = attribute.Key("brownout.outcome")
	// Reason says why an attempt was made: first, retry (the same target
	// again) or failover (another target).
	Reason = attribute.Key("brownout.attempt.reason")
	// Continuation is how an attempt continues an answer that already
	// partly reached the client: prefill (the partial answer is sent as an
	// assistant prefill) or replay (the request is replayed and the
	// repetition skipped).
	Continuation = attribute.Key("brownout.continuation")
	// PreviousTarget and PreviousOutcome name the attempt a retry or a
	// failover follows (events).
	PreviousTarget  = attribute.Key("brownout.previous.target")
	PreviousOutcome = attribute.Key("brownout.previous.outcome")
	// TTFT is an attempt's time to its first token (or answer), in
	// milliseconds.
	TTFT = attribute.Key("brownout.ttft_ms")
	// Wait is a backoff's length before the next attempt, in milliseconds.
	Wait = attribute.Key("brownout.wait_ms")
	// Detail is a redacted, human-readable reason (events).
	Detail = attribute.Key("brownout.detail")
)

// Span event names.
const (
	// EventRetry (server span): an attempt on the target the previous one
	// failed on.
	EventRetry = "brownout.retry"
	// EventFailover (server span): an attempt on another target after a
	// failure.
	EventFailover = "brownout.failover"
	// EventContinuation (server span): an attempt that continues a partial
	// answer (Continuation says how).
	EventContinuation = "brownout.continuation"
	// EventSkipped (server span): a target passed over without a request —
	// its format cannot express the request.
	EventSkipped = "brownout.skipped"
	// EventBackoff (server span): the gateway waits before the next attempt.
	EventBackoff = "brownout.backoff"
	// EventWatchdog (client span): the stream watchdog ended the attempt
	// (first-token deadline, idle stall, token-rate floor, total deadline).
	EventWatchdog = "brownout.watchdog"
)

// The semantic-convention keys used, spelled out once.
var (
	keyOperation  = semconv.GenAIOperationNameKey
	keyProvider   = semconv.GenAIProviderNameKey
	keyReqModel   = semconv.GenAIRequestModelKey
	keyRespModel  = semconv.GenAIResponseModelKey
	keyMaxTokens  = semconv.GenAIRequestMaxTokensKey
	keyInTokens   = semconv.GenAIUsageInputTokensKey
	keyOutTokens  = semconv.GenAIUsageOutputTokensKey
	keyFinish     = semconv.GenAIResponseFinishReasonsKey
	keyServerAddr = semconv.ServerAddressKey
	keyServerPort = semconv.ServerPortKey
	keyErrorType  = semconv.ErrorTypeKey
	keyMethod     = semconv.HTTPRequestMethodKey
	keyRoute      = semconv.HTTPRouteKey
	keyURLPath    = semconv.URLPathKey
	keyStatus     = semconv.HTTPResponseStatusCodeKey
)

// Operation names (gen_ai.operation.name).
const (
	OpChat            = "chat"
	OpGenerateContent = "generate_content"
)

// ProviderName is gen_ai.provider.name for a provider of a kind
// (gateway.ProviderKind): the semantic conventions' well-known value, or
// the configured name for an OpenAI-compatible server of unknown make.
func ProviderName(kind, name string) string {
	switch kind {
	case "openai":
		return "openai"
	case "anthropic":
		return "anthropic"
	case "gemini":
		return "gcp.gemini"
	case "azure":
		return "azure.ai.openai"
	}
	return name
}

// Operation is gen_ai.operation.name for a wire format (llm.Format):
// generate_content for Gemini's API, chat for the others.
func Operation(format string) string {
	if format == "gemini" {
		return OpGenerateContent
	}
	return OpChat
}
