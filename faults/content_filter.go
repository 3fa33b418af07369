package faults

import "github.com/brownout-dev/brownout/llm"

// ContentFilter blocks a request. Stage "output" (default) stops the answer
// after After tokens (default 0) with finish reason content_filter; stage
// "prompt" answers 400 with the provider's content-filter error.
type ContentFilter struct {
	Prompt  bool
	After   int
	Message string
}

// Apply filters the prompt or the output.
func (f ContentFilter) Apply(p *Plan, e *Env) {
	if f.Prompt {
		p.SetError(ProviderError(e.Format, 400, llm.ErrContentFilter, f.Message))
		return
	}
	if f.After < len(p.Chunks) {
		p.TruncateAt(f.After)
	}
	p.Response.FinishReason = llm.FinishContentFilter
}

func checkContentFilter(s *Spec) error {
	if s.Stage != "" && s.Stage != "output" && s.Stage != "prompt" {
		return fieldErr("stage", "must be output or prompt, got %q", s.Stage)
	}
	if s.Stage == "prompt" && s.After != nil {
		return fieldErr("after", "applies only to stage output")
	}
	if s.Stage != "prompt" && s.Message != "" {
		return fieldErr("message", "applies only to stage prompt")
	}
	return nil
}

func buildContentFilter(s *Spec) Fault {
	return ContentFilter{Prompt: s.Stage == "prompt", After: intOr(s.After, 0), Message: s.Message}
}
