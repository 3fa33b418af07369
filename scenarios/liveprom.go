package scenarios

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/brownout-dev/brownout/promrules"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// ErrNoPrometheus is returned by a live run that needs a Prometheus
// server (alerts.prometheus_rules, stop_when.promql) when none is on PATH.
var ErrNoPrometheus = promrules.ErrNoServer

// liveProm is the Prometheus server a live run asks (promrules.Server:
// one started for the run, or the team's own), with what the scores need
// of the scenario's rules, and stop_when.promql's state.
type liveProm struct {
	srv         *promrules.Server
	scrapeEvery time.Duration
	evalEvery   time.Duration
	rules       []score.PromRule
	severity    map[string]string
	stopHeld    bool
	stopSince   time.Duration
}

// newLiveProm wraps srv with the scenario's rules.
func newLiveProm(s *Scenario, srv *promrules.Server) *liveProm {
	p := &liveProm{srv: srv, scrapeEvery: s.Alerts.scrapeEvery(), evalEvery: s.Alerts.evalEvery(), severity: map[string]string{}}
	if rs := s.env.promRules; rs != nil {
		p.rules = promRules(rs)
		for _, r := range rs.List {
			p.severity[r.Name] = r.Severity
		}
	}
	return p
}

// teamProm is the team's own Prometheus server at base (a secret: never
// printed); the run starts nothing.
func teamProm(s *Scenario, base string) *liveProm {
	return newLiveProm(s, promrules.Remote(base, s.Alerts.evalEvery()))
}

// startLiveProm starts Prometheus scraping targets (host:port) with the
// scenario's rule files.
func startLiveProm(ctx context.Context, s *Scenario, targets []string) (*liveProm, error) {
	cfg := promrules.ServerConfig{Job: promJob, Targets: targets, ScrapeEvery: s.Alerts.scrapeEvery(), EvalEvery: s.Alerts.evalEvery()}
	for _, f := range s.Alerts.PrometheusRules {
		data, err := os.ReadFile(s.rel(f))
		if err != nil {
			return nil, err
		}
		cfg.RuleFiles = append(cfg.RuleFiles, data)
	}
	srv, err := promrules.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return newLiveProm(s, srv), nil
}

// close stops the server (a started one) and removes its data.
func (p *liveProm) close() {
	if p != nil {
		p.srv.Close()
	}
}

// stopHolds judges stop_when.promql at elapsed: the expression returns a
// sample now and has at every check for For.
func (p *liveProm) stopHolds(ctx context.Context, sw *StopWhen, elapsed time.Duration) (string, bool) {
	if !p.srv.Holds(ctx, sw.PromQL) {
		p.stopHeld = false
		return "", false
	}
	if !p.stopHeld {
		p.stopHeld, p.stopSince = true, elapsed
	}
	if elapsed-p.stopSince >= sw.For.D() {
		return fmt.Sprintf("stop_when: promql %q held for %s", sw.PromQL, sw.For), true
	}
	return "", false
}

// score is the rules' scores over the faults of res.
func (p *liveProm) score(ctx context.Context, res *score.Result, start, end time.Time) (*score.PromAlerts, error) {
	if p == nil || len(p.rules) == 0 {
		return nil, nil
	}
	eps, err := p.srv.Alerts(ctx, start, end)
	if err != nil {
		return nil, err
	}
	out := &score.PromAlerts{Source: "prometheus", ScrapeInterval: p.scrapeEvery, EvalInterval: p.evalEvery, Rules: p.rules}
	for _, e := range eps {
		out.Episodes = append(out.Episodes, score.PromEpisode{Rule: e.Rule, Labels: e.Labels, Severity: p.severity[e.Rule],
			PendingAt: e.PendingAt, FiredAt: e.FiredAt, ResolvedAt: e.ResolvedAt})
	}
	score.ScorePromAlerts(out, faultWindows(res))
	return out, nil
}

// startProm starts the Prometheus server a live run needs (nil when it
// needs none): it scrapes the in-process gateway, or every replica.
func (l *liveRun) startProm(ctx context.Context) (*liveProm, error) {
	s := l.s
	if len(s.Alerts.PrometheusRules) == 0 && (s.StopWhen == nil || s.StopWhen.PromQL == "") {
		return nil, nil
	}
	if u := s.Alerts.PrometheusURL; !u.IsZero() {
		return teamProm(s, u.Value()), nil
	}
	urls := l.replicaURLs
	if len(urls) == 0 {
		urls = []string{l.gwURL}
	}
	var targets []string
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			return nil, err
		}
		targets = append(targets, pu.Host)
	}
	return startLiveProm(ctx, s, targets)
}

// checkPromStop is checkStop for stop_when.promql, asked of the server
// once an evaluation interval.
func (l *liveRun) checkPromStop(elapsed time.Duration) bool {
	p := l.prom
	if p == nil || elapsed/p.evalEvery == (elapsed-time.Second)/p.evalEvery {
		return false
	}
	why, stop := p.stopHolds(context.Background(), l.s.StopWhen, elapsed)
	if stop {
		l.mu.Lock()
		l.aborted = why
		l.mu.Unlock()
	}
	return stop
}
