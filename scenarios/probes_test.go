package scenarios

import (
	"context"
	"reflect"
	"testing"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// TestSimProbes: with probes enabled in the gateway config, the simulator
// probes every target in virtual time; a target that takes no traffic
// (gemini, the third tier) is found dead by its probes alone, its breaker is
// opened after `failures` consecutive failures, and the score names the
// probe as the detection. The run is deterministic.
func TestSimProbes(t *testing.T) {
	s, err := Load("testdata/probes/cold-target.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := func() *score.Result {
		res, err := Run(context.Background(), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run()
	if !res.Pass {
		t.Errorf("expectations failed: %+v", res.Failed())
	}
	f, ok := res.Fault("gemini-down", "gemini:gemini-2.0-flash")
	if !ok || !f.Detected || f.DetectedBy != "probe" {
		t.Errorf("gemini-down: detected %v by %q, want by probe", f.Detected, f.DetectedBy)
	}
	probed := map[string]int{}
	var tripped bool
	for _, e := range res.Log() {
		switch {
		case e.Kind == events.ProbeResult:
			probed[e.Target]++
			if e.Target == "gemini:gemini-2.0-flash" && e.OK && e.Time.After(f.Start) && e.Time.Before(f.End) {
				t.Errorf("a probe of the killed target passed at %v", e.Time)
			}
		case e.Kind == events.BreakerTransition && e.Target == "gemini:gemini-2.0-flash" && e.To == "open":
			tripped = e.Reason == "probe_failures"
		}
	}
	for _, k := range []string{"openai:gpt-4o", "anthropic:claude-sonnet-4", "gemini:gemini-2.0-flash"} {
		// 5 minutes at one probe every 10-20 s (failing targets back off).
		if probed[k] < 5 {
			t.Errorf("%s probed %d times", k, probed[k])
		}
	}
	if !tripped {
		t.Error("gemini's breaker was not opened by probe failures")
	}
	if again := run(); !reflect.DeepEqual(again.Log(), res.Log()) {
		t.Error("same seed gave different events")
	}
}
