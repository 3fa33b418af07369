package alerts

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/brownout-dev/brownout/yamlfile"
)

// Kind names what a rule measures.
type Kind string

// Rule kinds (see the package documentation).
const (
	FallbackRate        Kind = "fallback_rate"
	TTFTPenalty         Kind = "ttft_penalty"
	SpendRate           Kind = "spend_rate"
	FallbackSpendShare  Kind = "fallback_spend_share"
	FallbackUnexercised Kind = "fallback_unexercised"
	BreakerFlapping     Kind = "breaker_flapping"
	DemotionFlapping    Kind = "demotion_flapping"
)

// Severity says who an alert wakes up.
type Severity string

// Severities.
const (
	Warn Severity = "warn"
	Page Severity = "page"
)

// Threshold is a rule's bound, written as a number (2, 0.25, 40.5) or as a
// percentage ("25%" is 0.25).
type Threshold float64

// UnmarshalYAML reads a number or a percentage.
func (t *Threshold) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return yamlfile.ValueError(n, "threshold must be a number or a percentage like \"25%%\"")
	}
	s := strings.TrimSpace(n.Value)
	if strings.HasSuffix(s, "%") {
		p, err := yamlfile.ParsePercent(s)
		if err != nil {
			return yamlfile.ValueError(n, "%v", err)
		}
		*t = Threshold(p)
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return yamlfile.ValueError(n, "invalid threshold %q (use a number or \"25%%\")", n.Value)
	}
	*t = Threshold(v)
	return nil
}

// Rule is one alerting rule (an entry of `alerts.rules` in the gateway YAML).
type Rule struct {
	// Name identifies the alert in events and notifications.
	Name     string   `yaml:"name" json:"name"`
	Kind     Kind     `yaml:"kind" json:"kind"`
	Severity Severity `yaml:"severity" json:"severity"`
	// Route restricts a route-scoped rule to one route; empty means every
	// route (fallback_rate, ttft_penalty) or all traffic (spend_rate,
	// fallback_spend_share).
	Route string `yaml:"route,omitempty" json:"route,omitempty"`
	// Target restricts a target-scoped rule (fallback_unexercised,
	// breaker_flapping, demotion_flapping) to one "provider:model"; empty
	// means every target.
	Target string `yaml:"target,omitempty" json:"target,omitempty"`
	// Window is the sliding window the rule looks at (for
	// fallback_unexercised: how long a fallback may stay unused).
	Window yamlfile.Duration `yaml:"window" json:"window"`
	// Threshold fires the alert when the measured value exceeds it: a
	// fraction for rates and shares, a multiplier for ttft_penalty, dollars
	// per hour for spend_rate, a count of openings for breaker_flapping, a
	// count of demotions for demotion_flapping.
	// Unused by fallback_unexercised.
	Threshold Threshold `yaml:"threshold,omitempty" json:"threshold,omitempty"`
	// MinRequests is the least number of requests (or, for ttft_penalty,
	// first-token samples) in the window for a rate to count. Default 10.
	MinRequests int `yaml:"min_requests,omitempty" json:"min_requests,omitempty"`
	// Baseline is a fixed TTFT baseline for ttft_penalty; when zero the
	// baseline is the route's p95 over BaselineWindow before the window.
	Baseline yamlfile.Duration `yaml:"baseline,omitempty" json:"baseline,omitempty"`
	// BaselineWindow is how far back ttft_penalty looks for its baseline.
	// Default 1h.
	BaselineWindow yamlfile.Duration `yaml:"baseline_window,omitempty" json:"baseline_window,omitempty"`
}

// FieldError is a problem with one field of a rule.
type FieldError struct {
	Field string // the YAML field name, e.g. "threshold"
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Validate checks a rule and returns the first problem as a *FieldError.
func (r Rule) Validate() error {
	if r.Name == "" {
		return &FieldError{"name", "required"}
	}
	switch r.Kind {
	case FallbackRate, FallbackSpendShare:
		if r.Threshold <= 0 || r.Threshold > 1 {
			return &FieldError{"threshold", "must be a share between 0% and 100%"}
		}
	case TTFTPenalty:
		if r.Threshold <= 1 {
			return &FieldError{"threshold", "must be a multiplier above 1 (2 means twice the baseline)"}
		}
	case SpendRate:
		if r.Threshold <= 0 {
			return &FieldError{"threshold", "must be a positive budget in dollars per hour"}
		}
	case BreakerFlapping:
		if r.Threshold < 1 {
			return &FieldError{"threshold", "must be a count of breaker openings of at least 1"}
		}
	case DemotionFlapping:
		if r.Threshold < 1 {
			return &FieldError{"threshold", "must be a count of demotions of at least 1"}
		}
	case FallbackUnexercised:
	case "":
		return &FieldError{"kind", "required"}
	default:
		return &FieldError{"kind", fmt.Sprintf("unknown kind %q (one of fallback_rate, ttft_penalty, spend_rate, fallback_spend_share, fallback_unexercised, breaker_flapping, demotion_flapping)", r.Kind)}
	}
	switch r.Severity {
	case Warn, Page:
	default:
		return &FieldError{"severity", fmt.Sprintf("%q is not warn or page", r.Severity)}
	}
	if r.Window <= 0 {
		return &FieldError{"window", "required (a duration such as \"5m\")"}
	}
	if r.MinRequests < 0 {
		return &FieldError{"min_requests", "must not be negative"}
	}
	if r.Target != "" && !strings.Contains(r.Target, ":") {
		return &FieldError{"target", fmt.Sprintf("%q is not \"provider:model\"", r.Target)}
	}
	return nil
}

func (r Rule) minRequests() int {
	if r.MinRequests == 0 {
		return 10
	}
	return r.MinRequests
}

func (r Rule) baselineWindow() time.Duration {
	if r.BaselineWindow == 0 {
		return time.Hour
	}
	return r.BaselineWindow.D()
}

// DefaultRules are the rules the issue asks of every gateway: fallback rate
// above 5% (warn) and 25% (page) over 5 minutes, p95 TTFT above twice the
// baseline, a fallback path unused for 7 days, more than 3 breaker
// openings of one target in 10 minutes, and more than 3 demotions of one
// target in 15 minutes (health letting users back onto a sick target again
// and again: each return costs them slow or failed answers).
func DefaultRules() []Rule {
	return []Rule{
		{Name: "FallbackRateHigh", Kind: FallbackRate, Severity: Warn, Window: yamlfile.Duration(5 * time.Minute), Threshold: 0.05},
		{Name: "FallbackRateCritical", Kind: FallbackRate, Severity: Page, Window: yamlfile.Duration(5 * time.Minute), Threshold: 0.25},
		{Name: "TTFTPenalty", Kind: TTFTPenalty, Severity: Warn, Window: yamlfile.Duration(5 * time.Minute), Threshold: 2},
		{Name: "FallbackUnexercised", Kind: FallbackUnexercised, Severity: Warn, Window: yamlfile.Duration(7 * 24 * time.Hour)},
		{Name: "BreakerFlapping", Kind: BreakerFlapping, Severity: Warn, Window: yamlfile.Duration(10 * time.Minute), Threshold: 3},
		{Name: "DemotionFlapping", Kind: DemotionFlapping, Severity: Warn, Window: yamlfile.Duration(15 * time.Minute), Threshold: 3},
	}
}
