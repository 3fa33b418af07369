package scenarios

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/promrules"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// promJob is the job name of the gateway's scrapes, in both engines.
const promJob = "brownout"

// defaultPromInterval is Prometheus' scrape and evaluation interval when a
// scenario sets none.
const defaultPromInterval = 15 * time.Second

func (a *Alerts) scrapeEvery() time.Duration {
	if a.ScrapeInterval > 0 {
		return a.ScrapeInterval.D()
	}
	return defaultPromInterval
}

func (a *Alerts) evalEvery() time.Duration {
	if a.EvaluationInterval > 0 {
		return a.EvaluationInterval.D()
	}
	return defaultPromInterval
}

// validatePromRules loads alerts.prometheus_rules (every problem with its
// file, line and column) and checks what names them: stop_when.promql and
// expect.prometheus_alerts.
func (s *Scenario) validatePromRules(add func(path, format string, args ...any), addErr func(error)) {
	var paths []string
	for i, f := range s.Alerts.PrometheusRules {
		if !s.missingFile(fmt.Sprintf("alerts.prometheus_rules.%d", i), f, addErr) {
			paths = append(paths, s.rel(f))
		}
	}
	if len(paths) > 0 && len(paths) == len(s.Alerts.PrometheusRules) {
		rs, err := promrules.Load(paths...)
		if err != nil {
			addErr(err)
		} else {
			s.env.promRules = rs
		}
	}
	if u := &s.Alerts.PrometheusURL; !u.IsZero() {
		if err := u.Resolve(lookupPlaceholder); err != nil {
			add("alerts.prometheus_url", "%v", err)
		} else if pu, err := url.Parse(u.Value()); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			add("alerts.prometheus_url", "must be an http(s) URL of a Prometheus server, e.g. http://prometheus:9090")
		}
	}
	if s.Alerts.ScrapeInterval < 0 || s.Alerts.EvaluationInterval < 0 {
		add("alerts", "scrape_interval and evaluation_interval must be positive")
	}
	if sw := s.StopWhen; sw != nil && sw.PromQL != "" {
		if err := promrules.ParseExpr(sw.PromQL); err != nil {
			add("stop_when.promql", "%v", err)
		}
	}
	for _, name := range sortedKeys(s.Expect.PrometheusAlerts) {
		p := "expect.prometheus_alerts." + name
		switch {
		case len(s.Alerts.PrometheusRules) == 0:
			add(p, "no alerts.prometheus_rules to evaluate")
		case s.env.promRules != nil && !slices.Contains(s.env.promRules.Names(), name):
			add(p, "no alerting rule named %q in alerts.prometheus_rules (they have: %s)", name, strings.Join(s.env.promRules.Names(), ", "))
		}
		if e := s.Expect.PrometheusAlerts[name]; e.Never && (e.FiresWithin > 0 || e.ResolvesWithin > 0) {
			add(p, "never: true cannot have fires_within or resolves_within")
		}
	}
}

// promRun plays Prometheus for a simulated run: it scrapes the gateway's
// event-fed metrics every scrape interval of virtual time, evaluates the
// team's rules every evaluation interval, and judges stop_when.promql.
// Nothing in it does I/O or reads the clock.
type promRun struct {
	metrics     *gateway.EventMetrics
	store       *promrules.Store
	ev          *promrules.Evaluator
	rules       *promrules.Rules
	scrapeEvery time.Duration
	evalEvery   time.Duration
	nextScrape  time.Duration
	nextEval    time.Duration
	stop        *StopWhen // with PromQL, else nil
	stopSince   time.Duration
	stopHeld    bool
	episodes    []score.PromEpisode
	open        map[string]int // rule + labels -> index in episodes
	err         error
}

// newPromRun returns nil when the scenario has no Prometheus rules and no
// PromQL stop condition.
func newPromRun(s *Scenario) *promRun {
	rules := s.env.promRules
	var stop *StopWhen
	if s.StopWhen != nil && s.StopWhen.PromQL != "" {
		stop = s.StopWhen
	}
	if rules == nil && stop == nil {
		return nil
	}
	if rules == nil {
		rules = &promrules.Rules{}
	}
	st := promrules.NewStore()
	// What a scrape of the gateway adds: the live engine's Prometheus
	// scrapes it as job "brownout" (instance: its address).
	st.TargetLabels = labels.FromStrings("instance", "gateway", "job", promJob)
	p := &promRun{metrics: gateway.NewEventMetrics(), store: st, rules: rules,
		scrapeEvery: s.Alerts.scrapeEvery(), evalEvery: s.Alerts.evalEvery(), stop: stop, open: map[string]int{}}
	p.ev = promrules.NewEvaluator(rules, st, promrules.Options{EvalInterval: p.evalEvery})
	return p
}

