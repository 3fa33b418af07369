package scenarios

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rulesThatCannotFire are the example rules
// (examples/prometheus/brownout-alerts.yaml) that no example game day
// fires, and why. TestExampleRulesThatNeverFire reports them and fails
// when the list is out of date: a rule that starts firing somewhere, or
// one more rule that fires nowhere.
var rulesThatCannotFire = map[string]string{
	"BrownoutTTFTPenalty":          "its baseline is the hour before the last 5 minutes, and the TTFT doubling must last for: 5m: no example holds a latency fault that long",
	"BrownoutSpendRateOverBudget":  "a [15m] spend rate above $40/h for: 5m: the examples that name the rules last under 20 minutes, and rate() over 15 minutes of a younger run spreads its spend over the whole window",
	"BrownoutFallbackSpendShare":   "a 30% fallback share of an hour's spend, for: 15m: longer than every example",
	"BrownoutFallbackUnexercised":  "7 days without a fallback serving, for: 1h: longer than every example (and every example exercises its fallbacks)",
	"BrownoutConfigReloadRejected": "no example rejects a configuration reload",
}

// TestExampleRulesThatNeverFire plays every example game day that names
// Prometheus rules and reports the rules that fired in none.
func TestExampleRulesThatNeverFire(t *testing.T) {
	files, err := filepath.Glob("../examples/gamedays/*.yaml")
	require.NoError(t, err)
	fired := map[string][]string{}
	var all []string
	played := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		if !strings.Contains(string(src), "prometheus_rules:") {
			continue
		}
		s, err := Load(f)
		require.NoError(t, err, f)
		res, err := Run(context.Background(), s, Options{})
		require.NoError(t, err, f)
		require.NotNil(t, res.PromAlerts, f)
		played++
		for _, r := range res.PromAlerts.Rules {
			if !slices.Contains(all, r.Name) {
				all = append(all, r.Name)
			}
			if !slices.Contains(res.PromAlerts.NeverFired, r.Name) {
				fired[r.Name] = append(fired[r.Name], filepath.Base(f))
			}
		}
	}
	require.GreaterOrEqual(t, played, 3, "the flagship and at least two more examples name the rules")
	var never []string
	for _, r := range all {
		if len(fired[r]) == 0 {
			never = append(never, r)
			t.Logf("never fires in any example: %s (%s)", r, rulesThatCannotFire[r])
		} else {
			t.Logf("fires: %s in %s", r, strings.Join(fired[r], ", "))
		}
	}
	var want []string
	for _, r := range all {
		if _, ok := rulesThatCannotFire[r]; ok {
			want = append(want, r)
		}
	}
	require.Equal(t, want, never, "update rulesThatCannotFire: the rules no example fires changed")
}
