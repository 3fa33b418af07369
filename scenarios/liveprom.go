package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// ErrNoPrometheus is returned by a live run that needs a Prometheus
// server (alerts.prometheus_rules, stop_when.promql) when none is on PATH.
var ErrNoPrometheus = errors.New("no prometheus server on PATH (apt-get install prometheus)")

// liveProm is a real Prometheus server scraping a live run: the in-process
// gateway's /metrics at the scenario's scrape interval, with its rule
// files, on a free loopback port and a temporary data directory.
type liveProm struct {
	cmd         *exec.Cmd
	dir         string
	url         string
	hc          *http.Client
	scrapeEvery time.Duration
	evalEvery   time.Duration
	rules       []score.PromRule
	severity    map[string]string
	stopHeld    bool
	stopSince   time.Duration
	exited      chan struct{}
	// team: url is the team's own server (alerts.prometheus_url), a
	// secret that no error names.
	team bool
}

// teamProm is the team's own Prometheus server at base (a secret: never
// printed); the run starts nothing.
func teamProm(s *Scenario, base string) *liveProm {
	p := &liveProm{url: strings.TrimSuffix(base, "/"), team: true, hc: &http.Client{Timeout: 5 * time.Second},
		scrapeEvery: s.Alerts.scrapeEvery(), evalEvery: s.Alerts.evalEvery(), severity: map[string]string{}}
	if rs := s.env.promRules; rs != nil {
		p.rules = promRules(rs)
		for _, r := range rs.List {
			p.severity[r.Name] = r.Severity
		}
	}
	return p
}

// startLiveProm starts Prometheus scraping targets (host:port).
func startLiveProm(ctx context.Context, s *Scenario, targets []string) (*liveProm, error) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		return nil, ErrNoPrometheus
	}
	dir, err := os.MkdirTemp("", "brownout-prometheus-")
	if err != nil {
		return nil, err
	}
	p := &liveProm{dir: dir, hc: &http.Client{Timeout: 5 * time.Second}, scrapeEvery: s.Alerts.scrapeEvery(),
		evalEvery: s.Alerts.evalEvery(), severity: map[string]string{}, exited: make(chan struct{})}
	var ruleFiles []string
	for i, f := range s.Alerts.PrometheusRules {
		data, err := os.ReadFile(s.rel(f))
		if err != nil {
			p.close()
			return nil, err
		}
		name := fmt.Sprintf("rules-%d.yaml", i)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			p.close()
			return nil, err
		}
		ruleFiles = append(ruleFiles, strconv.Quote(name))
	}
	if rs := s.env.promRules; rs != nil {
		p.rules = promRules(rs)
		for _, r := range rs.List {
			p.severity[r.Name] = r.Severity
		}
	}
	quoted := make([]string, len(targets))
	for i, t := range targets {
		quoted[i] = strconv.Quote(t)
	}
	cfg := fmt.Sprintf("global: {scrape_interval: %s, evaluation_interval: %s}\nrule_files: [%s]\nscrape_configs:\n  - job_name: %s\n    static_configs: [{targets: [%s]}]\n",
		promDuration(p.scrapeEvery), promDuration(p.evalEvery), strings.Join(ruleFiles, ", "), promJob, strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		p.close()
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		p.close()
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p.url = "http://" + addr
	p.cmd = exec.CommandContext(context.WithoutCancel(ctx), bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr, "--log.level=warn")
	p.cmd.Dir = dir
	var logs strings.Builder
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, &limitedWriter{w: &logs, n: 8 << 10}
	if err := p.cmd.Start(); err != nil {
		p.close()
		return nil, fmt.Errorf("start prometheus: %w", err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := p.hc.Get(p.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.exited:
			p.close()
			return nil, fmt.Errorf("prometheus exited: %s", strings.TrimSpace(logs.String()))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.close()
			return nil, fmt.Errorf("prometheus not ready after 30s")
		}
	}
}

// promDuration writes d as Prometheus reads durations (no fractions).
func promDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}

// close stops the server and removes its data.
func (p *liveProm) close() {
	if p == nil {
		return
	}
	if p.team {
		return
	}
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	_ = os.RemoveAll(p.dir)
}

type promResponse struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

