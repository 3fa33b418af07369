package promrules

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/yamlfile"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const testRules = `groups:
  - name: g
    rules:
      - alert: ErrorsHigh
        expr: sum(rate(errors_total[1m])) > 0.5
        for: 1m
        keep_firing_for: 30s
        labels: {severity: page}
`

// run scrapes errors_total every 15s (rising by perScrape(t) each time)
// and evaluates every 15s, returning the changes.
func run(t *testing.T, src string, until time.Duration, perScrape func(time.Duration) float64) []Change {
	t.Helper()
	rs, errs := Parse("r.yaml", []byte(src))
	require.Empty(t, errs)
	st := NewStore()
	ev := NewEvaluator(rs, st, Options{})
	var v float64
	var out []Change
	for at := time.Duration(0); at <= until; at += 15 * time.Second {
		v += perScrape(at)
		st.Append(labels.FromStrings("__name__", "errors_total"), t0.Add(at), v)
		ch, err := ev.Eval(context.Background(), t0.Add(at))
		require.NoError(t, err)
		out = append(out, ch...)
	}
	return out
}

func states(ch []Change) string {
	var b strings.Builder
	for _, c := range ch {
		b.WriteString(c.At.Sub(t0).String() + " " + string(c.To) + "\n")
	}
	return b.String()
}

func TestForAndKeepFiringFor(t *testing.T) {
	// 15 errors per scrape (1/s) from the 1m scrape to the 3m one. rate
	// over [1m] at 1m15s sees 0,0,15,30 at 30s..1m15s: 30 over 45s, not
	// extrapolated to the window's start because a counter at 0 there
	// could not have been lower (the zero-point rule), so 30/60s = 0.5,
	// not above 0.5. At 1m30s: 0,15,30,45 -> 45/60s = 0.75: pending;
	// for: 1m -> firing at 2m30s. The last rise is at 3m; at 3m30s the
	// window (2m30s,3m30s] holds one rise (15, extrapolated to 20) ->
	// 0.33: it stops holding; keep_firing_for 30s keeps it firing at 3m45s
	// (15s < 30s) and resolves it at 4m (30s is not < 30s).
	ch := run(t, testRules, 6*time.Minute, func(at time.Duration) float64 {
		if at >= time.Minute && at <= 3*time.Minute {
			return 15
		}
		return 0
	})
	require.Equal(t, "1m30s pending\n2m30s firing\n4m0s inactive\n", states(ch))
	require.Equal(t, `{alertname="ErrorsHigh", severity="page"}`, ch[0].Labels)
}

func TestForLongerThanTheFault(t *testing.T) {
	src := strings.Replace(testRules, "for: 1m", "for: 5m", 1)
	ch := run(t, src, 10*time.Minute, func(at time.Duration) float64 {
		if at >= time.Minute && at <= 4*time.Minute {
			return 15
		}
		return 0
	})
	for _, c := range ch {
		require.NotEqual(t, Firing, c.To, "fired at %s", c.At.Sub(t0))
	}
	require.Contains(t, states(ch), "pending")
}

func TestBadRuleFilesHavePositions(t *testing.T) {
	cases := map[string]struct{ src, want string }{
		"bad promql":    {"groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: sum(rate(x[5m])\n", "r.yaml:5:15: "},
		"unknown field": {"groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up\n        fro: 5m\n", "r.yaml:6: "},
		"bad duration":  {"groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up\n        for: 5 minutes\n", "r.yaml:6"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, errs := Parse("r.yaml", []byte(c.src))
			require.NotEmpty(t, errs)
			require.Contains(t, errs.Error(), c.want)
			var ye *yamlfile.Error = errs[0]
			require.Positive(t, ye.Line)
		})
	}
}

func TestTargetLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total", Help: "x"}, []string{"job"})
	reg.MustRegister(c)
	c.WithLabelValues("inner").Add(2)
	st := NewStore()
	st.TargetLabels = labels.FromStrings("instance", "gateway", "job", "brownout")
	mfs, err := reg.Gather()
	require.NoError(t, err)
	st.AppendFamilies(t0, mfs)
	ev := NewEvaluator(&Rules{}, st, Options{})
	v, err := ev.Query(context.Background(), `x_total{job="brownout"}`, t0)
	require.NoError(t, err)
	require.Len(t, v, 1)
	require.Equal(t, `{__name__="x_total", exported_job="inner", instance="gateway", job="brownout"}`, v[0].Metric.String())
}
