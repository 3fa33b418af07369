package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios"
)

// TestGamedayCompareInputErrors: a bake-off refuses what it cannot play or
// measure before any traffic flows (exit 2, the problem named).
func TestGamedayCompareInputErrors(t *testing.T) {
	dir := t.TempDir()
	hf := filepath.Join(dir, "headers.yaml")
	require.NoError(t, os.WriteFile(hf, []byte("Authorization: Bearer ${BROWNOUT_TEST_COMPARE_UNSET}\n"), 0o644))
	const bakeoff = "../../examples/gamedays/bakeoff-429-storm.yaml"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no gateway", []string{bakeoff}, "--gateway: name at least one gateway"},
		{"bad gateway", []string{bakeoff, "--gateway", "no-equals"}, `want NAME=URL or NAME=GATEWAY_CONFIG`},
		{"bad name", []string{bakeoff, "--gateway", "a/b=http://127.0.0.1:1"}, "a contestant's name is letters"},
		{"same name twice", []string{bakeoff, "--gateway", "a=http://127.0.0.1:1", "--gateway", "a=http://127.0.0.1:2"}, `two gateways named "a"`},
		{"bad config", []string{bakeoff, "--gateway", "a=nope.yaml"}, "gateway a:"},
		{"headers for nobody", []string{bakeoff, "--gateway", "a=http://127.0.0.1:1", "--headers-file", "b=" + hf}, "NAME one of the --gateway names"},
		{"header variable unset", []string{bakeoff, "--gateway", "a=http://127.0.0.1:1", "--headers-file", "a=" + hf},
			"headers.yaml:1:16: Authorization: environment variable BROWNOUT_TEST_COMPARE_UNSET is not set"},
		{"unmeasurable expectation", []string{"../../examples/gamedays/flapping-provider.yaml", "--gateway", "a=http://127.0.0.1:1"},
			"expect.targets.openai/gpt-4o.flaps: flaps cannot be measured in this game day: a black-box gateway reports no breaker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"gameday", "compare"}, tt.args...)...)
			require.Equal(t, exitUsageErr, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			require.Contains(t, errOut, tt.want)
		})
	}
}

// TestGamedayCompareRepeatJSON: a bake-off of two rounds between two
// brownout gateways (in-process, on free loopback ports) writes, with
// --output json, the comparison and nothing else on stdout: both rounds
// per contestant, each with its seeds, score distributions and a verdict
// by pass rate; --out holds compare.json and the reports.
func TestGamedayCompareRepeatJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("four live runs of a second each")
	}
	dir, gw, game := liveFiles(t, "1500ms")
	base := freePort(t) - 3
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "--base-port", fmt.Sprint(base), "gameday", "compare", game,
		"--gateway", "one="+gw, "--gateway", "two="+gw, "--repeat", "2", "--output", "json", "--out", out)
	require.Equal(t, exitOK, code, "stderr:\n%s", stderr)
	var c scenarios.Comparison
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&c), "stdout is one JSON document:\n%s", stdout)
	require.False(t, dec.More(), "nothing after the JSON on stdout")
	require.Equal(t, 2, c.Rounds)
	require.Equal(t, uint64(11), c.Seed)
	require.True(t, c.Pass)
	require.Len(t, c.Contestants, 2)
	for _, cr := range c.Contestants {
		require.NotNil(t, cr.Repeat, cr.Name)
		require.Equal(t, []uint64{11, 12}, cr.Repeat.Seeds, cr.Name)
		require.True(t, cr.Pass, cr.Name)
		require.Len(t, cr.Repeat.Expectations, 1)
		require.Equal(t, 2, cr.Repeat.Expectations[0].N)
		require.NotEmpty(t, cr.Result.Log, "the first round's log is kept for the reports")
	}
	for _, f := range []string{"compare.json", "compare.md", "compare.html", "one/result.json", "two/report.html"} {
		require.FileExists(t, filepath.Join(out, f))
	}
	md, err := os.ReadFile(filepath.Join(out, "compare.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "2 rounds, seeds 11…12")
	require.Contains(t, string(md), "| availability >= 90.00% | PASS 2/2 (needs 100%) | PASS 2/2 (needs 100%) |")
	require.NotContains(t, string(md), "| false_alarms |", "a black box's false alarms are not measured, so not summarized")

	code, _, stderr = runCLI(t, "gameday", "compare", game, "--gateway", "one="+gw, "--repeat", "0")
	require.Equal(t, exitUsageErr, code)
	require.Contains(t, stderr, "--repeat: 0 rounds")
}

// liveFiles writes a small live game day in a temporary directory: two
// OpenAI mocks (a/m, b/m) and a gateway on ${BROWNOUT_BASE_PORT+1..3},
// 8 requests a second, a/m down from 400ms for 600ms. It returns the
// directory, the gateway config and the game day.
func liveFiles(t *testing.T, duration string) (dir, gw, game string) {
	t.Helper()
	dir = t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	write("providers.yaml", `version: 1
providers:
  - name: a
    format: openai
    listen: "127.0.0.1:${BROWNOUT_BASE_PORT+1}"
    models: [{name: m, ttft: {fixed: 20ms}, tokens_per_second: 400, output_tokens: 8}]
  - name: b
    format: openai
    listen: "127.0.0.1:${BROWNOUT_BASE_PORT+2}"
    models: [{name: m, ttft: {fixed: 20ms}, tokens_per_second: 400, output_tokens: 8}]
`)
	gw = write("gateway.yaml", `version: 1
listen: "127.0.0.1:${BROWNOUT_BASE_PORT+3}"
providers:
  - {name: a, kind: openai, base_url: "http://127.0.0.1:${BROWNOUT_BASE_PORT+1}/v1", api_key: mock-key}
  - {name: b, kind: openai, base_url: "http://127.0.0.1:${BROWNOUT_BASE_PORT+2}/v1", api_key: mock-key}
routes:
  - name: chat
    targets:
      - {provider: a, model: m, retry: {attempts: 1}}
      - {provider: b, model: m}
`)
	game = write("game.yaml", `version: 1
name: repeat-bakeoff
seed: 11
duration: `+duration+`
providers: {file: providers.yaml}
gateway: {config: gateway.yaml}
traffic:
  - {route: chat, rate: 8/s, arrival: uniform, prompt_tokens: 20, stream: 50%}
timeline:
  - {name: a-down, at: 400ms, for: 600ms, target: a/m, fault: {kind: http_error, status: 503}}
expect:
  availability: {min: 90%}
`)
	return dir, gw, game
}
