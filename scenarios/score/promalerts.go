package score

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/yamlfile"
)

// PromAlerts scores the team's own Prometheus alerting rules
// (alerts.prometheus_rules) over the run's metrics: when each alert fired
// and resolved, per incident, and the alerts that fired with no fault to
// find.
type PromAlerts struct {
	// Source is how the rules were evaluated: "promql" (the simulator's
	// scrapes in virtual time, the PromQL engine as a library) or
	// "prometheus" (a real Prometheus server scraping the live run).
	Source         string        `json:"source"`
	ScrapeInterval time.Duration `json:"scrape_interval_ns"`
	EvalInterval   time.Duration `json:"eval_interval_ns"`
	// Rules are the alerting rules evaluated, in file order.
	Rules    []PromRule    `json:"rules"`
	Episodes []PromEpisode `json:"episodes,omitempty"`
	// Incidents are the fault windows: fault steps that overlap or touch
	// (within PromTouch) are one incident.
	Incidents []PromIncident `json:"incidents,omitempty"`
	// NeverFired are the rules that never fired in the run.
	NeverFired []string `json:"never_fired,omitempty"`
	// Noise counts the episodes that became pending outside every incident
	// (from an incident's start to Grace after its end).
	Noise int `json:"noise"`
	// PagesPerIncident is the page-severity episodes attributed to
	// incidents over the number of incidents.
	PagesPerIncident float64 `json:"pages_per_incident"`
}

// PromRule is an alerting rule that was evaluated.
type PromRule struct {
	Name     string        `json:"name"`
	Severity string        `json:"severity,omitempty"`
	For      time.Duration `json:"for_ns,omitempty"`
}

// PromEpisode is one alert instance from pending to resolved.
type PromEpisode struct {
	Rule     string `json:"rule"`
	Labels   string `json:"labels"`
	Severity string `json:"severity,omitempty"`
	// PendingAt is when the expression first held, FiredAt when the alert
	// fired (zero: it never left pending), ResolvedAt when it stopped
	// firing (zero: still firing at the end).
	PendingAt  time.Time `json:"pending_at"`
	FiredAt    time.Time `json:"fired_at,omitzero"`
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
	// Incident is the incident it is attributed to ("" for noise).
	Incident string `json:"incident,omitempty"`
}

// PromIncident is a fault window and what the rules said about it.
type PromIncident struct {
	Name   string              `json:"name"` // its steps, joined by "+"
	Start  time.Time           `json:"start"`
	End    time.Time           `json:"end"`
	Alerts []PromIncidentAlert `json:"alerts,omitempty"`
	Pages  int                 `json:"pages"`
}

// PromIncidentAlert is one rule's first firing in an incident.
type PromIncidentAlert struct {
	Rule string `json:"rule"`
	// TimeToFire is from the incident's start; TimeToResolve from its end
	// (nil: never resolved in the run).
	TimeToFire    time.Duration  `json:"time_to_fire_ns"`
	TimeToResolve *time.Duration `json:"time_to_resolve_ns,omitempty"`
}

// PromGrace is how long after an incident's end an alert that becomes
// pending is still the incident's: the 5-minute window of a typical rate()
// keeps seeing the fault that long.
const PromGrace = 5 * time.Minute

// PromTouch is how far apart two fault steps may be and still touch, one
// incident: a live run starts and ends its steps on real timers, so steps
// written back to back (one at 1m for 1m, the next at 2m) land
// microseconds apart, where the simulator's touch exactly. Without it an
// alert that fired in the first step and kept firing through the second
// was scored as never firing in the second, in live runs only.
const PromTouch = time.Second

// StepWindow is a fault step's span, for ScorePromAlerts.
type StepWindow struct {
	Step       string
	Start, End time.Time
}

