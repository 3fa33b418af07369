package scenariotest

import (
	"context"

	"github.com/brownout-dev/brownout/reports"
	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Context() context.Context
}

// RequireExpectations fails the test with the scorecard when any expectation
// of the result does not hold, or the run was aborted.
func RequireExpectations(t TB, r *score.Result) {
	t.Helper()
	if r == nil {
		t.Fatalf("scenariotest: no result")
		return
	}
	if !r.Pass {
		t.Fatalf("game day %s failed its expectations:\n%s", r.Scenario, reports.Scorecard(r))
	}
}

// Run loads the scenario file, runs it with opts and requires its
// expectations. It returns the result for further assertions.
func Run(t TB, file string, opts scenarios.Options) *score.Result {
	t.Helper()
	s, err := scenarios.Load(file)
	if err != nil {
		t.Fatalf("%v", err)
		return nil
	}
	res, err := scenarios.Run(t.Context(), s, opts)
	if err != nil {
		t.Fatalf("run %s: %v", file, err)
		return nil
	}
	RequireExpectations(t, res)
	return res
}
