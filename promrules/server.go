package promrules

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
)

// ErrNoServer is returned by Start when no prometheus binary is on PATH.
var ErrNoServer = errors.New("no prometheus server on PATH (apt-get install prometheus)")

// Server is a real Prometheus server a live game day asks: one Start runs
// (Debian's prometheus, scraping the given targets with the given rule
// files, on a free loopback port and a temporary data directory), or a
// team's own at a URL (Remote). Its answers are the engine's own, so the
// simulator's Evaluator is judged against them.
type Server struct {
	cmd       *exec.Cmd
	dir       string
	url       string
	hc        *http.Client
	evalEvery time.Duration
	exited    chan struct{}
	// remote: url is the team's own server, a secret that no error names.
	remote bool
}

// ServerConfig is what Start runs.
type ServerConfig struct {
	// RuleFiles are the rule files' contents, copied into the server's
	// directory.
	RuleFiles [][]byte
	// Job and Targets (host:port) are the one scrape job.
	Job     string
	Targets []string
	// ScrapeEvery and EvalEvery are the global scrape and evaluation
	// intervals.
	ScrapeEvery, EvalEvery time.Duration
}

// Remote is the team's own Prometheus server at base (a secret: no error
// names it); evalEvery is its evaluation interval. Close does nothing.
func Remote(base string, evalEvery time.Duration) *Server {
	return &Server{url: strings.TrimSuffix(base, "/"), remote: true, hc: &http.Client{Timeout: 5 * time.Second}, evalEvery: evalEvery}
}

// Start runs a Prometheus server for cfg and waits until it is ready (30s
// at the most). ErrNoServer when there is no prometheus binary.
func Start(ctx context.Context, cfg ServerConfig) (*Server, error) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		return nil, ErrNoServer
	}
	dir, err := os.MkdirTemp("", "brownout-prometheus-")
	if err != nil {
		return nil, err
	}
	p := &Server{dir: dir, hc: &http.Client{Timeout: 5 * time.Second}, evalEvery: cfg.EvalEvery, exited: make(chan struct{})}
	var ruleFiles []string
	for i, data := range cfg.RuleFiles {
		name := fmt.Sprintf("rules-%d.yaml", i)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			p.Close()
			return nil, err
		}
		ruleFiles = append(ruleFiles, strconv.Quote(name))
	}
	quoted := make([]string, len(cfg.Targets))
	for i, t := range cfg.Targets {
		quoted[i] = strconv.Quote(t)
	}
	conf := fmt.Sprintf("global: {scrape_interval: %s, evaluation_interval: %s}\nrule_files: [%s]\nscrape_configs:\n  - job_name: %s\n    static_configs: [{targets: [%s]}]\n",
		promDuration(cfg.ScrapeEvery), promDuration(cfg.EvalEvery), strings.Join(ruleFiles, ", "), cfg.Job, strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o600); err != nil {
		p.Close()
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		p.Close()
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
		p.Close()
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
			p.Close()
			return nil, fmt.Errorf("prometheus exited: %s", strings.TrimSpace(logs.String()))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Close()
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

// Close stops a started server and removes its data.
func (p *Server) Close() {
	if p == nil || p.remote {
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

func (p *Server) api(ctx context.Context, path string, q url.Values) (*promResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: bad request", path)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		if ue, ok := err.(*url.Error); ok && p.remote {
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

// Holds reports whether expr returns a sample now (false on an error).
func (p *Server) Holds(ctx context.Context, expr string) bool {
	r, err := p.api(ctx, "/api/v1/query", url.Values{"query": {expr}})
	return err == nil && len(r.Data.Result) > 0
}

// Episode is one stretch of an alert (a rule and its labels) from the
// server's ALERTS series: pending from PendingAt, firing from FiredAt
// (zero: never fired), resolved at ResolvedAt (zero: still firing at the
// end).
type Episode struct {
	Rule, Labels                   string
	PendingAt, FiredAt, ResolvedAt time.Time
}

// Alerts reads the ALERTS series' samples from start to end and turns
// them into the episodes that fired: fired at the first evaluation that
// wrote it firing, resolved one evaluation interval after its last sample
// when a gap or the run's end follows.
func (p *Server) Alerts(ctx context.Context, start, end time.Time) ([]Episode, error) {
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
	var out []Episode
	step := p.evalEvery.Milliseconds()
	gap := step * 3 / 2
	for _, k := range keys {
		var ts []int64
		for t := range points[k] {
			ts = append(ts, t)
		}
		slices.Sort(ts)
		var cur *Episode
		prev := int64(0)
		for _, t := range ts {
			st := points[k][t]
			if cur != nil && t-prev > gap { // a gap: it resolved
				cur.ResolvedAt = time.UnixMilli(prev + step)
				if !cur.FiredAt.IsZero() {
					out = append(out, *cur)
				}
				cur = nil
			}
			if cur == nil {
				cur = &Episode{Rule: k.name, Labels: k.labels, PendingAt: time.UnixMilli(t)}
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
