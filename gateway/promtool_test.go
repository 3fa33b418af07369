package gateway_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// promtool returns the path of Prometheus's promtool. Without it the test
// is skipped, or fails when BROWNOUT_REQUIRE_PROMTOOL=1 (CI installs
// Debian's prometheus package).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("BROWNOUT_REQUIRE_PROMTOOL") == "1" {
			t.Fatal("promtool is not installed and BROWNOUT_REQUIRE_PROMTOOL=1 (apt-get install prometheus)")
		}
		t.Skip("promtool is not installed (apt-get install prometheus); set BROWNOUT_REQUIRE_PROMTOOL=1 to make this a failure")
	}
	return p
}

// TestPrometheusRulesPromtool: Prometheus itself accepts the shipped alert
// rules (promtool check rules) and evaluates them as their unit tests
// expect, each alert firing on its input series and quiet on the others
// (promtool test rules).
func TestPrometheusRulesPromtool(t *testing.T) {
	pt := promtool(t)
	dir := filepath.Join("..", "examples", "prometheus")
	for _, args := range [][]string{
		{"check", "rules", "brownout-alerts.yaml"},
		{"test", "rules", "brownout-alerts.test.yaml"},
	} {
		cmd := exec.Command(pt, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %v:\n%s", args, out)
	}
}
