package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/events"
)

// An Attempt reused with BeginInto for request after request decides and
// logs exactly as fresh ones from Begin: nothing of the previous request
// leaks into the next (its failed primary, its attempt count, its end).
func TestBeginIntoReuse(t *testing.T) {
	cfg := oneRoute(tgt("a:m", attempts(2)), tgt("b:m", prio(1)))
	run := func(reuse bool) []events.Event {
		var log events.Log
		e := newEngine(t, cfg, &log)
		var a Attempt
		now := t0
		for i := range 6 {
			req := Request{ID: string(rune('a' + i)), Route: "chat", Stream: i%2 == 0}
			at := &a
			if reuse {
				e.BeginInto(at, now, req)
			} else {
				at = e.Begin(now, req)
			}
			for range 20 {
				d := at.Next(now)
				if d.Kind == Wait {
					now = d.Until
					continue
				}
				if d.Kind != Send {
					break
				}
				o := Outcome{Class: OK, Status: 200, OutputTokens: 5}
				if i%3 == 1 && d.Target.Provider == "a" {
					o = Outcome{Class: RateLimited, Status: 429}
				}
				now = now.Add(100 * 1e6)
				at.Observe(now, o)
			}
		}
		return log.Events()
	}
	fresh, reused := run(false), run(true)
	if len(fresh) < 20 {
		t.Fatalf("only %d events", len(fresh))
	}
	if diff := cmp.Diff(fresh, reused); diff != "" {
		t.Fatalf("BeginInto reuse differs from Begin (-Begin +BeginInto):\n%s", diff)
	}
}
