package scenarios

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// requirePrometheus skips a test without a Prometheus server, or fails it
// when BROWNOUT_REQUIRE_PROMETHEUS=1 (CI installs Debian's prometheus).
func requirePrometheus(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrNoPrometheus) {
		return
	}
	if os.Getenv("BROWNOUT_REQUIRE_PROMETHEUS") == "1" {
		t.Fatal("prometheus is not installed and BROWNOUT_REQUIRE_PROMETHEUS=1 (apt-get install prometheus)")
	}
	t.Skip("prometheus is not installed (apt-get install prometheus); set BROWNOUT_REQUIRE_PROMETHEUS=1 to make this a failure")
}

// TestLivePrometheusAlerts plays a 30-second game day live with a real
// Prometheus server scraping the in-process gateway every second, and in
// the simulator: the rule with for: 3s fires in both, within a scrape
// interval plus an evaluation interval of each other (from the fault's
// start), and the for: 5m one in neither.
func TestLivePrometheusAlerts(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("live run takes 30s of real time; timings need a build without -race")
	}
	s, err := Load("testdata/prom-live.yaml")
	require.NoError(t, err)
	sim, err := Run(context.Background(), s, Options{Mode: score.ModeSim})
	require.NoError(t, err)
	live, err := Run(context.Background(), s, Options{Mode: score.ModeLive})
	requirePrometheus(t, err)
	require.NoError(t, err)
	require.NotNil(t, live.PromAlerts)
	require.Equal(t, "prometheus", live.PromAlerts.Source)
	ttf := func(r *score.Result) time.Duration {
		t.Helper()
		require.Len(t, r.PromAlerts.Incidents, 1, "%s: %+v", r.Mode, r.PromAlerts)
		for _, a := range r.PromAlerts.Incidents[0].Alerts {
			if a.Rule == "LiveFallbackRate" {
				return a.TimeToFire
			}
		}
		t.Fatalf("%s: LiveFallbackRate never fired: %+v", r.Mode, r.PromAlerts)
		return 0
	}
	ss, ls := ttf(sim), ttf(live)
	t.Logf("LiveFallbackRate fired %s after the fault's start in sim, %s live", ss, ls)
	// By hand, live: the first request not served in full ends at ff; its
	// series is first scraped within a scrape interval (1s) after ff,
	// rate() over [5s] needs its second sample (1s later: pending at the
	// next evaluation, within 1s), and for: 3s fires it 3s after that: from
	// ff+4s (everything aligned) to ff+7s (each step a full interval late).
	ff := firstFallback(t, live)
	fire := live.PromAlerts.Incidents[0].Start.Sub(live.Start) + ls
	require.True(t, fire >= ff+4*time.Second && fire <= ff+7*time.Second,
		"first fallback at %s, fired at %s: want %s to %s", ff, fire, ff+4*time.Second, ff+7*time.Second)
	tol := s.Alerts.scrapeEvery() + s.Alerts.evalEvery()
	require.InDelta(t, float64(ss), float64(ls), float64(tol), "sim %s, live %s: more than %s apart", ss, ls, tol)
	for _, r := range []*score.Result{sim, live} {
		require.Contains(t, r.PromAlerts.NeverFired, "LiveFallbackRateFor5m", "%s", r.Mode)
		require.True(t, r.Pass, "%s: %+v", r.Mode, r.Expectations)
	}
}

// The team's Prometheus URL is a secret: an unreachable server's error
// names neither its credentials nor its URL.
func TestTeamPrometheusURLNeverPrinted(t *testing.T) {
	s := withRules(t, "6m", []string{"../examples/prometheus/brownout-alerts.yaml"}, "\n  prometheus_url: http://oncall:hunter2@127.0.0.1:1")
	require.Equal(t, "[redacted]", s.Alerts.PrometheusURL.String())
	p := teamProm(s, s.Alerts.PrometheusURL.Value())
	defer p.close()
	_, err := p.score(context.Background(), &score.Result{}, time.Now().Add(-time.Minute), time.Now())
	require.Error(t, err)
	require.NotContains(t, err.Error(), "hunter2")
	require.NotContains(t, err.Error(), "oncall")
	_, stop := p.stopHolds(context.Background(), &StopWhen{PromQL: "up", For: 0}, time.Second)
	require.False(t, stop)
}

