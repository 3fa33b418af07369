package scenarios

import (
	"fmt"
	"time"
)

// stopWindow counts user results per second of the run for stop_when, the
// same way in both engines. The live engine guards it with its mutex.
type stopWindow struct {
	ok, all []int
}

// record counts one user request that ended at elapsed.
func (w *stopWindow) record(elapsed time.Duration, ok bool) {
	sec := int(elapsed / time.Second)
	for len(w.all) <= sec {
		w.all = append(w.all, 0)
		w.ok = append(w.ok, 0)
	}
	w.all[sec]++
	if ok {
		w.ok[sec]++
	}
}

// breached reports whether the success rate of the requests that ended in
// the last sw.For (whole seconds before elapsed) is below the bound, and
// then why.
func (w *stopWindow) breached(sw *StopWhen, elapsed time.Duration) (string, bool) {
	n := max(int(sw.For.D()/time.Second), 1)
	sec := int(elapsed / time.Second)
	if sec < n {
		return "", false
	}
	var good, all int
	for k := max(sec-n, 0); k < min(sec, len(w.all)); k++ {
		good += w.ok[k]
		all += w.all[k]
	}
	if all == 0 || float64(good)/float64(all) >= sw.SuccessRateBelow.F() {
		return "", false
	}
	return fmt.Sprintf("stop_when: success rate below %s for %s", sw.SuccessRateBelow, sw.For), true
}
