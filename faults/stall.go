package faults

import "time"

// Stall pauses the stream after After tokens (default: half of them) for
// For, then resumes, or with Close closes the connection without a finish.
type Stall struct {
	After int // -1: half of the planned tokens
	For   time.Duration
	Close bool
}

// Apply records the stall and delays the tokens after it.
func (f Stall) Apply(p *Plan, _ *Env) {
	n := f.After
	if n < 0 {
		n = len(p.Chunks) / 2
	}
	p.StallAfter = n
	p.StallFor = f.For
	p.StallClose = f.Close
	if f.Close {
		return
	}
	for i := n; i < len(p.TokenTimes); i++ {
		p.TokenTimes[i] += f.For
	}
}

func checkStall(s *Spec) error {
	if s.For <= 0 {
		return fieldErr("for", "required: how long the stream stalls (e.g. 20s)")
	}
	return nil
}

func buildStall(s *Spec) Fault {
	return Stall{After: intOr(s.After, -1), For: s.For.D(), Close: s.Close}
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}
