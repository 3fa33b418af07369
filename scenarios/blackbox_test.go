package scenarios_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/reports"
	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// naiveScenario is a short live game day against a black box at url whose
// one mock provider listens on port: 429s on the primary for 5 seconds.
func naiveScenario(port, url, extra string) string {
	return `version: 1
name: naive-black-box
seed: 3
duration: 12s
slo: {window: 4s}
providers:
  inline:
    - name: openai
      format: openai
      listen: 127.0.0.1:` + port + `
      models:
        - name: gpt-4o
          ttft: {fixed: 40ms}
          tokens_per_second: 500
          output_tokens: {min: 20, max: 40}
          price: {input_per_mtok: 2.5, output_per_mtok: 10, cached_input_per_mtok: 1.25}
        - name: gpt-4o-mini
          ttft: {fixed: 30ms}
          tokens_per_second: 800
          output_tokens: {min: 20, max: 40}
          price: {input_per_mtok: 0.15, output_per_mtok: 0.6}
gateway:
  url: ` + url + `
  primary: openai/gpt-4o
  headers:
    Authorization: "Bearer ${BROWNOUT_TEST_VIRTUAL_KEY}"
    X-Route-Config: naive
traffic:
  - {route: chat, rate: 20/s, stream: 50%, prompt_tokens: 100}
timeline:
  - {name: primary-429, at: 4s, for: 5s, target: openai/gpt-4o, fault: {kind: http_error, status: 429}}
` + extra
}

const virtualKey = "sk-vk-7f3a9c1e5b2d4f60"

// TestBlackBoxNaiveGateway plays a game day against a gateway that is not
// brownout's (the naive retrying proxy above) and checks what a black box
// can be measured on.
func TestBlackBoxNaiveGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("live run takes 12s of real time")
	}
	t.Setenv("BROWNOUT_TEST_VIRTUAL_KEY", virtualKey)
	port := freePorts(t, 1)[0]
	base := "http://127.0.0.1:" + port
	g := startNaive(t, 2, naiveUpstream{base, "gpt-4o"}, naiveUpstream{base, "gpt-4o-mini"})
	s, err := scenarios.Parse("naive.yaml", []byte(naiveScenario(port, g.url, "expect: {availability: {min: 95%}}\n")))
	require.NoError(t, err)
	res, err := scenarios.Run(context.Background(), s, scenarios.Options{Mode: score.ModeLive})
	require.NoError(t, err)
	require.True(t, res.BlackBox)
	out := t.TempDir()
	require.NoError(t, res.WriteDir(out))
	require.NoError(t, reports.WriteFiles(out, res))

	t.Run("headers arrive", func(t *testing.T) {
		assert.Equal(t, res.Overall.Availability.Requests, g.seen("Bearer "+virtualKey), "every request carries the scenario's header, its ${ENV} expanded")
	})
	t.Run("secret never written", func(t *testing.T) {
		requireNoSecret(t, out, virtualKey)
	})
	t.Run("traffic shift by requests", func(t *testing.T) {
		f, _ := res.Fault("primary-429", "")
		assert.Nil(t, f.ShiftFirst, "the naive gateway tries the primary first for every request")
		require.NotNil(t, f.ShiftServed, "but users are served by the fallback")
		assert.True(t, f.Detected)
		assert.Equal(t, *f.ShiftServed, f.TTD)
		assert.Greater(t, f.LoadRatio, 2.0, "each request calls the throttled primary three times")
	})
	t.Run("degraded from the journals", func(t *testing.T) {
		f, ok := res.Fault("primary-429", "")
		require.True(t, ok)
		assert.Greater(t, f.Availability.DegradedRate, 0.9, "the naive gateway answers from gpt-4o-mini during the 429s")
		assert.Positive(t, res.Overall.Availability.Served, "and from the primary outside them")
		assert.True(t, res.Measured["degraded"].Measured)
	})
	t.Run("journals in the out dir", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(out, score.JournalFile))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		require.Len(t, lines, len(res.Journal()))
		var j score.JournalEntry
		require.NoError(t, json.Unmarshal([]byte(lines[0]), &j))
		assert.NotEmpty(t, j.RequestID)
		assert.Equal(t, "openai:gpt-4o", j.Target)
	})
	t.Run("cost from the providers file's prices", func(t *testing.T) {
		prices := map[string][2]float64{"openai:gpt-4o": {2.5, 10}, "openai:gpt-4o-mini": {0.15, 0.6}}
		want := map[string]float64{}
		for _, j := range res.Journal() {
			if j.Outcome == "ok" || j.OutputTokens > 0 {
				p := prices[j.Target]
				want[j.Target] += (float64(j.InputTokens)*p[0] + float64(j.OutputTokens)*p[1]) / 1e6
			}
		}
		require.True(t, res.Measured["cost_multiplier"].Measured)
		require.Len(t, res.Overall.Cost.ByTarget, 2, "the primary and, during the 429s, the fallback")
		for k, c := range want {
			assert.InEpsilon(t, c, res.Overall.Cost.ByTarget[k], 1e-9, k)
		}
		assert.Greater(t, res.Overall.Cost.Counterfactual, res.Overall.Cost.Total, "the fallback is cheaper than the primary")
	})
}

