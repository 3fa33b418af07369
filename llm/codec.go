package llm

import (
	"fmt"
	"io"
	"time"
)

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// Header is the read side of an HTTP header (http.Header satisfies it). The llm
// packages take it instead of http.Header so that the decision core, which uses
// these types, never links net/http.
type Header interface {
	Get(key string) string
}

// Codec is one wire format: requests, responses, errors and streams, both ways.
// llm/openai, llm/anthropic and llm/gemini each export one.
type Codec interface {
	Format() Format
	// Wording is how the format's provider words its errors.
	Wording

	// DecodeRequest parses a request body. A malformed body is an *Error with
	// Status 400 whose Param names the offending field.
	DecodeRequest(body []byte) (*Request, error)
	// EncodeRequest writes a request. A feature the format cannot express is an
	// *UnsupportedError, never a silent drop.
	EncodeRequest(req *Request) ([]byte, error)

	DecodeResponse(body []byte) (*Response, error)
	EncodeResponse(resp *Response) ([]byte, error)

	// EncodeError writes the provider-shaped error body and returns the HTTP
	// status to send it with.
	EncodeError(e *Error) (status int, body []byte)
	// DecodeError reads a non-2xx response into an *Error, Retry-After included.
	DecodeError(status int, h Header, body []byte) *Error

	// NewStreamEncoder returns an encoder writing server-sent events to w.
	NewStreamEncoder(w io.Writer) StreamEncoder
	// NewStreamDecoder returns a decoder reading server-sent events from r.
	NewStreamDecoder(r io.Reader) StreamDecoder
}

// Wording is how a provider words the errors it sends. Each codec supplies
// its provider's, so that whatever speaks a format (the mocks, fault
// injection) says what the real API says.
type Wording interface {
	// ErrorText returns the code ("" when the provider sends none) and the
	// message the provider sends for an error of type t.
	ErrorText(t ErrorType) (code, message string)
	// ContextLengthText is the message for a prompt of prompt tokens that
	// does not fit a window of window tokens.
	ContextLengthText(window, prompt int) string
	// UnsupportedParamText returns the code and message rejecting the
	// request parameter param.
	UnsupportedParamText(param string) (code, message string)
	// ModelNotFoundText is the message for a model the provider does not
	// serve.
	ModelNotFoundText(model string) string
	// RateLimitText is the message of a 429 for a limit ("rpm" or "tpm",
	// requests or tokens per minute; "concurrency") that frees up after wait.
	RateLimitText(limit string, wait time.Duration) string
}

// StreamEncoder writes normalized stream events in a wire format.
type StreamEncoder interface {
	// Encode writes one event. It does not flush; callers flush per event.
	Encode(ev StreamEvent) error
	// Close writes the format's end-of-stream marker (OpenAI "[DONE]",
	// Anthropic message_stop) if the stream finished cleanly. It must not be
	// called for a stream that was cut: a cut stream has no end marker.
	Close() error
}

// StreamDecoder reads normalized stream events from a wire format.
type StreamDecoder interface {
	// Next returns the next event. It returns io.EOF after a clean end, and
	// io.ErrUnexpectedEOF when the stream ended without its end marker and
	// without a finish reason (a cut stream). A malformed event is a
	// *sse.EventError naming its index.
	Next() (StreamEvent, error)
}

// UnsupportedError says that a target format cannot express a feature of a
// request or response.
type UnsupportedError struct {
	Format  Format
	Feature string // the field or feature, e.g. "tool_choice.disable_parallel"
	Reason  string
}

func (e *UnsupportedError) Error() string {
	s := fmt.Sprintf("%s format cannot express %s", e.Format, e.Feature)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}
