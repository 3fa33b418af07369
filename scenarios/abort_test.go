package scenarios_test

import (
	"context"
	"strings"
	"testing"

	"github.com/brownout-dev/brownout/reports"
	"github.com/brownout-dev/brownout/scenarios"
)

// TestAbortedRunCutsStepsShort: a run a stop condition aborts while its
// steps are on ends them with it. Each reads "cut short" — there is no
// later step to call it superseded by — and the scorecard says the steps
// did not recover because the run was aborted, and that the run fails
// whatever its expectations say.
func TestAbortedRunCutsStepsShort(t *testing.T) {
	s, err := scenarios.Load("testdata/stop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := scenarios.Run(context.Background(), s, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Aborted || res.Pass {
		t.Fatalf("aborted=%v pass=%v, want an aborted, failed run", res.Aborted, res.Pass)
	}
	if len(res.Faults) == 0 {
		t.Fatal("no fault scores")
	}
	for _, f := range res.Faults {
		if !f.CutShort || f.Superseded || f.RecoveryMeasured() {
			t.Errorf("%s %s: cut_short=%v superseded=%v, want cut short", f.Step, f.Target, f.CutShort, f.Superseded)
		}
	}
	card := reports.Scorecard(res)
	if !strings.Contains(card, "not recovered: run aborted") || strings.Contains(card, "superseded") {
		t.Errorf("scorecard:\n%s", card)
	}
}
