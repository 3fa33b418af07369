package faults

import "time"

// NoResponse accepts the request, sends nothing for For, then closes the
// connection: the silent upstream a client's timeout must catch.
type NoResponse struct {
	For time.Duration
}

// Apply marks the plan as a hold.
func (f NoResponse) Apply(p *Plan, _ *Env) { p.HoldFor = f.For }

func checkNoResponse(s *Spec) error {
	if s.For <= 0 {
		return fieldErr("for", "required: how long to hold the connection before closing it (e.g. 30s)")
	}
	return nil
}

func buildNoResponse(s *Spec) Fault { return NoResponse{For: s.For.D()} }
