package scenarios

import (
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/mockprovider"
)

// stopWindow counts user results per second of the run for stop_when, the
// same way in both engines. The live engine guards it with its mutex.
//
// stop_when judges the good-request rate, the share of requests that met
// every per-request part of the SLO (see GoodEnd): success, correctness
// and the per-request latency bounds. The windowed p95 latency parts are
// judged by the scores, not here: a stop condition acts on what each
// request got.
type stopWindow struct {
	good, all []int
	// ids holds, per second, the requests counted good there, for a judge
	// that learns of corrupted answers after their requests ended (the live
	// engine reads them from the mocks' journals); nil in the simulator,
	// which knows at the end.
	ids     [][]string
	cleared int // ids before this second are dropped
}

// record counts one user request that ended at elapsed.
func (w *stopWindow) record(elapsed time.Duration, good bool) {
	sec := int(elapsed / time.Second)
	for len(w.all) <= sec {
		w.all = append(w.all, 0)
		w.good = append(w.good, 0)
	}
	w.all[sec]++
	if good {
		w.good[sec]++
	}
}

// recordID is record for a request whose answer breached may still find
// corrupted.
func (w *stopWindow) recordID(elapsed time.Duration, id string, good bool) {
	w.record(elapsed, good)
	if good {
		sec := int(elapsed / time.Second)
		for len(w.ids) <= sec {
			w.ids = append(w.ids, nil)
		}
		w.ids[sec] = append(w.ids[sec], id)
	}
}

// breached reports whether the good-request rate of the requests that
// ended in the last sw.For (whole seconds before elapsed) is below the
// bound, and then why. bad, when not nil, takes back a request recorded
// good whose answer was corrupted.
func (w *stopWindow) breached(sw *StopWhen, elapsed time.Duration, bad func(id string) bool) (string, bool) {
	n := max(int(sw.For.D()/time.Second), 1)
	sec := int(elapsed / time.Second)
	if sec < n {
		return "", false
	}
	var good, all int
	for k := max(sec-n, 0); k < min(sec, len(w.all)); k++ {
		good += w.good[k]
		all += w.all[k]
		if bad != nil && k < len(w.ids) {
			for _, id := range w.ids[k] {
				if bad(id) {
					good--
				}
			}
		}
	}
	for ; w.cleared < min(sec-n, len(w.ids)); w.cleared++ {
		w.ids[w.cleared] = nil // never read again
	}
	if all == 0 || float64(good)/float64(all) >= sw.SuccessRateBelow.F() {
		return "", false
	}
	return fmt.Sprintf("stop_when: good-request rate %.0f%% below %s for %s",
		100*float64(good)/float64(all), sw.SuccessRateBelow, sw.For), true
}

// corruptions follows the mocks' journals during a live run: the latest
// attempt journaled for each request, and whether a fault corrupted it (a
// request whose last attempt was corrupted was served a corrupted answer,
// the rule the scores apply to the whole journal).
type corruptions struct {
	next   map[*mockprovider.Model]uint64 // the next Seq to read, per mock instance
	latest map[string]journalMark
}

type journalMark struct {
	t         time.Time
	corrupted bool
}

// follow reads what m journaled since the last call.
func (c *corruptions) follow(m *mockprovider.Model) {
	if c.next == nil {
		c.next, c.latest = map[*mockprovider.Model]uint64{}, map[string]journalMark{}
	}
	for e := range m.JournalSince(c.next[m]) {
		c.next[m] = e.Seq + 1
		if e.RequestID == "" {
			continue
		}
		if cur, ok := c.latest[e.RequestID]; !ok || !e.Time.Before(cur.t) {
			c.latest[e.RequestID] = journalMark{e.Time, e.Corrupted}
		}
	}
}

// forget drops the marks of attempts journaled before t: a request is
// judged within its window, never later.
func (c *corruptions) forget(t time.Time) {
	for id, m := range c.latest {
		if m.t.Before(t) {
			delete(c.latest, id)
		}
	}
}

// bad reports whether request id was last served a corrupted answer.
func (c *corruptions) bad(id string) bool { return c.latest[id].corrupted }
