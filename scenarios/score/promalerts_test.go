package score_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// TestPromIncidentsTouchLive: two steps written back to back are one
// incident whether they touch exactly (the simulator) or land
// microseconds apart (a live run's timers, here as the live flagship
// recorded them: 34.5 µs); an alert that fired in the first and kept
// firing through the second is the incident's. Steps further apart than
// PromTouch stay two incidents.
func TestPromIncidentsTouchLive(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 16, 9, 37, 276409157, time.UTC)
	halfEnd := t0.Add(time.Minute - 98072*time.Nanosecond) // 16:10:37.276311085
	for _, c := range []struct {
		name      string
		fullStart time.Time
		incidents []string
	}{
		{"exact", halfEnd, []string{"half+full"}},
		{"live jitter", halfEnd.Add(34515 * time.Nanosecond), []string{"half+full"}},
		{"apart", halfEnd.Add(score.PromTouch + time.Millisecond), []string{"half", "full"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &score.PromAlerts{Episodes: []score.PromEpisode{{Rule: "FallbackRateCritical", Severity: "page",
				PendingAt: t0.Add(35 * time.Second), FiredAt: t0.Add(95 * time.Second)}}}
			score.ScorePromAlerts(p, []score.StepWindow{
				{Step: "half", Start: t0, End: halfEnd},
				{Step: "full", Start: c.fullStart, End: c.fullStart.Add(2 * time.Minute)},
			})
			var names []string
			for _, in := range p.Incidents {
				names = append(names, in.Name)
			}
			require.Equal(t, c.incidents, names)
			require.Equal(t, "half"+map[bool]string{true: "+full", false: ""}[len(names) == 1], p.Episodes[0].Incident)
			require.Len(t, p.Incidents[0].Alerts, 1)
			require.Equal(t, 95*time.Second, p.Incidents[0].Alerts[0].TimeToFire)
			require.Zero(t, p.Noise)
		})
	}
}
