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
	need := recoveryTime(s.env, s.SLO.Window.D(), s.peakRate())
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
				"step %q ends at %s, %s before the run ends, but a target demoted near the step's end needs about %s to recover (90%% of policy.health.cooldown to ramp its traffic back, or policy.breaker.open_for, then one SLO window for its share to show it): its time to recover will likely read \"not recovered\"; lengthen duration or end the step earlier",
				st.Name, end, left, need))
		}
	}
	return ws
}

// recoveryTime is how long after a fault a target demoted near its end
// likely needs to recover as TTR measures it. Health re-admits a demoted
// target when its failures age out of the window, then ramps its share of
// traffic back linearly over the cooldown, and TTR waits for 90% of its
// baseline share: 0.9 cooldowns of ramp at least (a fault keeps re-demoting
// its target, so the ramp usually starts near the fault's end); a breaker
// keeps it out for open_for. Then one SLO window for the windowed share to
// show it. Policy defaults when unset. Health that needs more failures in
// its window than the traffic's peak rate can send in it (failures: 1000,
// as a game day turns it off) never demotes: then only the breaker counts.
//
// Measured over 8 seeds of each example (2026-12-02, cooldown 1m, open_for
// 30s, SLO window 10s: 1m4s): of the 48 runs of the 6 steps leaving less,
// 35 read "not recovered" (fallback-rejects-param, whose fault demotes
// early and once, recovered in 54-57s); the recoveries measured on steps
// leaving more took 47s-1m51s (some of those steps still read "not
// recovered" in a few seeds, stall-mid-stream in 4 of 8: a fault that
// keeps re-demoting its target can outlast any margin). The health window
// alone, the bound used before, let every one of those 6 steps pass
// unwarned.
func recoveryTime(env *environment, sloWindow time.Duration, peakRate float64) time.Duration {
	p := env.policy.Policy
	cooldown := orDefault(p.Health.Cooldown.D(), 2*time.Minute)
	window := orDefault(p.Health.Window.D(), 2*time.Minute)
	failures := p.Health.Failures
	if failures == 0 {
		failures = 2
	}
	if float64(failures) > peakRate*window.Seconds() {
		cooldown = 0 // health cannot demote
	}
	openFor := orDefault(p.Breaker.OpenFor.D(), 30*time.Second)
	return max(cooldown*9/10, openFor) + sloWindow
}

// peakRate is the most requests per second the traffic sends at once (every
// source at its own peak).
func (s *Scenario) peakRate() float64 {
	total := 0.0
	for i := range s.Traffic {
		t := &s.Traffic[i]
		peak := float64(t.Rate)
		if t.Ramp != nil {
			peak = max(float64(t.Ramp.From), float64(t.Ramp.To))
		}
		for _, st := range t.Schedule {
			peak = max(peak, float64(st.Rate))
		}
		total += peak
	}
	return total
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
