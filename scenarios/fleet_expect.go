package scenarios

import "github.com/brownout-dev/brownout/scenarios/score"

// fleetScore scores a fleet's log; nil for a gateway alone.
func (s *Scenario) fleetScore(in *score.Input) *score.FleetScore {
	g := &s.Gateway
	if g.Replicas <= 1 && !g.shared() {
		return nil
	}
	return score.Fleet(in, g.Replicas, g.State)
}
