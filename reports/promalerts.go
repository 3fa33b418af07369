package reports

import (
	"fmt"
	"strings"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// promAlertsTable has one row per rule of the team's Prometheus rules
// (alerts.prometheus_rules): when it fired and resolved in each incident,
// or never, and its noise (episodes outside every incident).
func promAlertsTable(r *score.Result) table {
	p := r.PromAlerts
	t := table{Cols: []column{{Long: "alert"}, {Long: "severity"}, {Long: "incident"},
		{Long: "time to fire", Short: "to fire"}, {Long: "time to resolve", Short: "to resolve"}, {Long: "noise", Num: true}}}
	if p == nil {
		return t
	}
	noise := map[string]int{}
	for _, e := range p.Episodes {
		if e.Incident == "" {
			noise[e.Rule]++
		}
	}
	for _, pr := range p.Rules {
		rule, severity := pr.Name, pr.Severity
		rows := 0
		for _, in := range p.Incidents {
			for _, a := range in.Alerts {
				if a.Rule != rule {
					continue
				}
				resolve := "not resolved"
				if a.TimeToResolve != nil {
					resolve = fmtDur(*a.TimeToResolve) + " after the end"
				}
				t.Rows = append(t.Rows, []string{rule, severity, in.Name, fmtDur(a.TimeToFire), resolve, fmt.Sprint(noise[rule])})
				rows++
			}
		}
		if rows == 0 {
			what := "never fired"
			if noise[rule] > 0 {
				what = "fired outside every incident"
			}
			t.Rows = append(t.Rows, []string{rule, severity, "–", what, "–", fmt.Sprint(noise[rule])})
		}
	}
	return t
}

// promAlertsAbout says where the alerts table comes from, above it.
func promAlertsAbout(r *score.Result) string {
	p := r.PromAlerts
	how := "the PromQL engine over the simulator's scrapes"
	if p.Source == "prometheus" {
		how = "a Prometheus server scraping the live run"
	}
	s := fmt.Sprintf("The team's Prometheus rules, evaluated by %s (scrape every %s, evaluation every %s). "+
		"Times are from the incident's start (fire) and end (resolve).", how, fmtDur(p.ScrapeInterval), fmtDur(p.EvalInterval))
	s += fmt.Sprintf(" Pages per incident: %.1f; noise (alerts outside every incident): %d.", p.PagesPerIncident, p.Noise)
	if len(p.NeverFired) > 0 {
		s += " Never fired: " + strings.Join(p.NeverFired, ", ") + "."
	}
	return s
}
