package faults

import "github.com/brownout-dev/brownout/llm"

// DefaultRefusal is the refusal text when none is given.
const DefaultRefusal = "I'm sorry, but I can't help with that."

// Refusal replaces the answer with a refusal (and drops any tool calls); it
// still finishes with "stop", so it looks like a success.
type Refusal struct {
	Text string
}

// Apply replaces the content.
func (f Refusal) Apply(p *Plan, _ *Env) {
	p.Response.ToolCalls = nil
	p.SetContent(f.Text)
	p.Response.FinishReason = llm.FinishStop
	p.Corrupted = true
}

func buildRefusal(s *Spec) Fault {
	t := s.Text
	if t == "" {
		t = DefaultRefusal
	}
	return Refusal{Text: t}
}
