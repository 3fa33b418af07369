package alerts

import (
	"strconv"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/yamlfile"
)

// benchEvents is the event stream of n requests at 100 per second over two
// routes, as the simulator emits it: one in ten fails over. Request ids
// are reused after 1000 requests.
func benchEvents(n int) []events.Event {
	routes := [2]string{"chat", "batch"}
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = "r" + strconv.Itoa(i)
	}
	var evs []events.Event
	at := t0
	for i := range n {
		id := ids[i%len(ids)]
		route := routes[i%2]
		evs = append(evs, events.Event{Time: at, Kind: events.RequestStart, RequestID: id, Route: route, Stream: true})
		targets := []string{primary}
		if i%10 == 0 {
			targets = append(targets, fallback)
		}
		for j, t := range targets {
			class := "ok"
			if j < len(targets)-1 {
				class = "rate_limited"
			}
			evs = append(evs, events.Event{Time: at, Kind: events.AttemptStart, RequestID: id, Route: route, Target: t, Attempt: j + 1})
			evs = append(evs, events.Event{Time: at.Add(300 * time.Millisecond), Kind: events.AttemptEnd, RequestID: id, Route: route,
				Target: t, Attempt: j + 1, Class: class, TTFT: time.Duration(200+i%400) * time.Millisecond, Cost: 0.002})
		}
		evs = append(evs, events.Event{Time: at.Add(300 * time.Millisecond), Kind: events.RequestEnd, RequestID: id, Route: route,
			Target: targets[len(targets)-1], Outcome: events.OutcomeServed, Class: "ok"})
		at = at.Add(10 * time.Millisecond)
	}
	return evs
}

// BenchmarkEvaluatorObserve is the cost of one event, with a rule of every
// kind configured. The stream repeats every 100 s of event time (shifted).
func BenchmarkEvaluatorObserve(b *testing.B) {
	min := yamlfile.Duration(time.Minute)
	e := NewEvaluator([]Rule{
		{Name: "fb", Kind: FallbackRate, Severity: Warn, Window: min, Threshold: 0.2},
		{Name: "ttft", Kind: TTFTPenalty, Severity: Warn, Window: min, Threshold: 2},
		{Name: "spend", Kind: SpendRate, Severity: Warn, Window: min, Threshold: 100},
		{Name: "share", Kind: FallbackSpendShare, Severity: Warn, Window: min, Threshold: 0.5},
		{Name: "idle", Kind: FallbackUnexercised, Severity: Warn, Window: yamlfile.Duration(time.Hour)},
		{Name: "flap", Kind: BreakerFlapping, Severity: Page, Window: min, Threshold: 3},
	})
	e.SetRoutes(map[string][]string{"chat": {primary, fallback}, "batch": {primary, fallback}})
	evs := benchEvents(10_000)
	var shift time.Duration
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i == len(evs) {
			i, shift = 0, shift+100*time.Second
			e.Evaluate(evs[len(evs)-1].Time.Add(shift)) // prunes
		}
		ev := evs[i]
		ev.Time = ev.Time.Add(shift)
		e.Observe(ev)
		i++
	}
}
