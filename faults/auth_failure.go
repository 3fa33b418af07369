package faults

import "github.com/brownout-dev/brownout/llm"

// AuthFailure answers 401 as a provider does for an expired or revoked key
// (OpenAI invalid_api_key, Anthropic authentication_error, Gemini
// UNAUTHENTICATED).
type AuthFailure struct {
	Message string
}

// Apply turns the plan into the 401.
func (f AuthFailure) Apply(p *Plan, e *Env) {
	p.SetError(ProviderError(e.Format, 401, llm.ErrAuthentication, f.Message))
}

func buildAuthFailure(s *Spec) Fault { return AuthFailure{Message: s.Message} }
