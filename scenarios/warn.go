package scenarios

import (
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/yamlfile"
)

// Warnings are problems that do not make a scenario invalid but make part of
// its scoring meaningless: a fault step that ends too close to the end of
// the run for its target to recover (its time to recover can only read "not
// recovered"). Each names the step's position in the file.
func (s *Scenario) Warnings() yamlfile.Errors {
	if s.env == nil || s.env.blackBox {
		return nil
	}
	need := recoveryTime(s.env)
	var ws yamlfile.Errors
	// The gateway's metering and the mocks' journals must price a
	// target alike, or cost depends on who measures it.
	for _, k := range sortedKeys(s.env.prices) {
		if mp, ok := s.env.mockPrices[k]; ok && mp != s.env.prices[k] {
			ws = append(ws, s.doc.Errorf("gateway", "the gateway config prices %s at %+v, the providers file at %+v: cost measured by the gateway and by the mocks would disagree", k, s.env.prices[k], mp))
		}
	}
	for i := range s.Timeline {
		st := &s.Timeline[i]
		if st.Kind() != StepFault && st.Kind() != StepKill || st.For <= 0 {
			continue
		}
		end := s.stepEnd(st)
		if left := s.Duration.D() - end; left < need {
			ws = append(ws, s.doc.Errorf(fmt.Sprintf("timeline.%d.for", i),
				"step %q ends at %s, %s before the run ends, but a demoted target needs at least %s to take traffic back (policy.health.window or policy.breaker.open_for): its time to recover can only read \"not recovered\"; lengthen duration or end the step earlier",
				st.Name, end, left, need))
		}
	}
	return ws
}

// recoveryTime is the least time after a fault before a demoted target can
// take traffic again: its failures must age out of the health window, or
// its breaker stay open for open_for (policy defaults when unset).
func recoveryTime(env *environment) time.Duration {
	p := env.policy.Policy
	window := orDefault(p.Health.Window.D(), 2*time.Minute)
	openFor := orDefault(p.Breaker.OpenFor.D(), 30*time.Second)
	return max(window, openFor)
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
