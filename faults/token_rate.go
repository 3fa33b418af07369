package faults

import "time"

// TokenRate re-paces the tokens after the first at Rate tokens per second,
// each gap varied by up to ±Jitter (a fraction) with draws from the seeded source.
type TokenRate struct {
	Rate   float64
	Jitter float64
}

// Apply recomputes the token times from TTFT.
func (f TokenRate) Apply(p *Plan, e *Env) {
	gap := float64(time.Second) / f.Rate
	t := float64(p.TTFT)
	for i := range p.TokenTimes {
		if i > 0 {
			g := gap
			if f.Jitter > 0 {
				g *= 1 + f.Jitter*(2*e.Rand.Float64()-1)
			}
			t += g
		}
		p.TokenTimes[i] = time.Duration(t)
	}
}

func checkTokenRate(s *Spec) error {
	if s.Rate <= 0 {
		return fieldErr("rate", "required: tokens per second, a positive number")
	}
	if s.Jitter < 0 || s.Jitter > 1 {
		return fieldErr("jitter", "must be between 0%% and 100%%")
	}
	return nil
}

func buildTokenRate(s *Spec) Fault { return TokenRate{Rate: s.Rate, Jitter: s.Jitter.F()} }
