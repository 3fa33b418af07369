package scenarios

import (
	"strings"
	"time"

	"github.com/brownout-dev/brownout/events"
)

func normState(v string) string {
	return strings.ReplaceAll(strings.ToLower(v), "-", "_")
}

// isOpening reports whether a transition is a detection-grade change: a
// breaker opening or a target marked unhealthy.
func isOpening(tr transition) bool {
	switch tr.kind {
	case events.BreakerTransition:
		return tr.to == "open"
	case events.HealthChange:
		return tr.to == "unhealthy" || tr.to == "down"
	}
	return false
}

func (s *scorer) detect(fs *FaultScore, f faultWin) {
	if s.blackBox {
		s.trafficShift(fs, f)
		return
	}
	// Already open or unhealthy when the fault starts.
	breaker, health := "", ""
	for _, tr := range s.trans {
		if tr.target != f.target || !tr.t.Before(f.start) {
			continue
		}
		if tr.kind == events.BreakerTransition {
			breaker = tr.to
		} else {
			health = tr.to
		}
	}
	if breaker == "open" || health == "unhealthy" || health == "down" {
		fs.Detected, fs.DetectedBy = true, "already_open"
		return
	}
	best := transition{}
	found := false
	consider := func(tr transition, by string) {
		if tr.target != f.target || tr.t.Before(f.start) || tr.t.After(f.end) {
			return
		}
		if !found || tr.t.Before(best.t) {
			best, found = tr, true
			best.to = by
		}
	}
	// Signals first: on a tie (a detector demoting a target marks it
	// unhealthy at the same instant) the root cause names the detection.
	for _, sg := range s.signals {
		consider(sg, sg.to)
	}
	for _, tr := range s.trans {
		if isOpening(tr) {
			by := "breaker"
			if tr.kind == events.HealthChange {
				by = "health"
			}
			consider(tr, by)
		}
	}
	if found {
		fs.Detected, fs.TTD, fs.DetectedBy = true, best.t.Sub(f.start), best.to
	}
}

// trafficShift: the first window end after which the target's share of
// attempts stays below half its pre-fault share until the fault ends.
func (s *scorer) trafficShift(fs *FaultScore, f faultWin) {
	mine, all := s.shareSeries(f.target, false)
	baseline := s.baselineShare(f, mine, all)
	if baseline == 0 {
		return
	}
	w := int(s.slo.Window / bin)
	lo, hi := s.binOf(f.start), s.binOf(f.end)
	first := -1
	for k := lo + 1; k <= hi; k++ {
		n := all.sum(k-w, k)
		below := n > 0 && mine.sum(k-w, k)/n < baseline/2
		if below && first < 0 {
			first = k
		} else if !below && n > 0 {
			first = -1
		}
	}
	if first >= 0 {
		fs.Detected, fs.DetectedBy = true, "traffic_shift"
		fs.TTD = s.start.Add(time.Duration(first) * bin).Sub(f.start)
	}
}
