package anthropic

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/llm"
)

// Anthropic error types (the "type" of the error object) and the status each
// comes with.
var providerStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

// ErrorType returns the Anthropic error type for a normalized one. Context
// length and content filter errors are invalid_request_error, as upstream.
func ErrorType(t llm.ErrorType) string {
	switch t {
	case llm.ErrInvalidRequest, llm.ErrContextLength, llm.ErrContentFilter:
		return "invalid_request_error"
	case llm.ErrAuthentication:
		return "authentication_error"
	case llm.ErrPermission:
		return "permission_error"
	case llm.ErrNotFound:
		return "not_found_error"
	case llm.ErrRateLimit:
		return "rate_limit_error"
	case llm.ErrOverloaded:
		return "overloaded_error"
	case llm.ErrTimeout:
		return "timeout_error"
	}
	return "api_error"
}

// contextLengthPrefix is how the API words a prompt over the context window:
// "prompt is too long: 208310 tokens > 200000 maximum".
const contextLengthPrefix = "prompt is too long"

// normalType maps an Anthropic error type (and message) to the normalized
// type, falling back on the status for unknown types.
func normalType(providerType, message string, status int) llm.ErrorType {
	switch providerType {
	case "invalid_request_error", "request_too_large":
		if isContextLength(message) {
			return llm.ErrContextLength
		}
		return llm.ErrInvalidRequest
	case "authentication_error":
		return llm.ErrAuthentication
	case "permission_error", "billing_error":
		return llm.ErrPermission
	case "not_found_error":
		return llm.ErrNotFound
	case "rate_limit_error":
		return llm.ErrRateLimit
	case "overloaded_error":
		return llm.ErrOverloaded
	case "timeout_error":
		return llm.ErrTimeout
	case "api_error":
		return llm.ErrServer
	}
	if status == 0 {
		return llm.ErrServer
	}
	t := llm.TypeForStatus(status)
	if t == llm.ErrInvalidRequest && isContextLength(message) {
		return llm.ErrContextLength
	}
	return t
}

func isContextLength(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, contextLengthPrefix) ||
		strings.Contains(m, "exceed context limit") ||
		strings.Contains(m, "context window")
}

type wireErrorBody struct {
	Type  string    `json:"type"`
	Error wireError `json:"error"`
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Details *struct {
		ErrorCode string `json:"error_code"`
	} `json:"details,omitempty"`
}

// errorObject builds the error body for e.
func errorObject(e *llm.Error) wireErrorBody {
	typ := e.ProviderType
	if _, known := providerStatus[typ]; !known {
		typ = ErrorType(e.Type)
	}
	msg := e.Message
	if e.Type == llm.ErrContextLength && !strings.Contains(strings.ToLower(msg), contextLengthPrefix) {
		msg = contextLengthPrefix + ": " + msg
	}
	if e.Param != "" && e.Type == llm.ErrInvalidRequest && !strings.HasPrefix(msg, e.Param+":") {
		// The API names the field at the front of the message.
		msg = e.Param + ": " + msg
	}
	return wireErrorBody{Type: "error", Error: wireError{Type: typ, Message: msg}}
}

// EncodeError writes {"type":"error","error":{"type":...,"message":...}} and
// returns the status to send it with: e.Status when set, else the status of
// the Anthropic type (529 for overloaded_error). e.ProviderType is written
// back when it is an Anthropic type; otherwise the type comes from e.Type. A
// context-length error says "prompt is too long" as the API does; a request
// error with Param names the field at the front of its message.
func (Codec) EncodeError(e *llm.Error) (int, []byte) {
	w := errorObject(e)
	status := e.Status
	if status == 0 {
		status = providerStatus[w.Error.Type]
	}
	body, _ := marshal(w) // strings only: cannot fail
	return status, body
}