// TestUnmeasuredExpectation: an expectation on a score the game day
// cannot measure is a scenario error at the expectation, never a pass.
func TestUnmeasuredExpectation(t *testing.T) {
	t.Setenv("BROWNOUT_TEST_VIRTUAL_KEY", virtualKey)
	src := naiveScenario("19999", "http://127.0.0.1:1", `expect:
  flaps: {max: 0}
  cost_multiplier: {max: 3}
  degraded: {max: 10%}
  alerts:
    - {name: fallback_rate_high}
  steps:
    primary-429:
      detected_by: breaker
  targets:
    openai/gpt-4o: {flaps: {max: 1}}
`)
	src = strings.Replace(src, "  primary: openai/gpt-4o\n", "", 1)
	src = strings.ReplaceAll(src, "price: {input_per_mtok: 2.5, output_per_mtok: 10, cached_input_per_mtok: 1.25}", "context_window: 100000")
	src = strings.ReplaceAll(src, "price: {input_per_mtok: 0.15, output_per_mtok: 0.6}", "context_window: 100000")
	_, err := scenarios.Parse("u.yaml", []byte(src))
	require.ErrorIs(t, err, scenarios.ErrInvalid)
	want := []string{
		"u.yaml:32:10: expect.flaps: flaps cannot be measured in this game day: a black-box gateway reports no breaker, health, detector, probe or alert events",
		"u.yaml:33:20: expect.cost_multiplier: cost_multiplier cannot be measured in this game day: no prices: neither the gateway config nor the providers file prices a target",
		"u.yaml:34:13: expect.degraded: degraded cannot be measured in this game day: a black box does not say which target is its primary: set gateway.primary",
		"u.yaml:36:7: expect.alerts.0: alerts cannot be measured",
		"u.yaml:39:20: expect.steps.primary-429.detected_by: detected_by cannot be measured",
		"u.yaml:41:28: expect.targets.openai/gpt-4o.flaps: flaps cannot be measured",
	}
	for _, w := range want {
		assert.Contains(t, err.Error(), w)
	}
	assert.Len(t, strings.Split(err.Error(), "\n"), len(want), err.Error())
}

// requireNoSecret fails when any file under dir holds secret.
func requireNoSecret(t *testing.T, dir, secret string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if strings.Contains(string(b), secret) {
			return errors.New(p + " holds the secret")
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, n, 3, "the out dir holds the result, the log and the reports")
}

// TestHeaderErrors: a header whose variable is unset is an error naming
// the variable at the header's position, and never a value.
func TestHeaderErrors(t *testing.T) {
	t.Setenv("BROWNOUT_TEST_SET", virtualKey)
	src := naiveScenario("19999", "http://127.0.0.1:1", "")
	src = strings.Replace(src, "${BROWNOUT_TEST_VIRTUAL_KEY}", "${BROWNOUT_TEST_UNSET_VAR}", 1)
	src = strings.Replace(src, "X-Route-Config: naive", "X-Request-Id: ${BROWNOUT_TEST_SET}", 1)
	_, err := scenarios.Parse("h.yaml", []byte(src))
	require.ErrorIs(t, err, scenarios.ErrInvalid)
	msg := err.Error()
	assert.Contains(t, msg, "h.yaml:26:20: gateway.headers.Authorization: environment variable BROWNOUT_TEST_UNSET_VAR is not set")
	assert.Contains(t, msg, "gateway.headers.X-Request-Id: the game day sets X-Request-Id itself")
	assert.NotContains(t, msg, virtualKey)
}