func TestTeamPrometheusURLMustBeHTTP(t *testing.T) {
	src, err := os.ReadFile(flagship)
	require.NoError(t, err)
	bad := strings.Replace(string(src), "prometheus_rules: [../prometheus/brownout-alerts.yaml]",
		"prometheus_rules: [../prometheus/brownout-alerts.yaml]\n  prometheus_url: ftp://secret@x", 1)
	_, err = Parse(flagship, []byte(bad))
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), "alerts.prometheus_url: must be an http(s) URL")
	require.NotContains(t, err.Error(), "secret@")
}

// TestLiveFlagshipPrometheusAlerts plays the flagship game day live, cut
// at 3m50s (BrownoutFallbackRateHigh fires 3m30s into the simulated run),
// with a real Prometheus server scraping the in-process gateway every 15s
// and evaluating the example rules every 15s, as the simulator does. By
// hand: the first request not served in full ends at ff; the series is
// first scraped within 15s after ff, rate() has its second sample 15s
// later, the rule is pending from the next evaluation (within 15s more)
// and for: 2m fires it 2m after that: from ff+2m15s (everything aligned)
// to ff+2m45s (each step a full interval late). The simulator's firing
// time (from the incident's start) is within a scrape plus an evaluation
// interval of the live one.
func TestLiveFlagshipPrometheusAlerts(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a live run of 3m50s of real time; timings need a build without -race")
	}
	s := withRules(t, "3m50s", []string{"../examples/prometheus/brownout-alerts.yaml"}, "")
	const rule = "BrownoutFallbackRateHigh"
	ttf := func(r *score.Result) time.Duration {
		t.Helper()
		require.NotNil(t, r.PromAlerts, "%s", r.Mode)
		require.NotEmpty(t, r.PromAlerts.Incidents, "%s", r.Mode)
		for _, a := range r.PromAlerts.Incidents[0].Alerts {
			if a.Rule == rule {
				return a.TimeToFire
			}
		}
		t.Fatalf("%s: %s never fired: %+v", r.Mode, rule, r.PromAlerts)
		return 0
	}
	sim, err := Run(context.Background(), s, Options{Mode: score.ModeSim})
	require.NoError(t, err)
	live, err := Run(context.Background(), s, Options{Mode: score.ModeLive})
	requirePrometheus(t, err)
	require.NoError(t, err)
	require.Equal(t, "prometheus", live.PromAlerts.Source)
	// The storm's two steps, written back to back, are one incident in
	// both modes: the sim's touch exactly, a live run's land microseconds
	// apart (score.PromTouch); as two, an alert that fired in the first
	// and kept firing was scored "never fired" in the second, live only.
	incidents := func(r *score.Result) []string {
		var names []string
		for _, in := range r.PromAlerts.Incidents {
			names = append(names, in.Name)
		}
		return names
	}
	require.Equal(t, []string{"openai-429-half+openai-429-full"}, incidents(sim))
	require.Equal(t, incidents(sim), incidents(live))
	ss, ls := ttf(sim), ttf(live)
	ff := firstFallback(t, live)
	fire := live.PromAlerts.Incidents[0].Start.Sub(live.Start) + ls
	t.Logf("%s fired %s after the storm's start in sim, %s live (first fallback at %s, fired at %s)", rule, ss, ls, ff, fire)
	require.True(t, fire >= ff+2*time.Minute+15*time.Second && fire <= ff+2*time.Minute+45*time.Second,
		"first fallback at %s, fired at %s: want %s to %s", ff, fire, ff+2*time.Minute+15*time.Second, ff+2*time.Minute+45*time.Second)
	tol := s.Alerts.scrapeEvery() + s.Alerts.evalEvery()
	require.InDelta(t, float64(ss), float64(ls), float64(tol), "sim %s, live %s: more than %s apart", ss, ls, tol)
}
