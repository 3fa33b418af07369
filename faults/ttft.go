package faults

// TTFT changes the time to first token: Mode "add" (default) adds a latency
// drawn from Delay, "set" makes the first token due at the drawn latency.
// Later tokens keep their gaps.
type TTFT struct {
	Delay Latency
	Set   bool
}

// Apply shifts the tokens.
func (f TTFT) Apply(p *Plan, e *Env) {
	d := f.Delay.Sample(e.Rand)
	if f.Set {
		d -= p.TTFT
	}
	p.Shift(d)
}

func checkTTFT(s *Spec) error {
	if s.Delay == nil || s.Delay.IsZero() {
		return fieldErr("delay", "required: the latency to add or set (e.g. 3s or {median: 2s, p99: 8s})")
	}
	if err := s.Delay.Validate(); err != nil {
		return prefixField("delay", err)
	}
	if s.Mode != "" && s.Mode != "add" && s.Mode != "set" {
		return fieldErr("mode", "must be add or set, got %q", s.Mode)
	}
	return nil
}

func buildTTFT(s *Spec) Fault { return TTFT{Delay: *s.Delay, Set: s.Mode == "set"} }
