package faults

// Cut closes the connection after After tokens (default: half of them): no
// finish reason, no usage, no end marker. A non-streamed body is cut short.
// An answer of fewer than After tokens is not cut (Plan.Cuts).
type Cut struct {
	After int // -1: half of the planned tokens
}

// Apply records where to cut.
func (f Cut) Apply(p *Plan, _ *Env) {
	n := f.After
	if n < 0 {
		n = len(p.Chunks) / 2
	}
	p.CutAfter = n
}

func buildCut(s *Spec) Fault { return Cut{After: intOr(s.After, -1)} }
