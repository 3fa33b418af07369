package lifecycle

import (
	"reflect"
	"slices"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// What a reload rebuilds beside the decision core (Reload), decided here
// once for both engines: the live gateway and the simulator keep or
// replace their detectors and alert evaluator by the same rules.

// ReloadDetectors returns the output detectors a configuration runs with:
// old, with the baselines it learned, when the detector settings are
// unchanged (oldCfg; nil on the first load); new ones otherwise; nil when
// detectors are disabled.
func ReloadDetectors(old *evals.Detectors, oldCfg *evals.DetectorConfig, cfg evals.DetectorConfig, disabled bool) *evals.Detectors {
	if disabled {
		return nil
	}
	if old != nil && oldCfg != nil && reflect.DeepEqual(*oldCfg, cfg) {
		return old
	}
	return evals.NewDetectors(cfg)
}

// ReloadAlerts returns the alert evaluator a configuration runs with: old,
// with its firing state, when the rules are unchanged (oldRules); a new one
// otherwise; nil without rules. Its routes are set to routes in every case.
func ReloadAlerts(old *alerts.Evaluator, oldRules, rules []alerts.Rule, routes map[string][]string) *alerts.Evaluator {
	ev := old
	if old == nil || !reflect.DeepEqual(oldRules, rules) {
		ev = nil
		if len(rules) > 0 {
			ev = alerts.NewEvaluator(rules)
		}
	}
	if ev != nil {
		ev.SetRoutes(routes)
	}
	return ev
}

// AlertRoutes maps each route to its targets ("provider:model") in the
// order the route tries them: by tier, then priority.
func AlertRoutes(routes []policy.Route) map[string][]string {
	out := make(map[string][]string, len(routes))
	for i := range routes {
		out[routes[i].Name] = TargetOrder(&routes[i])
	}
	return out
}

// TargetOrder is r's targets in the order the route tries them: by tier
// (the route's tiers, or the order they first appear), then priority.
func TargetOrder(r *policy.Route) []string {
	tierOf := func(i int) string {
		if t := r.Targets[i].Tier; t != "" {
			return t
		}
		return policy.DefaultTier
	}
	tiers := r.Tiers
	if len(tiers) == 0 {
		for i := range r.Targets {
			if t := tierOf(i); !slices.Contains(tiers, t) {
				tiers = append(tiers, t)
			}
		}
	}
	idx := make([]int, len(r.Targets))
	for i := range idx {
		idx[i] = i
	}
	rank := func(i int) int { return slices.Index(tiers, tierOf(i)) }
	slices.SortStableFunc(idx, func(a, b int) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return r.Targets[a].Priority - r.Targets[b].Priority
	})
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = r.Targets[j].Key()
	}
	return out
}
