package scenarios

import (
	"time"

	"github.com/brownout-dev/brownout/events"
)

// flapWindowEnd is how long after a fault's end an opening still belongs to it.
func (s *scorer) flapWindowEnd(f faultWin) time.Time { return f.end.Add(s.slo.Window) }

// flaps counts a target's breaker and health activity over the run.
// Flaps = openings/markings beyond the first inside each fault window plus
// every opening/marking outside all fault windows (false positives).
func (s *scorer) flaps(target string) (openings, cycles, unhealthy, fp, flaps int) {
	perFault := map[int]int{}
	for _, tr := range s.trans {
		if tr.target != target {
			continue
		}
		if tr.kind == events.BreakerTransition && tr.from == "half_open" && tr.to == "open" {
			cycles++
		}
		if !isOpening(tr) {
			continue
		}
		if tr.kind == events.BreakerTransition {
			openings++
		} else {
			unhealthy++
		}
		fi := -1
		for i, f := range s.faults {
			if f.target == target && !tr.t.Before(f.start) && !tr.t.After(s.flapWindowEnd(f)) {
				fi = i
				break
			}
		}
		if fi < 0 {
			fp++
			flaps++
			continue
		}
		key := fi * 2
		if tr.kind == events.HealthChange {
			key++
		}
		perFault[key]++
		if perFault[key] > 1 {
			flaps++
		}
	}
	return
}

// faultFlaps counts openings and markings beyond the first during one fault.
func (s *scorer) faultFlaps(f faultWin) int {
	n := map[events.Kind]int{}
	fl := 0
	for _, tr := range s.trans {
		if tr.target != f.target || !isOpening(tr) || tr.t.Before(f.start) || tr.t.After(s.flapWindowEnd(f)) {
			continue
		}
		n[tr.kind]++
		if n[tr.kind] > 1 {
			fl++
		}
	}
	return fl
}