// emit feeds an event of the run to the metrics.
func (p *promRun) emit(e *events.Event) { p.metrics.Emit(e) }

// due is the next time (from the start) at which tick has work.
func (p *promRun) due() time.Duration { return min(p.nextScrape, p.nextEval) }

// tick scrapes and evaluates what is due at elapsed (a scrape first, as
// a sample scraped at the evaluation's instant is in its range), and
// returns a stop reason when stop_when.promql has held for its For.
func (p *promRun) tick(ctx context.Context, elapsed time.Duration) string {
	at := Epoch.Add(elapsed)
	if elapsed >= p.nextScrape {
		mfs, err := p.metrics.Gatherer().Gather()
		if err != nil && p.err == nil {
			p.err = err
		}
		p.store.AppendFamilies(at, mfs)
		p.nextScrape += p.scrapeEvery
	}
	if elapsed < p.nextEval {
		return ""
	}
	p.nextEval += p.evalEvery
	changes, err := p.ev.Eval(ctx, at)
	if err != nil && p.err == nil {
		p.err = err
	}
	p.record(changes)
	if p.stop == nil {
		return ""
	}
	holds, err := p.ev.Holds(ctx, p.stop.PromQL, at)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("stop_when.promql: %w", err)
	}
	if !holds {
		p.stopHeld = false
		return ""
	}
	if !p.stopHeld {
		p.stopHeld, p.stopSince = true, elapsed
	}
	if elapsed-p.stopSince >= p.stop.For.D() {
		return fmt.Sprintf("stop_when: promql %q held for %s", p.stop.PromQL, p.stop.For)
	}
	return ""
}

// record turns state changes into episodes.
func (p *promRun) record(changes []promrules.Change) {
	for _, c := range changes {
		k := c.Rule.Name + c.Labels
		switch c.To {
		case promrules.Pending:
			p.open[k] = len(p.episodes)
			p.episodes = append(p.episodes, score.PromEpisode{Rule: c.Rule.Name, Labels: c.Labels, Severity: c.Rule.Severity, PendingAt: c.At})
		case promrules.Firing:
			if i, ok := p.open[k]; ok {
				p.episodes[i].FiredAt = c.At
			}
		case promrules.Inactive:
			if i, ok := p.open[k]; ok {
				if !p.episodes[i].FiredAt.IsZero() {
					p.episodes[i].ResolvedAt = c.At
				} else {
					// Pending that never fired: not an alert anyone saw.
					p.episodes = slices.Delete(p.episodes, i, i+1)
					for kk, j := range p.open {
						if j > i {
							p.open[kk] = j - 1
						}
					}
				}
				delete(p.open, k)
			}
		}
	}
}

// score returns the rules' scores over the faults of res.
func (p *promRun) score(res *score.Result) *score.PromAlerts {
	if len(p.rules.List) == 0 {
		return nil
	}
	out := &score.PromAlerts{Source: "promql", ScrapeInterval: p.scrapeEvery, EvalInterval: p.evalEvery,
		Rules: promRules(p.rules)}
	for _, e := range p.episodes {
		if !e.FiredAt.IsZero() {
			out.Episodes = append(out.Episodes, e)
		}
	}
	score.ScorePromAlerts(out, faultWindows(res))
	return out
}

// faultWindows are the fault steps' spans, one per step.
func faultWindows(res *score.Result) []score.StepWindow {
	var ws []score.StepWindow
	for _, f := range res.Faults {
		if !slices.ContainsFunc(ws, func(w score.StepWindow) bool { return w.Step == f.Step }) {
			ws = append(ws, score.StepWindow{Step: f.Step, Start: f.Start, End: f.End})
		}
	}
	return ws
}

// promRules are the rules' scored form, one per alert name.
func promRules(rs *promrules.Rules) []score.PromRule {
	var out []score.PromRule
	for _, r := range rs.List {
		if !slices.ContainsFunc(out, func(x score.PromRule) bool { return x.Name == r.Name }) {
			out = append(out, score.PromRule{Name: r.Name, Severity: r.Severity, For: r.For})
		}
	}
	return out
}
