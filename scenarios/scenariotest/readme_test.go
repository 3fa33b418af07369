package scenariotest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/scenariotest"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// TestPrimary429Storm is the README's Go example ("From Go"), with the
// library's path from here: keep the two alike.
func TestPrimary429Storm(t *testing.T) {
	const file = "../../examples/gamedays/primary-429-storm.yaml"
	// Simulated (the default mode); fails the test with the scorecard.
	res := scenariotest.Run(t, file, scenarios.Options{})
	ttd, ok := scenariotest.Time(res, "ttd", "openai-429-half", "openai/gpt-4o")
	require.True(t, ok, "detected")
	require.Less(t, ttd, 10*time.Second)
	f, _ := res.Fault("openai-429-full", "openai/gpt-4o")
	require.Equal(t, score.Detected, f.Detection()) // or NotDetected, NotExercised, NotReDetected

	// 16 seeds in parallel: every expectation must hold in 15 of them.
	sw := scenariotest.Sweep(t, file, 16)
	scenariotest.RequirePassRate(t, sw, 15.0/16)
	p90, ok := scenariotest.SweepTime(must(scenariotest.SweepScore(sw, "ttd", "openai-429-half", "openai/gpt-4o")).P90)
	require.True(t, ok)
	require.Less(t, p90, 10*time.Second)
}

func must[T any](v T, ok bool) T {
	if !ok {
		panic("no such score")
	}
	return v
}
