package alerts

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/yamlfile"
)

// The in-flight table behaves as the map it replaces: puts, gets, removes
// and prunes in any order, over few ids (so ids come back and probe runs
// collide and wrap), leave the same entries with the same states.
func TestInflightMatchesMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tab := newInflight()
		ref := map[string]reqState{}
		ids := rapid.SliceOfNDistinct(rapid.StringMatching(`r[0-9]{0,3}|req-[0-9]{1,12}|[a-z0-9-]{0,24}`), 1, 60, rapid.ID[string]).Draw(rt, "ids")
		n := rapid.IntRange(1, 400).Draw(rt, "n")
		for step := range n {
			id := rapid.SampledFrom(ids).Draw(rt, "id")
			// A copy with its own bytes: equal ids need not share memory.
			id = string([]byte(id))
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op < 4: // request.start
				rs := tab.put(id)
				if *rs != (reqState{}) {
					rt.Fatalf("put(%q) gave a non-zero state %+v", id, *rs)
				}
				rs.route, rs.start = "route-"+id, t0.Add(time.Duration(step)*time.Minute)
				ref[id] = *rs
			case op < 6: // attempt.start
				rs := tab.get(id)
				want, ok := ref[id]
				if (rs != nil) != ok {
					rt.Fatalf("get(%q) = %v, in the map: %v", id, rs, ok)
				}
				if rs != nil {
					if *rs != want {
						rt.Fatalf("get(%q) = %+v, want %+v", id, *rs, want)
					}
					rs.first = fmt.Sprint("t", step)
					ref[id] = *rs
				}
			case op < 9: // request.end
				i := tab.find(id)
				_, ok := ref[id]
				if (i >= 0) != ok {
					rt.Fatalf("find(%q) = %d, in the map: %v", id, i, ok)
				}
				if i >= 0 {
					tab.remove(i)
					delete(ref, id)
				}
			default: // prune
				cut := t0.Add(time.Duration(rapid.IntRange(0, step).Draw(rt, "cut")) * time.Minute)
				tab.removeIf(func(rs *reqState) bool { return rs.start.Before(cut) })
				for k, rs := range ref {
					if rs.start.Before(cut) {
						delete(ref, k)
					}
				}
			}
			if tab.n != len(ref) {
				rt.Fatalf("%d entries, the map has %d", tab.n, len(ref))
			}
			for k, want := range ref {
				rs := tab.get(k)
				if rs == nil || *rs != want {
					rt.Fatalf("get(%q) = %v, want %+v", k, rs, want)
				}
			}
		}
	})
}

// lastOK keeps what a map would, past the length where it starts indexing.
func TestLastOKMatchesMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var l lastOK
		ref := map[string]time.Time{}
		n := rapid.IntRange(1, 300).Draw(rt, "n")
		for step := range n {
			target := fmt.Sprintf("p:m%d", rapid.IntRange(0, 40).Draw(rt, "target"))
			at := t0.Add(time.Duration(step) * time.Second)
			l.set(target, at)
			ref[target] = at
			probe := fmt.Sprintf("p:m%d", rapid.IntRange(0, 45).Draw(rt, "probe"))
			got, ok := l.get(probe)
			want, wok := ref[probe]
			if ok != wok || !got.Equal(want) {
				rt.Fatalf("get(%q) = %v %v, want %v %v", probe, got, ok, want, wok)
			}
		}
	})
}

