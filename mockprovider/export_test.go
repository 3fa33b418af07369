package mockprovider

import "math/rand/v2"

// NewPlannerMemo is NewPlanner remembering at most memo message texts, so
// tests reach the memo's bound.
func NewPlannerMemo(spec ProviderSpec, rnd *rand.Rand, memo int) (*Planner, error) {
	pl, err := NewPlanner(spec, rnd)
	if err == nil {
		pl.m.memo = newPromptMemo(memo)
	}
	return pl, err
}

// Reset resets the planner's model (Model.Reset).
func (pl *Planner) Reset() { pl.m.Reset() }
