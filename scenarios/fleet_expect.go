package scenarios

import "github.com/brownout-dev/brownout/scenarios/score"

// fleetScore scores a fleet's log; nil for a gateway alone.
func (s *Scenario) fleetScore(in *score.Input) *score.FleetScore {
	g := &s.Gateway
	if g.Replicas <= 1 && !g.shared() {
		return nil
	}
	var store []score.Window
	for i := range s.Timeline {
		st := &s.Timeline[i]
		if k := st.Kind(); k == StepStoreDown || k == StepStoreSlow {
			start := in.Start.Add(st.At.D())
			store = append(store, score.Window{Start: start, End: in.Start.Add(s.stepEnd(st))})
		}
	}
	return score.Fleet(in, g.Replicas, g.State, store)
}
