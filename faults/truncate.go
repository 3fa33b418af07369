package faults

import "github.com/brownout-dev/brownout/llm"

// Truncate stops the answer at At tokens with finish reason length, as a
// max_tokens limit does. The default At is the largest power of two below the
// planned length, so a truncation always cuts something. Usage reports
// exactly At output tokens. An answer already shorter than At is untouched.
type Truncate struct {
	At int // -1: the default
}

// Apply truncates the content and tool calls.
func (f Truncate) Apply(p *Plan, _ *Env) {
	n := len(p.Chunks)
	at := f.At
	if at < 0 {
		at = 1
		for at*2 < n {
			at *= 2
		}
	}
	if at >= n {
		return
	}
	p.TruncateAt(at)
	p.Response.FinishReason = llm.FinishLength
	p.Corrupted = true
}

func buildTruncate(s *Spec) Fault { return Truncate{At: intOr(s.At, -1)} }