// DecodeError reads an error response. The type comes from the body's
// error.type (invalid_request_error with "prompt is too long" is
// llm.ErrContextLength), or from the status when the body is not an Anthropic
// error (a proxy's HTML page, say); error.details.error_code becomes Code.
// RetryAfter comes from retry-after-ms, then Retry-After (seconds, or an
// HTTP date taken relative to the Date header), then — for a 429 — the reset
// time of an exhausted anthropic-ratelimit-* limit relative to Date. h may be
// nil.
func (Codec) DecodeError(status int, h llm.Header, body []byte) *llm.Error {
	e := &llm.Error{Status: status}
	var w wireErrorBody
	if err := json.Unmarshal(body, &w); err == nil && w.Error.Type != "" {
		e.ProviderType = w.Error.Type
		e.Message = w.Error.Message
		if w.Error.Details != nil {
			e.Code = w.Error.Details.ErrorCode
		}
	} else {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 512 {
			e.Message = e.Message[:512]
		}
		if e.Message == "" {
			e.Message = "http status " + strconv.Itoa(status)
		}
	}
	e.Type = normalType(e.ProviderType, e.Message, status)
	if h != nil {
		e.RetryAfter = retryAfter(h, status)
	}
	return e
}

// retryAfter reads the server's retry hint from h.
func retryAfter(h llm.Header, status int) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	date, dateErr := time.Parse(time.RFC1123, h.Get("Date"))
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			if s < 0 || s > math.MaxInt64/float64(time.Second) {
				return 0
			}
			return time.Duration(s * float64(time.Second))
		}
		if t, err := time.Parse(time.RFC1123, v); err == nil && dateErr == nil {
			return max(0, t.Sub(date))
		}
	}
	if status != 429 || dateErr != nil {
		return 0
	}
	var wait time.Duration
	for _, l := range ParseRateLimits(h).all() {
		if l.Limit > 0 && l.Remaining == 0 && !l.Reset.IsZero() {
			wait = max(wait, l.Reset.Sub(date))
		}
	}
	return wait
}

// RetryAfterHeader formats d as a Retry-After value: whole seconds, rounded
// up, at least 1. It returns "" for d <= 0.
func RetryAfterHeader(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	s := int64((d + time.Second - 1) / time.Second)
	return strconv.FormatInt(s, 10)
}

// RateLimit is one limit from the anthropic-ratelimit-* response headers.
// Limit is 0 when the headers were absent.
type RateLimit struct {
	Limit     int64
	Remaining int64
	Reset     time.Time // when the limit is fully replenished
}

// RateLimits are the limits Anthropic reports on every response.
type RateLimits struct {
	Requests     RateLimit // anthropic-ratelimit-requests-*
	Tokens       RateLimit // anthropic-ratelimit-tokens-*
	InputTokens  RateLimit // anthropic-ratelimit-input-tokens-*
	OutputTokens RateLimit // anthropic-ratelimit-output-tokens-*
}

func (r RateLimits) all() []RateLimit {
	return []RateLimit{r.Requests, r.Tokens, r.InputTokens, r.OutputTokens}
}

// ParseRateLimits reads the anthropic-ratelimit-{requests,tokens,
// input-tokens,output-tokens}-{limit,remaining,reset} headers. Missing or
// malformed values are zero.
func ParseRateLimits(h llm.Header) RateLimits {
	one := func(kind string) RateLimit {
		p := "anthropic-ratelimit-" + kind + "-"
		var l RateLimit
		l.Limit, _ = strconv.ParseInt(h.Get(p+"limit"), 10, 64)
		l.Remaining, _ = strconv.ParseInt(h.Get(p+"remaining"), 10, 64)
		l.Reset, _ = time.Parse(time.RFC3339, h.Get(p+"reset"))
		return l
	}
	return RateLimits{
		Requests:     one("requests"),
		Tokens:       one("tokens"),
		InputTokens:  one("input-tokens"),
		OutputTokens: one("output-tokens"),
	}
}

// Headers returns the anthropic-ratelimit-* headers for r, for a server
// (such as a mock provider) to set; limits with Limit 0 are left out.
func (r RateLimits) Headers() map[string]string {
	h := map[string]string{}
	for _, k := range []struct {
		name string
		l    RateLimit
	}{{"requests", r.Requests}, {"tokens", r.Tokens}, {"input-tokens", r.InputTokens}, {"output-tokens", r.OutputTokens}} {
		if k.l.Limit == 0 {
			continue
		}
		p := "anthropic-ratelimit-" + k.name + "-"
		h[p+"limit"] = strconv.FormatInt(k.l.Limit, 10)
		h[p+"remaining"] = strconv.FormatInt(k.l.Remaining, 10)
		if !k.l.Reset.IsZero() {
			h[p+"reset"] = k.l.Reset.UTC().Format(time.RFC3339)
		}
	}
	return h
}
