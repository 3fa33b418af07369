package lifecycle

import (
	"slices"

	"github.com/brownout-dev/brownout/gateway/policy"
)

// The routes an alert evaluator watches, decided here once for both
// engines (what a reload keeps of detectors and alert rules is decided by
// evals.ReloadDetectors and alerts.Reload).

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
