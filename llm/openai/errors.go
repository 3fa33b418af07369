package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/llm"
)

// Codes and types the OpenAI API sends, as seen in its error bodies.
const (
	codeContextLength = "context_length_exceeded"
	codeRateLimit     = "rate_limit_exceeded"
	codeInvalidAPIKey = "invalid_api_key"
	codeModelNotFound = "model_not_found"
	codeContentFilter = "content_filter"
	codeContentPolicy = "content_policy_violation"
	// OpenAI sends no code for these; brownout adds one so that an in-band
	// stream error, which has no HTTP status, keeps its class.
	codeOverloaded     = "overloaded"
	codeTimeout        = "timeout"
	typeInvalidRequest = "invalid_request_error"
	typeServer         = "server_error"
	typeForbidden      = "request_forbidden"
)

// openAITypes are the error types OpenAI itself sends; a ProviderType from
// another format (Anthropic's "overloaded_error") is not written into an
// OpenAI body.
var openAITypes = map[string]bool{
	typeInvalidRequest: true, typeServer: true, typeForbidden: true,
	"requests": true, "tokens": true, "insufficient_quota": true,
}

type wireError struct {
	Message string  `json:"message"`
	Type    *string `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// EncodeError writes {"error":{"message","type","param","code"}} the way
// OpenAI does and returns the status to send it with. The provider's own type
// (e.ProviderType, when it is one OpenAI sends) and e.Code win when set;
// otherwise the type and code are
// those OpenAI uses for the normalized class: 429 is type "requests", code
// "rate_limit_exceeded"; 403 is type "request_forbidden"; an exceeded context is invalid_request_error with
// code "context_length_exceeded"; overload is a 503 server_error (OpenAI has
// no 529) with code "overloaded".
func (Codec) EncodeError(e *llm.Error) (int, []byte) {
	status := e.Status
	typ, code := typeInvalidRequest, e.Code
	switch e.Type {
	case llm.ErrInvalidRequest:
	case llm.ErrContextLength:
		code = def(code, codeContextLength)
	case llm.ErrContentFilter:
		code = def(code, codeContentFilter)
	case llm.ErrAuthentication:
		code = def(code, codeInvalidAPIKey)
	case llm.ErrPermission:
		typ = typeForbidden
	case llm.ErrNotFound:
		code = def(code, codeModelNotFound)
	case llm.ErrRateLimit:
		typ, code = "requests", def(code, codeRateLimit)
		if code == "insufficient_quota" {
			typ = code
		}
	case llm.ErrOverloaded:
		typ, code = typeServer, def(code, codeOverloaded)
		if status == 0 || status == 529 {
			status = 503
		}
	case llm.ErrTimeout:
		typ, code = typeServer, def(code, codeTimeout)
	default:
		typ = typeServer
	}
	if openAITypes[e.ProviderType] {
		typ = e.ProviderType
	}
	if status == 0 {
		status = llm.StatusFor(e.Type)
	}
	if status == 529 { // not an OpenAI status
		status = 503
	}
	we := wireError{Message: e.Message, Type: &typ}
	if e.Param != "" {
		we.Param = &e.Param
	}
	if code != "" {
		we.Code = &code
	}
	body, _ := marshal(struct {
		Error wireError `json:"error"`
	}{we})
	return status, body
}

func def(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// DecodeError reads a non-2xx response (or an in-band stream error, with
// status 0 or 200) into an *llm.Error. h may be nil. The Retry-After-Ms and
// Retry-After headers (seconds or an HTTP date) set RetryAfter.
func (c Codec) DecodeError(status int, h llm.Header, body []byte) *llm.Error {
	e := &llm.Error{Status: status}
	var w struct {
		Error json.RawMessage `json:"error"`
	}
	var we struct {
		Message string          `json:"message"`
		Type    json.RawMessage `json:"type"`
		Param   json.RawMessage `json:"param"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(body, &w) == nil && !isNull(w.Error) {
		if json.Unmarshal(w.Error, &we) != nil {
			// Some servers send "error": "message".
			var s string
			_ = json.Unmarshal(w.Error, &s)
			we.Message = s
		}
		e.Message = we.Message
		e.ProviderType = scalar(we.Type)
		e.Param = scalar(we.Param)
		e.Code = scalar(we.Code)
	} else {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 512 {
			e.Message = e.Message[:512]
		}
	}
	if e.Message == "" {
		e.Message = "status " + strconv.Itoa(status)
	}
	e.Type = classify(status, e.ProviderType, e.Code, e.Message)
	if status == 0 || status == 200 {
		e.Status = llm.StatusFor(e.Type)
		if e.Type == llm.ErrOverloaded {
			e.Status = 503
		}
	}
	if h != nil {
		e.RetryAfter = retryAfter(h, c.now())
	}
	return e
}

// scalar returns a JSON string's value, a number's text, or "" for null.
func scalar(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

func classify(status int, typ, code, msg string) llm.ErrorType {
	switch code {
	case codeContextLength:
		return llm.ErrContextLength
	case codeContentFilter, codeContentPolicy:
		return llm.ErrContentFilter
	case codeRateLimit, "insufficient_quota":
		return llm.ErrRateLimit
	case codeInvalidAPIKey:
		return llm.ErrAuthentication
	case codeModelNotFound:
		return llm.ErrNotFound
	case codeOverloaded:
		return llm.ErrOverloaded
	case codeTimeout:
		return llm.ErrTimeout
	}
	switch typ {
	case "requests", "tokens", "insufficient_quota", "rate_limit_error":
		return llm.ErrRateLimit
	case "authentication_error":
		return llm.ErrAuthentication
	case "permission_error", typeForbidden:
		return llm.ErrPermission
	case "not_found_error":
		return llm.ErrNotFound
	case "overloaded_error":
		return llm.ErrOverloaded
	}
	if strings.Contains(msg, "maximum context length") {
		return llm.ErrContextLength
	}
	if status == 0 || status == 200 {
		if typ == typeServer || typ == "" {
			return llm.ErrServer
		}
		return llm.ErrInvalidRequest
	}
	return llm.TypeForStatus(status)
}

// retryAfter reads retry-after-ms, then Retry-After (seconds or HTTP date).
func retryAfter(h llm.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	for _, layout := range []string{time.RFC1123, time.RFC1123Z, time.RFC850, time.ANSIC} {
		if t, err := time.Parse(layout, v); err == nil {
			if d := t.Sub(now); d > 0 {
				return d.Round(time.Second)
			}
			return 0
		}
	}
	return 0
}
