package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios/score"
)

func promResult(mode score.Mode, fire time.Duration) *score.Result {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &score.PromAlerts{Source: "promql", ScrapeInterval: time.Second, EvalInterval: time.Second,
		Rules:    []score.PromRule{{Name: "FallbackRate", Severity: "page"}, {Name: "Never", Severity: "warn"}},
		Episodes: []score.PromEpisode{{Rule: "FallbackRate", Severity: "page", PendingAt: t0.Add(9 * time.Second), FiredAt: t0.Add(8*time.Second + fire)}}}
	score.ScorePromAlerts(p, []score.StepWindow{{Step: "outage", Start: t0.Add(8 * time.Second), End: t0.Add(20 * time.Second)}})
	return &score.Result{Scenario: "s", Mode: mode, Start: t0, PromAlerts: p}
}

func TestFidelityComparesPrometheusAlerts(t *testing.T) {
	for _, c := range []struct {
		live  time.Duration
		agree bool
	}{{6500 * time.Millisecond, true}, {8 * time.Second, true}, {8100 * time.Millisecond, false}} {
		f, err := CompareFidelity(promResult(score.ModeSim, 6*time.Second), promResult(score.ModeLive, c.live), DefaultFidelityTolerances)
		require.NoError(t, err)
		require.Len(t, f.Alerts, 1)
		require.Equal(t, c.agree, f.Alerts[0].TimeToFire.Within, "live %s: %+v", c.live, f.Alerts[0])
		var b strings.Builder
		require.NoError(t, WriteFidelity(&b, []*Fidelity{f}))
		require.Contains(t, b.String(), "| s | outage · FallbackRate | 6s / ")
	}
}

func TestPromAlertsTable(t *testing.T) {
	r := promResult(score.ModeSim, 6*time.Second)
	var b strings.Builder
	require.NoError(t, WriteMarkdown(&b, r))
	md := b.String()
	require.Contains(t, md, "## Prometheus alerts")
	require.Contains(t, md, "| FallbackRate | page | outage | 6s | not resolved | 0 |")
	require.Contains(t, md, "| Never | warn | – | never fired | – | 0 |")
	require.Contains(t, md, "Never fired: Never.")
}
