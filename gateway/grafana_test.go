package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/brownout-dev/brownout/gateway"
)

// dashboardQueries reads every PromQL expression of the example Grafana
// dashboard (panel targets and template variable queries), with Grafana's
// variables replaced by values Prometheus accepts.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../examples/grafana/brownout-dashboard.json")
	require.NoError(t, err)
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type  string `json:"type"`
				Query string `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(b, &d))
	vars := strings.NewReplacer("$__rate_interval", "5m", "$route", ".*", "$slo", "0.99")
	var out []string
	for _, p := range d.Panels {
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, tg := range p.Targets {
			out = append(out, vars.Replace(tg.Expr))
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((brownout_[a-z_]+), *[a-z_]+\)$`)
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			m := labelValues.FindStringSubmatch(v.Query)
			require.NotNil(t, m, "variable query %q", v.Query)
			out = append(out, m[1])
		}
	}
	return out
}

// TestGrafanaDashboardQueriesPromtool: every query of the dashboard is
// valid PromQL, as promtool checks it in a generated rules file.
func TestGrafanaDashboardQueriesPromtool(t *testing.T) {
	pt := promtool(t)
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for i, q := range dashboardQueries(t) {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:query_%d", i), Expr: q})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	require.NoError(t, os.WriteFile(f, b, 0o600))
	out, err := exec.Command(pt, "check", "rules", f).CombinedOutput()
	require.NoError(t, err, "promtool check rules:\n%s\n%s", out, b)
	assert.Contains(t, string(out), fmt.Sprintf("SUCCESS: %d rules found", len(rules)))
}

// TestGrafanaDashboardMetricsExported: every metric the dashboard names is
// on the gateway's /metrics once it has served traffic with a fail-over.
func TestGrafanaDashboardMetricsExported(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	addFault(t, m.alpha, `{kind: http_error, status: 429, first: 1}`)
	for _, stream := range []bool{false, true, false} {
		r := g.do(t, stream, nil)
		require.Equal(t, 200, r.status, r.body)
	}
	resp, err := http.Get(g.url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	exported := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		exported[line[:strings.IndexAny(line, "{ ")]] = true
	}
	metric := regexp.MustCompile(`brownout_[a-z_]+`)
	seen := 0
	for _, q := range dashboardQueries(t) {
		for _, name := range metric.FindAllString(q, -1) {
			seen++
			assert.True(t, exported[name], "the dashboard's %q names %s, which /metrics does not export", q, name)
		}
	}
	assert.Greater(t, seen, 10)
}
