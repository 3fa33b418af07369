package score

import (
	"time"

	"github.com/brownout-dev/brownout/events"
)

// flapWindowEnd is how long after a fault's end a demotion still belongs to it.
func (s *scorer) flapWindowEnd(f faultWin) time.Time { return f.end.Add(s.slo.Window) }

// flapCounts classify a target's demotions (breaker openings, unhealthy
// markings), each kind on its own.
type flapCounts struct {
	openings, cycles, unhealthy int
	// reDetections: demoted again within one fault (the first demotion
	// of each kind in a fault is its detection).
	reDetections int
	// oscillations: demoted again after the fault's end (within one SLO
	// window of it) after a recovery: demote → recover → demote.
	oscillations int
	// falsePositives: demotions outside every fault window of the target.
	falsePositives int
}

// flaps are the counts users feel: oscillations and false positives.
func (c flapCounts) flaps() int { return c.oscillations + c.falsePositives }

// isRecovery reports whether a transition takes a target back: a breaker
// closing or health back to recovering or healthy.
func isRecovery(tr transition) bool {
	switch tr.kind {
	case events.BreakerTransition:
		return tr.to == "closed"
	case events.HealthChange:
		return tr.to == "healthy" || tr.to == "recovering"
	}
	return false
}

// flaps classifies the demotions of target over the run, all of them
// (fault < 0) or those that belong to fault index fault.
func (s *scorer) flaps(target string, fault int) flapCounts {
	var c flapCounts
	type key struct {
		fault int
		kind  events.Kind
	}
	seen := map[key]bool{}              // a demotion of this kind in this fault
	recovered := map[events.Kind]bool{} // a recovery since the last demotion
	for _, tr := range s.trans {
		if tr.target != target {
			continue
		}
		if isRecovery(tr) {
			recovered[tr.kind] = true
			continue
		}
		if !isOpening(tr) {
			continue
		}
		inside, after := s.faultOf(target, tr.t)
		fi := max(inside, after)
		wasRecovered := recovered[tr.kind]
		recovered[tr.kind] = false
		if fault >= 0 && fi != fault {
			continue
		}
		if tr.kind == events.BreakerTransition {
			c.openings++
			if tr.from == "half_open" {
				c.cycles++
			}
		} else {
			c.unhealthy++
		}
		k := key{fi, tr.kind}
		switch {
		case fi < 0:
			c.falsePositives++
		case inside >= 0 && !seen[k]:
			// The fault's detection.
		case inside < 0 && wasRecovered:
			c.oscillations++
		default:
			c.reDetections++
		}
		seen[k] = true
	}
	return c
}

// faultOf returns the fault of target whose window holds t (inside), or
// else the one whose end t follows by at most an SLO window (after); -1 for
// none.
func (s *scorer) faultOf(target string, t time.Time) (inside, after int) {
	inside, after = -1, -1
	for i := range s.faults {
		f := &s.faults[i]
		if f.target != target || t.Before(f.start) {
			continue
		}
		if !t.After(f.end) {
			return i, -1
		}
		if after < 0 && !t.After(s.flapWindowEnd(*f)) {
			after = i
		}
	}
	return -1, after
}

// unnecessaryFallback is how long target, with no fault of its own active,
// had less than half its baseline share of successful attempts over the
// SLO window: kept out of traffic it could have served (the ramp-back after
// its faults included). The baseline is its share before the first fault,
// or outside every fault when nothing ran before it.
func (s *scorer) unnecessaryFallback(ti int32, target string) time.Duration {
	mine, all := s.shareSeries(target, true)
	base := s.runBaselineShare(mine, all)
	if base == 0 {
		return 0
	}
	w := max(int(s.slo.Window/bin), 1)
	n := 0
	for b := 0; b < s.nbins; b++ {
		if s.faultActive(target, s.start.Add(time.Duration(b)*bin)) {
			continue
		}
		tot := all.sum(b-w+1, b+1)
		if tot > 0 && mine.sum(b-w+1, b+1)/tot < base/2 {
			n++
		}
	}
	return time.Duration(n) * bin
}

// runBaselineShare is a target's share of successful attempts before the
// first fault; when that period has none, outside every fault window.
func (s *scorer) runBaselineShare(mine, all prefix) float64 {
	first := s.end
	for _, f := range s.faults {
		if f.start.Before(first) {
			first = f.start
		}
	}
	if n := all.sum(0, s.binOf(first)); n > 0 {
		return mine.sum(0, s.binOf(first)) / n
	}
	var m, n float64
	for k := 0; k < s.nbins; k++ {
		if s.inAnyFault(s.off(s.start.Add(time.Duration(k) * bin))) {
			continue
		}
		m += mine.sum(k, k+1)
		n += all.sum(k, k+1)
	}
	return ratio(m, n)
}

// faultActive reports whether a fault on target is active at t.
func (s *scorer) faultActive(target string, t time.Time) bool {
	for i := range s.faults {
		if f := &s.faults[i]; f.target == target && !t.Before(f.start) && t.Before(f.end) {
			return true
		}
	}
	return false
}
