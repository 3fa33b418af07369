package scenariotest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/scenariotest"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// recordTB records a failure instead of stopping the test.
type recordTB struct{ failed string }

func (*recordTB) Helper()                     {}
func (*recordTB) Context() context.Context    { return context.Background() }
func (r *recordTB) Fatalf(f string, a ...any) { r.failed = fmt.Sprintf(f, a...) }

func TestTimeAndNumber(t *testing.T) {
	res := scenariotest.Run(t, "../testdata/short.yaml", scenarios.Options{})
	f, ok := res.Fault("gpt4o-down", "openai/gpt-4o")
	require.True(t, ok)

	ttd, ok := scenariotest.Time(res, "ttd", "gpt4o-down", "openai/gpt-4o")
	require.True(t, ok, "detected")
	assert.Equal(t, f.TTD, ttd)
	assert.Positive(t, ttd)
	ttr, ok := scenariotest.Time(res, "ttr", "gpt4o-down", "openai:gpt-4o")
	assert.Equal(t, f.Recovered, ok)
	assert.Equal(t, f.TTR, ttr)
	_, ok = scenariotest.Time(res, "ttd", "no-such-step", "")
	assert.False(t, ok)
	_, ok = scenariotest.Time(res, "tdd", "gpt4o-down", "")
	assert.False(t, ok, "an unknown name")

	avail, ok := scenariotest.Number(res, "availability", "", "")
	require.True(t, ok)
	assert.Equal(t, res.Overall.Availability.Success, avail)
	stepAvail, ok := scenariotest.Number(res, "availability", "gpt4o-down", "openai/gpt-4o")
	require.True(t, ok)
	assert.Equal(t, f.Availability.Success, stepAvail)
	share, ok := scenariotest.Number(res, "share", "", "openai/gpt-4o")
	require.True(t, ok)
	assert.Positive(t, share)
	_, ok = scenariotest.Number(res, "share", "", "")
	assert.False(t, ok, "share is a target's")
}

// TestNotExercisedIsNotMissed: a step whose target got no attempt has no
// TTD, and says so apart from a missed detection.
func TestNotExercisedIsNotMissed(t *testing.T) {
	res := scenariotest.Run(t, "testdata/idle-fallback.yaml", scenarios.Options{})
	f, ok := res.Fault("fallback-down", "anthropic/claude-sonnet-4")
	require.True(t, ok)
	assert.Equal(t, score.NotExercised, f.Detection())
	_, ok = scenariotest.Time(res, "ttd", "fallback-down", "")
	assert.False(t, ok)
}

func TestSweepHelpers(t *testing.T) {
	sw := scenariotest.Sweep(t, "../testdata/short.yaml", 3)
	scenariotest.RequirePassRate(t, sw, 1)

	ttd, ok := scenariotest.SweepScore(sw, "ttd", "gpt4o-down", "openai/gpt-4o")
	require.True(t, ok)
	assert.Equal(t, 3, ttd.N)
	median, ok := scenariotest.SweepTime(ttd.Median)
	require.True(t, ok)
	worst, _ := scenariotest.SweepTime(ttd.Worst)
	assert.LessOrEqual(t, median, worst)
	_, ok = scenariotest.SweepScore(sw, "ttd", "gpt4o-down", "anthropic/claude-sonnet-4")
	assert.False(t, ok)
	_, ok = scenariotest.SweepTime(nil)
	assert.False(t, ok, "a missing value")

	failing := scenariotest.Sweep(t, "../testdata/failing.yaml", 2)
	var rec recordTB
	scenariotest.RequirePassRate(&rec, failing, 0.5)
	assert.Contains(t, rec.failed, "game day failing over 2 seeds")
	assert.Contains(t, rec.failed, "held in 0 of 2 seeds (0%), want 50%")
	rec = recordTB{}
	scenariotest.RequirePassRate(&rec, failing, 0)
	assert.Empty(t, rec.failed, "a rate of 0 tolerates every failure")
}
