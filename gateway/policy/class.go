package policy

import "github.com/brownout-dev/brownout/llm"

// Class is the outcome class of one attempt. It decides what happens next
// (retry on the same target, fail over, or stop) and whether the outcome is
// held against the target's breaker and health.
type Class string

// Outcome classes.
const (
	// OK: the attempt succeeded; the request is served.
	OK Class = "ok"
	// RateLimited (429): retried on the same target (after Retry-After, up to
	// its cap) and failed over, per the target's status code lists.
	RateLimited Class = "rate_limited"
	// Overloaded (503, 529): like RateLimited.
	Overloaded Class = "overloaded"
	// ServerError (5xx): retried and failed over per the status code lists.
	ServerError Class = "server_error"
	// ConnectError: the connection could not be made; retried, then failed over.
	ConnectError Class = "connect_error"
	// Reset: the connection was reset before an answer; retried, then failed over.
	Reset Class = "reset"
	// TimeoutTTFT: no first token in time. Fails over (a slow target stays slow).
	TimeoutTTFT Class = "timeout_ttft"
	// Stall: the stream went idle too long. Fails over.
	Stall Class = "stall"
	// TokenRateFloor: the stream was slower than the floor. Fails over.
	TokenRateFloor Class = "token_rate_floor"
	// CutMidStream: the stream ended without its end marker. Fails over.
	CutMidStream Class = "cut_mid_stream"
	// MalformedStream: a chunk did not parse. Fails over.
	MalformedStream Class = "malformed_stream"
	// TimeoutTotal: the attempt's total deadline passed. Fails over.
	TimeoutTotal Class = "timeout_total"
	// Auth (401, 403, and 404 model-not-found for this key): never retried on
	// the same key; fails over.
	Auth Class = "auth"
	// BadRequestParam (400): fails over only to a target that may accept the
	// request: another model, or one that drops the rejected parameter.
	// Not held against the target.
	BadRequestParam Class = "bad_request_param"
	// ContextLength: the prompt is too long for this model. Never resent to
	// the same model; fails over to a larger context window. Not held against
	// the target.
	ContextLength Class = "context_length"
	// ContentFilter: the provider refused. Not retried; its error is returned
	// as is unless the route sets FallbackOnContentFilter. Not held against
	// the target.
	ContentFilter Class = "content_filter"
	// ClientCanceled: the client went away. Not retried, not held against
	// the target.
	ClientCanceled Class = "client_canceled"
	// Shutdown: the gateway cut the attempt because it is stopping (its
	// drain deadline passed). Not retried, not held against the target;
	// the request ends with the gateway's 503 shutting_down (Outcome.Err).
	Shutdown Class = "shutdown"
	// Truncated: an eval found the answer cut short (finish length at a
	// suspicious count). Fails over; counts for passive health, not the breaker.
	Truncated Class = "truncated"
	// InvalidOutput: an eval rejected the answer (bad JSON, empty tool
	// arguments). Fails over; counts for passive health, not the breaker.
	InvalidOutput Class = "invalid_output"
	// ProtocolError: the upstream's answer is not one a client can take — a
	// 101 Switching Protocols or other 1xx final status, a redirect (3xx,
	// never followed), a status outside 100–599, or bytes that are not a
	// valid HTTP answer (a header past the size limit, a flood of 1xx
	// answers, garbage). Not retried on the same target (it answers the
	// same way); fails over; held against the breaker and health. The
	// upstream's answer is never forwarded: the client's error is a 502.
	ProtocolError Class = "protocol_error"
	// UpstreamCanceled (499): the upstream, or a proxy in front of it,
	// reports the request closed while the client is still waiting — the
	// gateway did not cancel it. Retried on the same target (like Reset),
	// then failed over; held against the breaker and health. The client's
	// error is a 502: a 499 would claim the client went away.
	UpstreamCanceled Class = "upstream_canceled"
	// Rejected: any other 4xx (402, 405, 406, 409, 410, 411, 412, 415, 418,
	// 421, 423, 424, 425, 426, 428, 431, 451, …): the target refused for its
	// own reasons (billing, method, conflict, version, policy), not the
	// request's content or size. Not retried on the same target; fails over
	// (another account or provider may take it); held against the breaker
	// and health.
	Rejected Class = "rejected"
	// Skipped: the caller did not send the request to this target, because
	// the target's wire format cannot express a feature the request uses
	// (Outcome.Err names it: Param the feature, Message the reason; the
	// attempt.end event carries the message as its Reason). Nothing reached
	// the target: not held against it, not counted as an attempt (the
	// attempt cap, Attempts); the request moves on to another target, and
	// when none is left the client gets Err.
	Skipped Class = "skipped"
	// CacheMiss is what the caller observes after a ServeCached decision
	// when it has no cached answer; OK means it served one.
	CacheMiss Class = "cache_miss"
)

