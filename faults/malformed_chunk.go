package faults

// MalformedChunk replaces token event At (default: the middle one) with a
// data line that is not valid JSON; the stream then goes on. A non-streamed
// body is sent malformed.
type MalformedChunk struct {
	At int // -1: half of the planned tokens
}

// Apply records the malformed event.
func (f MalformedChunk) Apply(p *Plan, _ *Env) {
	n := f.At
	if n < 0 {
		n = len(p.Chunks) / 2
	}
	p.MalformedAt = n
}

func buildMalformedChunk(s *Spec) Fault { return MalformedChunk{At: intOr(s.At, -1)} }
