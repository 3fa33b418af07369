package faults

import (
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
)

// ContextLength answers 400 context_length_exceeded. With Window set it
// applies only to requests whose prompt tokens plus max_tokens exceed it
// (a model that shrank its window); with Window 0, to every selected request.
type ContextLength struct {
	Window  int
	Message string
}

// Matches reports whether the request overflows Window.
func (f ContextLength) Matches(e *Env) bool {
	if f.Window == 0 {
		return true
	}
	need := e.PromptTokens
	if e.Request != nil {
		need += e.Request.MaxTokens
	}
	return need > f.Window
}

// Apply turns the plan into the 400.
func (f ContextLength) Apply(p *Plan, e *Env) {
	p.SetError(ContextLengthError(e.Format, f.Window, e.PromptTokens, f.Message))
}

// ContextLengthError is the provider-shaped error for a prompt of prompt
// tokens that does not fit a window of window tokens.
func ContextLengthError(f llm.Format, window, prompt int, msg string) *llm.Error {
	if window == 0 {
		window = max(prompt-1, 1)
	}
	if msg == "" {
		msg = codecs.Wording(f).ContextLengthText(window, prompt)
	}
	e := ProviderError(f, 400, llm.ErrContextLength, msg)
	e.Param = "messages"
	return e
}

func checkContextLength(s *Spec) error {
	if s.Window < 0 {
		return fieldErr("window", "must not be negative")
	}
	return nil
}

func buildContextLength(s *Spec) Fault { return ContextLength{Window: s.Window, Message: s.Message} }
