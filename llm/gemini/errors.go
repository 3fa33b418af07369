package gemini

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/llm"
)

// googleStatus is one google.rpc.Code as the Gemini API writes it in
// error.status, with its HTTP status and normalized class.
type googleStatus struct {
	code int
	typ  llm.ErrorType
}

var statuses = map[string]googleStatus{
	"INVALID_ARGUMENT":    {400, llm.ErrInvalidRequest},
	"FAILED_PRECONDITION": {400, llm.ErrInvalidRequest},
	"OUT_OF_RANGE":        {400, llm.ErrInvalidRequest},
	"UNAUTHENTICATED":     {401, llm.ErrAuthentication},
	"PERMISSION_DENIED":   {403, llm.ErrPermission},
	"NOT_FOUND":           {404, llm.ErrNotFound},
	"ABORTED":             {409, llm.ErrServer},
	"ALREADY_EXISTS":      {409, llm.ErrInvalidRequest},
	"RESOURCE_EXHAUSTED":  {429, llm.ErrRateLimit},
	"CANCELLED":           {499, llm.ErrServer},
	"INTERNAL":            {500, llm.ErrServer},
	"UNKNOWN":             {500, llm.ErrServer},
	"DATA_LOSS":           {500, llm.ErrServer},
	"UNIMPLEMENTED":       {501, llm.ErrInvalidRequest},
	"UNAVAILABLE":         {503, llm.ErrOverloaded},
	"DEADLINE_EXCEEDED":   {504, llm.ErrTimeout},
}

// statusFor is the Google status the Gemini API uses for a normalized class.
func statusFor(t llm.ErrorType) string {
	switch t {
	case llm.ErrInvalidRequest, llm.ErrContextLength, llm.ErrContentFilter:
		return "INVALID_ARGUMENT"
	case llm.ErrAuthentication:
		return "UNAUTHENTICATED"
	case llm.ErrPermission:
		return "PERMISSION_DENIED"
	case llm.ErrNotFound:
		return "NOT_FOUND"
	case llm.ErrRateLimit:
		return "RESOURCE_EXHAUSTED"
	case llm.ErrOverloaded:
		return "UNAVAILABLE"
	case llm.ErrTimeout:
		return "DEADLINE_EXCEEDED"
	default:
		return "INTERNAL"
	}
}

// statusForHTTP is the Google status conventionally meant by an HTTP status.
func statusForHTTP(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	default:
		return "INTERNAL"
	}
}

// Type URLs of the google.rpc error details brownout reads and writes.
const (
	typeErrorInfo  = "type.googleapis.com/google.rpc.ErrorInfo"
	typeRetryInfo  = "type.googleapis.com/google.rpc.RetryInfo"
	typeBadRequest = "type.googleapis.com/google.rpc.BadRequest"
)

// Google's messages for the failures brownout recognises by their text.
const contextLengthMessage = "The input token count exceeds the maximum number of tokens allowed."

type errorBody struct {
	Error *errorObject `json:"error"`
}

type errorObject struct {
	Code    int           `json:"code"`
	Message string        `json:"message"`
	Status  string        `json:"status"`
	Details []errorDetail `json:"details,omitempty"`
}

type errorDetail struct {
	Type string `json:"@type"`
	// ErrorInfo
	Reason string `json:"reason,omitempty"`
	Domain string `json:"domain,omitempty"`
	// RetryInfo
	RetryDelay string `json:"retryDelay,omitempty"`
	// BadRequest
	FieldViolations []fieldViolation `json:"fieldViolations,omitempty"`
}

type fieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

// errorFor builds a normalized error from a Google status.
func errorFor(code int, status, message string) *llm.Error {
	t := llm.TypeForStatus(code)
	if s, ok := statuses[status]; ok {
		t = s.typ
	}
	return &llm.Error{Status: code, Type: t, Message: message, ProviderType: status}
}