// Classes lists every attempt outcome class (CacheMiss excluded).
var Classes = []Class{
	OK, RateLimited, Overloaded, ServerError, ConnectError, Reset, TimeoutTTFT,
	Stall, TokenRateFloor, CutMidStream, MalformedStream, TimeoutTotal, Auth,
	BadRequestParam, ContextLength, ContentFilter, ClientCanceled, Truncated,
	InvalidOutput, ProtocolError, UpstreamCanceled, Rejected, Skipped, Shutdown,
}

// Classify returns the class of an HTTP error answer from its status and,
// when known, the normalized error type (which wins for 400s: a context
// length or content filter error is a 400 too). Status 0 or 2xx is OK.
//
// Every status has an explicit class:
//
//	0, 2xx             ok (server_error or bad_request_param by type: an in-band error)
//	1xx, 3xx, ≥600     protocol_error
//	400, 422           bad_request_param
//	401, 403, 404      auth
//	408, 504           timeout_total
//	413                context_length
//	429                rate_limited
//	499                upstream_canceled
//	other 4xx          rejected
//	503, 529           overloaded
//	other 5xx          server_error (retried and failed over per the status lists)
func Classify(status int, t llm.ErrorType) Class {
	if status > 0 && (status < 200 || (status >= 300 && status < 400) || status >= 600) {
		// Whatever its body says, such an answer is not an error answer.
		return ProtocolError
	}
	switch t {
	case llm.ErrContextLength:
		return ContextLength
	case llm.ErrContentFilter:
		return ContentFilter
	case llm.ErrAuthentication, llm.ErrPermission:
		return Auth
	case llm.ErrRateLimit:
		return RateLimited
	case llm.ErrOverloaded:
		if status == 0 || status >= 500 {
			return Overloaded
		}
	case llm.ErrTimeout:
		if status == 0 {
			return TimeoutTotal
		}
	}
	switch {
	case status == 0 || (status >= 200 && status < 300):
		if t == llm.ErrServer {
			return ServerError
		}
		if t == llm.ErrInvalidRequest {
			return BadRequestParam
		}
		return OK
	case status == 400 || status == 422:
		return BadRequestParam
	case status == 401 || status == 403 || status == 404:
		return Auth
	case status == 408 || status == 504:
		return TimeoutTotal
	case status == 429:
		return RateLimited
	case status == 413:
		return ContextLength
	case status == 499:
		return UpstreamCanceled
	case status == 503 || status == 529:
		return Overloaded
	case status >= 500:
		return ServerError
	default: // the other 4xx
		return Rejected
	}
}

// class properties.
type classInfo struct {
	// breaker: counted by the breaker (hard error or timeout).
	breaker bool
	// health: counted by passive health.
	health bool
	// ignore: neither success nor failure for the target.
	ignore bool
	// retrySame: may be retried on the same target (status classes consult
	// the target's OnStatusCodes instead).
	retrySame bool
	// byStatus: retry and fail-over follow the target's status code lists.
	byStatus bool
	// failover: may move to another target (when not byStatus).
	failover bool
}

func (c Class) info() classInfo {
	if c == OK { // most outcomes: one comparison, not the switch's search
		return classInfo{}
	}
	switch c {
	case OK:
		return classInfo{}
	case RateLimited, Overloaded, ServerError:
		return classInfo{breaker: true, health: true, byStatus: true, retrySame: true, failover: true}
	case ConnectError, Reset, UpstreamCanceled:
		return classInfo{breaker: true, health: true, retrySame: true, failover: true}
	case TimeoutTTFT, Stall, TokenRateFloor, CutMidStream, MalformedStream, TimeoutTotal:
		return classInfo{breaker: true, health: true, failover: true}
	case Auth, ProtocolError, Rejected:
		return classInfo{breaker: true, health: true, failover: true}
	case BadRequestParam, ContextLength, ContentFilter, Skipped:
		return classInfo{ignore: true, failover: true}
	case ClientCanceled, Shutdown, CacheMiss:
		return classInfo{ignore: true}
	case Truncated, InvalidOutput:
		return classInfo{health: true, failover: true}
	default: // unknown classes are treated as server errors
		return classInfo{breaker: true, health: true, failover: true}
	}
}

// Failure reports whether the class counts against the target's breaker.
func (c Class) Failure() bool { return c.info().breaker }
