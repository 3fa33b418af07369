package gateway_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/brownout-dev/brownout/gateway/alerts"
)

// TestPrometheusRules: the shipped Prometheus rules parse, cover every
// built-in rule kind, and use only metrics the gateway exports.
func TestPrometheusRules(t *testing.T) {
	b, err := os.ReadFile("../examples/prometheus/brownout-alerts.yaml")
	require.NoError(t, err)
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert  string            `yaml:"alert"`
				Expr   string            `yaml:"expr"`
				Labels map[string]string `yaml:"labels"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(b, &f))
	require.Len(t, f.Groups, 1)
	exported := map[string]bool{
		"brownout_requests_total": true, "brownout_time_to_first_token_seconds_bucket": true,
		"brownout_time_to_first_token_seconds_count": true, "brownout_cost_dollars_total": true,
		"brownout_attempts_total": true, "brownout_breaker_transitions_total": true,
		"brownout_alert_deliveries_total": true, "brownout_config_reloads_total": true,
		"brownout_health_changes_total": true,
	}
	names := map[string]bool{}
	metric := regexp.MustCompile(`brownout_[a-z_]+`)
	for _, r := range f.Groups[0].Rules {
		names[r.Alert] = true
		assert.Contains(t, []string{"warn", "page"}, r.Labels["severity"], r.Alert)
		for _, m := range metric.FindAllString(r.Expr, -1) {
			assert.True(t, exported[m], "%s uses %s", r.Alert, m)
		}
	}
	for _, k := range []alerts.Kind{alerts.FallbackRate, alerts.TTFTPenalty, alerts.SpendRate, alerts.FallbackSpendShare, alerts.FallbackUnexercised, alerts.BreakerFlapping, alerts.DemotionFlapping} {
		want := map[alerts.Kind]string{
			alerts.FallbackRate: "BrownoutFallbackRateCritical", alerts.TTFTPenalty: "BrownoutTTFTPenalty",
			alerts.SpendRate: "BrownoutSpendRateOverBudget", alerts.FallbackSpendShare: "BrownoutFallbackSpendShare",
			alerts.FallbackUnexercised: "BrownoutFallbackUnexercised", alerts.BreakerFlapping: "BrownoutBreakerFlapping",
			alerts.DemotionFlapping: "BrownoutDemotionFlapping",
		}[k]
		assert.True(t, names[want], "no Prometheus rule for %s", k)
	}
}
