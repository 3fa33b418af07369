package faults

import (
	"time"

	"github.com/brownout-dev/brownout/llm"
)

// HTTPError answers with a provider-shaped error: status (default 500), the
// provider's usual body for it, and Retry-After when set.
type HTTPError struct {
	Status     int
	Type       llm.ErrorType // default from the status
	Message    string        // default: the provider's usual message
	RetryAfter time.Duration
}

// Apply turns the plan into the error.
func (f HTTPError) Apply(p *Plan, e *Env) {
	t := f.Type
	if t == "" {
		t = llm.TypeForStatus(f.Status)
	}
	err := ProviderError(e.Format, f.Status, t, f.Message)
	err.RetryAfter = f.RetryAfter
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
	return HTTPError{Status: st, Type: s.ErrorType, Message: s.Message, RetryAfter: s.RetryAfter.D()}
}