// randomStream draws the events of overlapping requests over two routes and
// three targets, some ids reused, some events without route or target,
// with breaker openings, as a gateway could emit them.
func randomStream(rt *rapid.T) []events.Event {
	targets := []string{primary, fallback, "gemini:flash"}
	routes := []string{"chat", "batch", ""}
	var evs []events.Event
	at := t0
	n := rapid.IntRange(1, 300).Draw(rt, "requests")
	type open struct {
		id, route string
		tries     int
	}
	var inFlight []open
	for k := range n {
		at = at.Add(time.Duration(rapid.IntRange(0, 20_000).Draw(rt, "gap")) * time.Millisecond)
		switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
		case op < 4 || len(inFlight) == 0:
			id := fmt.Sprint("r", rapid.IntRange(0, 2*n).Draw(rt, "id"))
			route := rapid.SampledFrom(routes).Draw(rt, "route")
			evs = append(evs, events.Event{Time: at, Kind: events.RequestStart, RequestID: id, Route: route})
			inFlight = append(inFlight, open{id: id, route: route})
		case op < 8:
			i := rapid.IntRange(0, len(inFlight)-1).Draw(rt, "which")
			r := &inFlight[i]
			t := rapid.SampledFrom(targets).Draw(rt, "target")
			route := r.route
			if rapid.Bool().Draw(rt, "noRoute") {
				route = ""
			}
			class := rapid.SampledFrom([]string{"ok", "rate_limited", "server_error"}).Draw(rt, "class")
			evs = append(evs, events.Event{Time: at, Kind: events.AttemptStart, RequestID: r.id, Route: route, Target: t},
				events.Event{Time: at.Add(time.Second), Kind: events.AttemptEnd, RequestID: r.id, Route: route, Target: t,
					Class: class, TTFT: time.Duration(rapid.IntRange(1, 5000).Draw(rt, "ttft")) * time.Millisecond, Cost: 0.01})
			r.tries++
		default:
			i := rapid.IntRange(0, len(inFlight)-1).Draw(rt, "which")
			r := inFlight[i]
			inFlight = append(inFlight[:i], inFlight[i+1:]...)
			target := ""
			if rapid.Bool().Draw(rt, "withTarget") {
				target = rapid.SampledFrom(targets).Draw(rt, "served")
			}
			outcome := rapid.SampledFrom([]string{events.OutcomeServed, events.OutcomeDegraded, events.OutcomeFailed}).Draw(rt, "outcome")
			evs = append(evs, events.Event{Time: at, Kind: events.RequestEnd, RequestID: r.id, Route: r.route, Target: target, Outcome: outcome})
		}
		if k%7 == 3 {
			evs = append(evs, events.Event{Time: at, Kind: events.BreakerTransition, Target: rapid.SampledFrom(targets).Draw(rt, "breaker"), From: "closed", To: "open"})
		}
	}
	return evs
}

// Without a rule that reads the request windows the evaluator skips the
// request bookkeeping: the alerts of the other rules are the ones it
// raises with such a rule added.
func TestEvaluatorSkipsRequestsNoRuleReads(t *testing.T) {
	minute := yamlfile.Duration(time.Minute)
	targetRules := []Rule{
		{Name: "idle", Kind: FallbackUnexercised, Severity: Warn, Window: minute},
		{Name: "flap", Kind: BreakerFlapping, Severity: Warn, Window: minute, Threshold: 1},
	}
	rapid.Check(t, func(rt *rapid.T) {
		evs := randomStream(rt)
		lean := NewEvaluator(targetRules)
		full := NewEvaluator(append(slices.Clone(targetRules),
			Rule{Name: "fb", Kind: FallbackRate, Severity: Page, Window: minute, Threshold: 0.1, MinRequests: 1}))
		for _, e := range []*Evaluator{lean, full} {
			e.SetRoutes(map[string][]string{"chat": {primary, fallback}, "batch": {fallback, primary, "gemini:flash"}})
		}
		var got, want []events.Event
		next := evs[0].Time.Add(15 * time.Second)
		for _, ev := range evs {
			for !ev.Time.Before(next) {
				got = append(got, lean.Evaluate(next)...)
				for _, a := range full.Evaluate(next) {
					if a.Name != "fb" {
						want = append(want, a)
					}
				}
				next = next.Add(15 * time.Second)
			}
			lean.Observe(ev)
			full.Observe(ev)
		}
		if lean.reqs.n != 0 {
			rt.Fatalf("the lean evaluator follows %d requests", lean.reqs.n)
		}
		if len(got) != len(want) {
			rt.Fatalf("%d alert events, want %d:\n%v\n%v", len(got), len(want), kinds(got), kinds(want))
		}
		for i := range got {
			if got[i] != want[i] {
				rt.Fatalf("alert event %d: %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}

// The id hash reads every byte of an id of any length: changing one byte
// changes the hash (a collision has a chance of 2^-63 per pair).
func TestInflightHashReadsEveryByte(t *testing.T) {
	tab := newInflight()
	for n := range 40 {
		id := []byte("req-0123456789abcdefghijklmnopqrstuvwxyz"[:n])
		h := tab.hash(string(id))
		for i := range id {
			orig := id[i]
			id[i] ^= 0x20
			if tab.hash(string(id)) == h {
				t.Errorf("length %d: changing byte %d leaves the hash of %q", n, i, id)
			}
			id[i] = orig
		}
	}
}
