package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