// ScorePromAlerts attributes episodes to the incidents that windows make.
func ScorePromAlerts(p *PromAlerts, windows []StepWindow) {
	ws := slices.Clone(windows)
	slices.SortStableFunc(ws, func(a, b StepWindow) int { return a.Start.Compare(b.Start) })
	p.Incidents = nil
	for _, w := range ws {
		if n := len(p.Incidents); n > 0 && !w.Start.After(p.Incidents[n-1].End.Add(PromTouch)) {
			in := &p.Incidents[n-1]
			if !strings.Contains("+"+in.Name+"+", "+"+w.Step+"+") {
				in.Name += "+" + w.Step
			}
			if w.End.After(in.End) {
				in.End = w.End
			}
			continue
		}
		p.Incidents = append(p.Incidents, PromIncident{Name: w.Step, Start: w.Start, End: w.End})
	}
	fired := map[string]bool{}
	p.Noise, p.PagesPerIncident = 0, 0
	pages := 0
	for i := range p.Episodes {
		e := &p.Episodes[i]
		if !e.FiredAt.IsZero() {
			fired[e.Rule] = true
		}
		e.Incident = ""
		for k := range p.Incidents {
			in := &p.Incidents[k]
			if e.PendingAt.Before(in.Start) || !e.PendingAt.Before(in.End.Add(PromGrace)) {
				continue
			}
			e.Incident = in.Name
			if e.FiredAt.IsZero() {
				break
			}
			if e.Severity == "page" {
				in.Pages++
				pages++
			}
			if !slices.ContainsFunc(in.Alerts, func(a PromIncidentAlert) bool { return a.Rule == e.Rule }) {
				a := PromIncidentAlert{Rule: e.Rule, TimeToFire: e.FiredAt.Sub(in.Start)}
				if !e.ResolvedAt.IsZero() {
					d := e.ResolvedAt.Sub(in.End)
					a.TimeToResolve = &d
				}
				in.Alerts = append(in.Alerts, a)
			}
			break
		}
		if e.Incident == "" {
			p.Noise++
		}
	}
	if len(p.Incidents) > 0 {
		p.PagesPerIncident = float64(pages) / float64(len(p.Incidents))
	}
	p.NeverFired = nil
	for _, r := range p.Rules {
		if !fired[r.Name] && !slices.Contains(p.NeverFired, r.Name) {
			p.NeverFired = append(p.NeverFired, r.Name)
		}
	}
}

// PromAlertExpect bounds one of the team's Prometheus alerts
// (expect.prometheus_alerts, by alert name): it fires within FiresWithin
// of every incident's start and resolves within ResolvesWithin of its end;
// Never: it never fires in the run.
type PromAlertExpect struct {
	FiresWithin    yamlfile.Duration `yaml:"fires_within,omitempty"`
	ResolvesWithin yamlfile.Duration `yaml:"resolves_within,omitempty"`
	Never          bool              `yaml:"never,omitempty"`
}

// judgePromAlerts adds the verdicts of the prometheus_alerts expectations,
// by alert name.
func judgePromAlerts(es map[string]PromAlertExpect, p *PromAlerts, v func(name, want, got string, pass bool)) {
	for _, name := range slices.Sorted(maps.Keys(es)) {
		e := es[name]
		label := "prometheus alert " + name
		if p == nil {
			v(label, "measured", "not measured (no alerts.prometheus_rules)", false)
			continue
		}
		if e.Never {
			n := 0
			for _, ep := range p.Episodes {
				if ep.Rule == name && !ep.FiredAt.IsZero() {
					n++
				}
			}
			v(label, "never fires", firedTimes(n), n == 0)
			continue
		}
		for _, in := range p.Incidents {
			i := slices.IndexFunc(in.Alerts, func(a PromIncidentAlert) bool { return a.Rule == name })
			var want []string
			got, pass := "never fired", false
			if e.FiresWithin > 0 || e.ResolvesWithin == 0 {
				want = append(want, "fires")
				if e.FiresWithin > 0 {
					want[0] += " within " + e.FiresWithin.String()
				}
			}
			if i >= 0 {
				a := in.Alerts[i]
				got, pass = "fired after "+FormatDuration(a.TimeToFire), e.FiresWithin == 0 || a.TimeToFire <= e.FiresWithin.D()
				if e.ResolvesWithin > 0 {
					want = append(want, "resolves within "+e.ResolvesWithin.String()+" of the end")
					if a.TimeToResolve == nil {
						got += ", never resolved"
						pass = false
					} else {
						got += ", resolved " + FormatDuration(*a.TimeToResolve) + " after the end"
						pass = pass && *a.TimeToResolve <= e.ResolvesWithin.D()
					}
				}
			}
			v(label+" in "+in.Name, strings.Join(want, ", "), got, pass)
		}
		if len(p.Incidents) == 0 {
			v(label, "fires", "no incident in the run", false)
		}
	}
}

func firedTimes(n int) string {
	if n == 0 {
		return "never fired"
	}
	return fmt.Sprintf("fired %d time(s)", n)
}
