package faults

// Reset closes the connection before any response header is written; the
// client sees a connection reset (or EOF).
type Reset struct{}

// Apply marks the plan for a reset.
func (Reset) Apply(p *Plan, _ *Env) { p.Reset = true }

func buildReset(*Spec) Fault { return Reset{} }
