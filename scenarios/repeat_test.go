package scenarios

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios/score"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TestRunRepeat: a live game day played twice is reported as a sweep of
// its two runs (seeds 7 and 8): each score's distribution over both, and
// each expectation's pass rate, with a live mode.
func TestRunRepeat(t *testing.T) {
	if testing.Short() {
		t.Skip("two live runs of a second each")
	}
	c := diffCase{name: "repeat", timeline: faultStep("{kind: http_error, status: 503}")}
	s, err := c.scenario()
	require.NoError(t, err)
	half := yamlfile.Percent(0.5)
	s.Expect.Availability = &score.PercentBound{Min: &half}
	sw, err := RunRepeat(context.Background(), s, 2, Options{})
	require.NoError(t, err)
	require.Equal(t, ModeLive, sw.Mode)
	require.Equal(t, []uint64{7, 8}, sw.Seeds)
	found := false
	for _, sc := range sw.Scores {
		if sc.Name == "availability" && sc.Step == "" {
			found = true
			require.Equal(t, 2, sc.N)
			require.NotNil(t, sc.Median)
		}
	}
	require.True(t, found, "an availability distribution over the runs")
	require.Len(t, sw.Expectations, 1)
	require.Equal(t, 2, sw.Expectations[0].N)
	require.True(t, sw.Pass)

	_, err = RunRepeat(context.Background(), s, 0, Options{})
	require.ErrorIs(t, err, ErrInvalid)
}
