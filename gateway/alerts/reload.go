package alerts

import "reflect"

// Reload returns the evaluator a configuration runs with, for the live
// gateway and the simulator alike: old, with its firing state, when the
// rules are unchanged (oldRules); a new one otherwise; nil without rules.
// Its routes are set to routes in every case.
func Reload(old *Evaluator, oldRules, rules []Rule, routes map[string][]string) *Evaluator {
	ev := old
	if old == nil || !reflect.DeepEqual(oldRules, rules) {
		ev = nil
		if len(rules) > 0 {
			ev = NewEvaluator(rules)
		}
	}
	if ev != nil {
		ev.SetRoutes(routes)
	}
	return ev
}
