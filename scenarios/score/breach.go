package score

import (
	"slices"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/events"
)

// breaches scores how the SLI behaved over the bin edges (lo, hi] of a
// fault with windows of w bins: how long it was below the SLO, how often it
// fell below, when it first came back and how often it fell again after
// holding.
func (s *scorer) breaches(fs *FaultScore, lo, hi, w int) {
	bad, wasBad, held := 0, false, false
	for k := lo + 1; k <= hi; k++ {
		b := s.sliBad(k, w)
		switch {
		case b && !wasBad:
			fs.Breaches++
			if held {
				fs.Relapses++
			}
		case !b && wasBad && !fs.FirstMitigated:
			fs.FirstMitigated = true
			fs.FirstMitigation = s.start.Add(time.Duration(k) * bin).Sub(fs.Start)
		}
		if b {
			bad++
		} else if wasBad {
			held = true
		}
		wasBad = b
	}
	fs.BreachTime = time.Duration(bad) * bin
}

// breachTime is how long the windowed SLI was below the SLO over the run.
func (s *scorer) breachTime() time.Duration {
	w := max(int(s.slo.Window/bin), 1)
	bad := 0
	for k := 1; k <= s.binOf(s.end); k++ {
		if s.sliBad(k, w) {
			bad++
		}
	}
	return time.Duration(bad) * bin
}

// returns counts the times f's target was let back into traffic while f
// lasted, after its detection: a breaker closing or health restored,
// followed by an attempt on the target before the next demotion or the
// fault's end.
func (s *scorer) returns(f faultWin, fs FaultScore) int {
	if !fs.Detected {
		return 0
	}
	ti, ok := s.names.find(f.target)
	if !ok {
		return 0
	}
	from := f.start.Add(fs.TTD)
	n := 0
	for i, tr := range s.trans {
		if tr.target != f.target || !isRecovery(tr) || tr.to == "recovering" || tr.t.Before(from) || !tr.t.Before(f.end) {
			continue
		}
		// Until the next demotion of the target or the fault's end.
		until := f.end
		for _, nx := range s.trans[i+1:] {
			if nx.target == f.target && isOpening(nx) {
				until = nx.t
				break
			}
		}
		a, b := s.off(tr.t), s.off(until)
		for j := range s.atts {
			if at := &s.atts[j]; at.tgt == ti && at.start >= a && at.start < b {
				n++
				break
			}
		}
	}
	return n
}

// falseAlarms lists the detections, demotions and pages with no fault to
// find: about a target while no fault of its own was active (a fault's
// flapping window after its end counts as the fault's, and so, for a
// detection, does the fault's echo: see echoOfFault), or an alert fired
// outside every fault window.
func (s *scorer) falseAlarms() []FalseAlarm {
	var out []FalseAlarm
	noFault := func(target string, t time.Time) bool {
		inside, after := s.faultOf(target, t)
		return inside < 0 && after < 0
	}
	for _, tr := range s.trans {
		if isOpening(tr) && noFault(tr.target, tr.t) {
			src := "breaker"
			if tr.kind == events.HealthChange {
				src = "health"
			}
			out = append(out, FalseAlarm{Time: tr.t, Target: tr.target, Source: src, Reason: tr.reason})
		}
	}
	for _, sg := range s.signals {
		if noFault(sg.target, sg.t) && !s.echoOfFault(sg.target, sg.t) {
			out = append(out, FalseAlarm{Time: sg.t, Target: sg.target, Source: sg.to, Reason: sg.reason})
		}
	}
	for _, e := range s.alertEv {
		if e.Kind != events.AlertFired || s.anyFaultAt(e.Time) {
			continue
		}
		out = append(out, FalseAlarm{Time: e.Time, Target: NormTarget(e.Target), Source: "alert:" + e.Name, Reason: e.Reason})
	}
	slices.SortStableFunc(out, func(a, b FalseAlarm) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Source, b.Source)
	})
	return out
}

// echoOfFault reports whether a detection at t on target is still its
// fault's own: the answers of attempts that started during a fault of the
// target go on ending after it (a 1024-token stream takes many seconds),
// and detectors judge them as they end. A fault's echo lasts until the last
// such attempt ended, plus one SLO window for the detectors' own window to
// move past it.
func (s *scorer) echoOfFault(target string, t time.Time) bool {
	if _, ok := s.names.find(target); !ok {
		return false
	}
	at := s.off(t)
	if s.echoEnd == nil {
		// Once per run: the last end of an attempt started during each
		// fault on its target (the fault's end when none ran later).
		s.echoEnd = make([]int64, len(s.faults))
		for i := range s.faults {
			f := &s.faults[i]
			s.echoEnd[i] = f.to
			fi, ok := s.names.find(f.target)
			for j := range s.atts {
				if !ok {
					break
				}
				if a := &s.atts[j]; a.tgt == fi && a.start >= f.from && a.start < f.to && a.end > s.echoEnd[i] {
					s.echoEnd[i] = a.end
				}
			}
		}
	}
	for i := range s.faults {
		f := &s.faults[i]
		if f.target == target && at >= f.from && at <= s.echoEnd[i]+int64(s.slo.Window) {
			return true
		}
	}
	return false
}

// anyFaultAt reports whether any fault was active at t, or had ended
// within one SLO window before it (its alerts may still fire).
func (s *scorer) anyFaultAt(t time.Time) bool {
	for i := range s.faults {
		f := &s.faults[i]
		if !t.Before(f.start) && !t.After(s.flapWindowEnd(*f)) {
			return true
		}
	}
	return false
}