func (p *liveProm) api(ctx context.Context, path string, q url.Values) (*promResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: bad request", path)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		if ue, ok := err.(*url.Error); ok && p.team {
			return nil, fmt.Errorf("prometheus_url %s: %w", path, ue.Err) // not the URL: it may hold credentials
		}
		return nil, err
	}
	defer resp.Body.Close()
	var out promResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&out); err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", path, err)
	}
	if out.Status != "success" {
		return nil, fmt.Errorf("prometheus %s: %s", path, out.Error)
	}
	return &out, nil
}

// stopHolds judges stop_when.promql at elapsed: the expression returns a
// sample now and has at every check for For.
func (p *liveProm) stopHolds(ctx context.Context, sw *StopWhen, elapsed time.Duration) (string, bool) {
	r, err := p.api(ctx, "/api/v1/query", url.Values{"query": {sw.PromQL}})
	if err != nil || len(r.Data.Result) == 0 {
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

// alerts reads the ALERTS series' samples from start to end and turns
// them into episodes: fired at the first evaluation that wrote it firing,
// resolved one evaluation interval after its last sample when a gap or the
// run's end follows.
func (p *liveProm) alerts(ctx context.Context, start, end time.Time) ([]score.PromEpisode, error) {
	// A range selector at an instant returns the raw samples: ALERTS is
	// written at each evaluation, so these are the evaluations' times.
	span := int64(end.Sub(start)/time.Second) + 2
	r, err := p.api(ctx, "/api/v1/query", url.Values{
		"query": {fmt.Sprintf("ALERTS[%ds]", span)},
		"time":  {strconv.FormatFloat(float64(end.UnixMilli())/1000, 'f', 3, 64)},
	})
	if err != nil {
		return nil, err
	}
	type key struct{ name, labels string }
	points := map[key]map[int64]string{} // unix ms -> alertstate
	var keys []key
	for _, res := range r.Data.Result {
		m := res.Metric
		state := m["alertstate"]
		delete(m, "alertstate")
		delete(m, "__name__")
		k := key{m["alertname"], labels.FromMap(m).String()}
		if points[k] == nil {
			points[k] = map[int64]string{}
			keys = append(keys, k)
		}
		for _, v := range res.Values {
			ts, _ := v[0].(float64)
			points[k][int64(ts*1000+0.5)] = state
		}
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.name+a.labels, b.name+b.labels) })
	var out []score.PromEpisode
	step := p.evalEvery.Milliseconds()
	gap := step * 3 / 2
	for _, k := range keys {
		var ts []int64
		for t := range points[k] {
			ts = append(ts, t)
		}
		slices.Sort(ts)
		var cur *score.PromEpisode
		prev := int64(0)
		for _, t := range ts {
			st := points[k][t]
			if cur != nil && t-prev > gap { // a gap: it resolved
				cur.ResolvedAt = time.UnixMilli(prev + step)
				if cur.FiredAt.IsZero() {
					cur = nil
				} else {
					out = append(out, *cur)
					cur = nil
				}
			}
			if cur == nil {
				cur = &score.PromEpisode{Rule: k.name, Labels: k.labels, Severity: p.severity[k.name], PendingAt: time.UnixMilli(t)}
			}
			if st == "firing" && cur.FiredAt.IsZero() {
				cur.FiredAt = time.UnixMilli(t)
			}
			prev = t
		}
		if cur != nil && !cur.FiredAt.IsZero() {
			if end.Sub(time.UnixMilli(prev)) > p.evalEvery*3/2 {
				cur.ResolvedAt = time.UnixMilli(prev + step)
			}
			out = append(out, *cur)
		}
	}
	return out, nil
}

// score is the rules' scores over the faults of res.
func (p *liveProm) score(ctx context.Context, res *score.Result, start, end time.Time) (*score.PromAlerts, error) {
	if p == nil || len(p.rules) == 0 {
		return nil, nil
	}
	eps, err := p.alerts(ctx, start, end)
	if err != nil {
		return nil, err
	}
	out := &score.PromAlerts{Source: "prometheus", ScrapeInterval: p.scrapeEvery, EvalInterval: p.evalEvery,
		Rules: p.rules, Episodes: eps}
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
