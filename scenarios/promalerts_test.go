package scenarios

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/scenarios/score"
)

const flagship = "../examples/gamedays/primary-429-storm.yaml"

// withRules is the flagship game day with its prometheus_rules replaced by
// rules (paths relative to scenarios/) and the extra YAML appended to
// alerts:, its relative paths made absolute.
func withRules(t *testing.T, duration string, rules []string, extra string) *Scenario {
	t.Helper()
	src, err := os.ReadFile(flagship)
	require.NoError(t, err)
	s := string(src)
	var rel []string
	for _, r := range rules {
		abs, err := filepath.Abs(r)
		require.NoError(t, err)
		rel = append(rel, abs)
	}
	s = strings.Replace(s, "prometheus_rules: [../prometheus/brownout-alerts.yaml]",
		"prometheus_rules: ["+strings.Join(rel, ", ")+"]"+extra, 1)
	s = strings.Replace(s, "duration: 6m", "duration: "+duration, 1)
	s = regexp.MustCompile(`(?m)^  prometheus_alerts:\n(    .*\n)*`).ReplaceAllString(s, "")
	// Written to a temporary directory, not beside the flagship: other
	// packages' tests read every file of the example library meanwhile.
	env, err := filepath.Abs(filepath.Join(filepath.Dir(flagship), "env"))
	require.NoError(t, err)
	s = strings.ReplaceAll(s, "{file: env/", "{file: "+env+"/")
	s = strings.ReplaceAll(s, "{config: env/", "{config: "+env+"/")
	p := filepath.Join(t.TempDir(), "flagship.yaml")
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	sc, err := Load(p)
	require.NoError(t, err)
	return sc
}

// firstFallback is when the first request not served in full ended.
func firstFallback(t *testing.T, res *score.Result) time.Duration {
	t.Helper()
	for _, e := range res.Log() {
		if e.Kind == events.RequestEnd && e.Outcome != "served" {
			return e.Time.Sub(res.Start)
		}
	}
	t.Fatal("no request fell back")
	return 0
}

func firedAt(p *score.PromAlerts, rule string) (time.Duration, bool) {
	for _, e := range p.Episodes {
		if e.Rule == rule {
			return e.FiredAt.Sub(Epoch), true
		}
	}
	return 0, false
}

// expectedFire hand-computes when BrownoutFallbackRateHigh fires from the
// PromQL semantics, given when the first request fell back (ff): the
// scenario scrapes and evaluates every 15s from 0. The rule's expression
//
//	sum by (route) (rate(brownout_requests_total{outcome!="served"}[5m]))
//	/ sum by (route) (rate(brownout_requests_total[5m])) > 0.05
//	and sum by (route) (increase(brownout_requests_total[5m])) >= 10
//
// needs the non-served series in the numerator, and rate() needs two of
// its samples in the window: the series exists from the first scrape at
// or after ff (S1), and has two samples at S1+15s. By then the storm
// (50% 429s from 1m, 2 attempts per target) has sent every retry-exhausted
// request to the fallback for at least 15s: far above 5% of the 20/s
// traffic, and over 10 requests in 5m. So the expression first holds at
// S1+15s (pending) and, with for: 2m, fires at the first evaluation at or
// after S1+15s+2m.
func expectedFire(ff time.Duration) time.Duration {
	const every = 15 * time.Second
	s1 := (ff + every - 1) / every * every
	return s1 + every + 2*time.Minute
}

func TestPromAlertsFlagshipSim(t *testing.T) {
	s, err := Load(flagship)
	require.NoError(t, err)
	res, err := Run(context.Background(), s, Options{})
	require.NoError(t, err)
	require.NotNil(t, res.PromAlerts)
	ff := firstFallback(t, res)
	got, ok := firedAt(res.PromAlerts, "BrownoutFallbackRateHigh")
	require.True(t, ok, "BrownoutFallbackRateHigh never fired")
	want := expectedFire(ff)
	t.Logf("first fallback at %s; BrownoutFallbackRateHigh hand-computed %s, fired at %s", ff, want, got)
	require.InDelta(t, float64(want), float64(got), float64(15*time.Second),
		"first fallback at %s: want firing at %s (one evaluation interval), got %s", ff, want, got)
	require.Equal(t, 0, res.PromAlerts.Noise)
	require.Len(t, res.PromAlerts.Incidents, 1)
	require.Equal(t, "openai-429-half+openai-429-full", res.PromAlerts.Incidents[0].Name)
}

// A rule with for: 5m does not fire in the flagship's 3-minute storm
// (1m to 4m) when its window follows the storm (rate over [1m]): its
// expression holds from about 1m30s until the fallback share of the
// last minute drops back, about a minute after the storm: ~4m, under 5m.
// Its for: 2m twin fires, so the expression did hold.
func TestPromAlertsForLongerThanTheFaultSim(t *testing.T) {
	s := withRules(t, "12m", []string{"testdata/prom/short-window.yaml"}, "")
	res, err := Run(context.Background(), s, Options{})
	require.NoError(t, err)
	_, fired2 := firedAt(res.PromAlerts, "FallbackRate1mFor2m")
	_, fired5 := firedAt(res.PromAlerts, "FallbackRate1mFor5m")
	require.True(t, fired2, "the for: 2m twin must fire")
	require.False(t, fired5, "a for: 5m rule fired in a 3-minute fault")
	require.Equal(t, []string{"FallbackRate1mFor5m"}, res.PromAlerts.NeverFired)
}

func TestPromAlertsDeterministic(t *testing.T) {
	s, err := Load(flagship)
	require.NoError(t, err)
	a, err := Run(context.Background(), s, Options{})
	require.NoError(t, err)
	b, err := Run(context.Background(), s, Options{})
	require.NoError(t, err)
	require.Equal(t, a.PromAlerts, b.PromAlerts)
}

func TestPromAlertsBadRuleFileRefusesToStart(t *testing.T) {
	src, err := os.ReadFile(flagship)
	require.NoError(t, err)
	abs, err := filepath.Abs("testdata/prom/bad.yaml")
	require.NoError(t, err)
	s := strings.Replace(string(src), "../prometheus/brownout-alerts.yaml", abs, 1)
	_, err = Parse(flagship, []byte(s))
	require.Error(t, err)
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), abs+":5:15: ")
}

func TestPromAlertsStopWhenPromQL(t *testing.T) {
	s := withRules(t, "6m", []string{"../examples/prometheus/brownout-alerts.yaml"}, "")
	s.StopWhen = &StopWhen{PromQL: `sum(increase(brownout_requests_total{outcome!="served"}[1m])) > 100`, For: 0}
	res, err := Run(context.Background(), s, Options{})
	require.NoError(t, err)
	require.True(t, res.Aborted)
	require.Contains(t, res.AbortReason, "stop_when: promql")
	require.Less(t, res.Elapsed, 3*time.Minute)
	require.Greater(t, res.Elapsed, time.Minute)
}
