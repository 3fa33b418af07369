package faults

import (
	"time"

	"github.com/brownout-dev/brownout/llm"
)

// HTTPError answers with a provider-shaped error: status (default 500), the
// provider's usual body for it, and Retry-After when set. With After, a
// streamed answer starts normally and the error arrives in-band after that
// many tokens (as Anthropic sends overloaded_error mid-stream); a request
// that does not stream gets the error status.
type HTTPError struct {
	Status     int
	Type       llm.ErrorType // default from the status
	Message    string        // default: the provider's usual message
	RetryAfter time.Duration
	After      int // -1: before the headers
}

// Apply turns the plan into the error.
func (f HTTPError) Apply(p *Plan, e *Env) {
	t := f.Type
	if t == "" {
		t = llm.TypeForStatus(f.Status)
	}
	err := ProviderError(e.Format, f.Status, t, f.Message)
	err.RetryAfter = f.RetryAfter
	if f.After >= 0 && p.Stream {
		p.InBandErr = err
		p.InBandAfter = min(f.After, len(p.Chunks))
		return
	}
	p.SetError(err)
}

func checkHTTPError(s *Spec) error {
	if s.Status != 0 && (s.Status < 400 || s.Status > 599) {
		return fieldErr("status", "must be an error status between 400 and 599, got %d", s.Status)
	}
	return nil
}

func buildHTTPError(s *Spec) Fault {
	st := s.Status
	if st == 0 {
		st = 500
	}
	return HTTPError{Status: st, Type: s.ErrorType, Message: s.Message, RetryAfter: s.RetryAfter.D(), After: intOr(s.After, -1)}
}
