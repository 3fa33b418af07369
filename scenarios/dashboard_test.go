package scenarios

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDashboardOverFlagship plays the flagship game day in the simulator
// and asks every query of the example Grafana dashboard of its simulated
// scrapes (the PromQL engine over the gateway's event-fed metrics, as the
// team's alert rules are): each panel over event-fed series shows data
// during the incident. The panels over the gateway's state gauges
// (breakers, health, retry budgets) are scraped only
// from a live gateway; the list of them is pinned, so a panel that stops
// showing data in a game day, or a gauge that becomes event-fed, is seen.
func TestDashboardOverFlagship(t *testing.T) {
	s, err := Load("../examples/gamedays/primary-429-storm.yaml")
	require.NoError(t, err)
	m, err := newSim(context.Background(), s, s.Seed)
	require.NoError(t, err)
	require.NotNil(t, m.prom, "the flagship evaluates the team's Prometheus rules")
	m.run()
	require.NoError(t, m.err)

	b, err := os.ReadFile("../examples/grafana/brownout-dashboard.json")
	require.NoError(t, err)
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(b, &d))
	// Grafana's variables: a 1m rate window (four 15s scrapes), every
	// route, the flagship's SLO.
	vars := strings.NewReplacer("$__rate_interval", "1m", "$route", ".*", "$slo", "0.99")
	// The families the run's event-fed metrics exported (a family with no
	// series yet is not gathered).
	mfs, err := m.prom.metrics.Gatherer().Gather()
	require.NoError(t, err)
	eventFed := map[string]bool{}
	for _, mf := range mfs {
		eventFed[mf.GetName()] = true
	}
	metric := regexp.MustCompile(`brownout_[a-z_]+`)
	var liveOnly []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			expr := vars.Replace(tg.Expr)
			fed := true
			for _, name := range metric.FindAllString(expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
				fed = fed && eventFed[base]
			}
			if !fed {
				liveOnly = append(liveOnly, p.Title)
				continue
			}
			data := false
			// During the incident (the 429 storm from 1m, the outage from
			// 2m to 4m): every 15s.
			for at := time.Minute + 15*time.Second; at <= 4*time.Minute && !data; at += 15 * time.Second {
				v, err := m.prom.ev.Query(context.Background(), expr, Epoch.Add(at))
				require.NoError(t, err, "%s: %s", p.Title, expr)
				data = len(v) > 0
			}
			require.True(t, data, "panel %q shows no data over the flagship: %s", p.Title, expr)
		}
	}
	slices.Sort(liveOnly)
	liveOnly = slices.Compact(liveOnly)
	require.Equal(t, []string{"Breakers not closed", "Fail-overs and retry budget", "Health not healthy"}, liveOnly,
		"panels over series only a live gateway exports")
}