// EncodeError writes Google's error body, {"error":{"code","message","status",
// "details"}}. The status is e.ProviderType when it is a Google status
// ("RESOURCE_EXHAUSTED"), otherwise the one Gemini uses for e.Type (overloaded
// is 503 UNAVAILABLE, rate_limit 429 RESOURCE_EXHAUSTED, timeout 504
// DEADLINE_EXCEEDED); the HTTP status is that status's code, except that an
// error decoded from Gemini (ProviderType a Google status) keeps its Status. Code becomes an
// ErrorInfo reason, Param a BadRequest field violation and RetryAfter a
// RetryInfo retryDelay; the server should also send a Retry-After header.
func (Codec) EncodeError(e *llm.Error) (int, []byte) {
	if e == nil {
		e = &llm.Error{Type: llm.ErrServer, Message: "unknown error"}
	}
	status := e.ProviderType
	if _, ok := statuses[status]; !ok {
		switch e.Type {
		case "":
			status = statusForHTTP(e.Status)
		case llm.ErrServer:
			// Keep a 5xx's own status (ABORTED, CANCELLED) when it is a server error.
			status = statusForHTTP(e.Status)
			if statuses[status].typ != llm.ErrServer {
				status = "INTERNAL"
			}
		default:
			status = statusFor(e.Type)
		}
	}
	code := statuses[status].code
	if status == e.ProviderType && e.Status >= 400 && e.Status <= 599 {
		code = e.Status // a Gemini error passed through keeps its own code
	}
	msg := e.Message
	if msg == "" && e.Type == llm.ErrContextLength {
		msg = contextLengthMessage
	}
	obj := errorObject{Code: code, Message: msg, Status: status}
	if e.Code != "" {
		obj.Details = append(obj.Details, errorDetail{Type: typeErrorInfo, Reason: e.Code, Domain: "googleapis.com"})
	}
	if e.Param != "" {
		obj.Details = append(obj.Details, errorDetail{Type: typeBadRequest, FieldViolations: []fieldViolation{{Field: e.Param, Description: msg}}})
	}
	if e.RetryAfter > 0 {
		obj.Details = append(obj.Details, errorDetail{Type: typeRetryInfo, RetryDelay: formatDuration(e.RetryAfter)})
	}
	b, err := json.Marshal(errorBody{Error: &obj})
	if err != nil { // unreachable: every field is a string, int or slice of those
		return 500, []byte(`{"error":{"code":500,"message":"internal error","status":"INTERNAL"}}`)
	}
	return code, b
}

// DecodeError reads a non-2xx Gemini response. The class comes from
// error.status (falling back to the HTTP status), refined by what Google says
// in the message or details: a 400 with ErrorInfo reason API_KEY_INVALID is an
// authentication error, a 400 about the input token count a context_length
// error. RetryAfter comes from the Retry-After header (seconds) or else a
// RetryInfo detail. A body that is not Google's error shape keeps its text
// (at most 512 bytes) as the message.
func (Codec) DecodeError(status int, h llm.Header, body []byte) *llm.Error {
	var b errorBody
	var e *llm.Error
	if err := json.Unmarshal(body, &b); err == nil && b.Error != nil {
		e = fromErrorObject(status, b.Error)
	} else {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 512 {
			msg = strings.ToValidUTF8(msg[:512], "")
		}
		if msg == "" {
			msg = "http status " + strconv.Itoa(status)
		}
		e = &llm.Error{Status: status, Type: llm.TypeForStatus(status), Message: msg}
	}
	if h != nil {
		if s := strings.TrimSpace(h.Get("Retry-After")); s != "" {
			if secs, err := strconv.ParseFloat(s, 64); err == nil && secs >= 0 && secs < 1e9 {
				e.RetryAfter = time.Duration(secs * float64(time.Second))
			}
		}
	}
	return e
}

// fromErrorObject converts Google's error object; status is the HTTP status
// (0 takes the object's code).
func fromErrorObject(status int, o *errorObject) *llm.Error {
	if status == 0 {
		status = o.Code
	}
	if status < 100 || status > 599 {
		status = 0
	}
	st := o.Status
	if st == "" {
		st = statusForHTTP(status)
	}
	if s, ok := statuses[st]; ok && status == 0 {
		status = s.code
	}
	if status == 0 {
		status = 500
	}
	e := errorFor(status, st, o.Message)
	if _, ok := statuses[o.Status]; !ok && o.Status != "" {
		e.Type = llm.TypeForStatus(status)
	}
	for _, d := range o.Details {
		switch d.Type {
		case typeErrorInfo:
			if e.Code == "" {
				e.Code = d.Reason
			}
		case typeRetryInfo:
			if dur, ok := parseDuration(d.RetryDelay); ok {
				e.RetryAfter = dur
			}
		case typeBadRequest:
			if len(d.FieldViolations) > 0 && e.Param == "" {
				e.Param = d.FieldViolations[0].Field
			}
		}
	}
	if e.Type == llm.ErrInvalidRequest {
		switch {
		case e.Code == "API_KEY_INVALID":
			e.Type = llm.ErrAuthentication
		case strings.Contains(o.Message, "token count") && strings.Contains(o.Message, "exceeds the maximum"):
			e.Type = llm.ErrContextLength
		}
	}
	return e
}

// formatDuration writes a google.protobuf.Duration in its JSON form ("2s", "1.5s").
func formatDuration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// parseDuration reads a google.protobuf.Duration in its JSON form.
func parseDuration(s string) (time.Duration, bool) {
	n, ok := strings.CutSuffix(s, "s")
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil || f < 0 || f > 1e9 {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}
