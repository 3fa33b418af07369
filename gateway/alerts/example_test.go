package alerts_test

import (
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/yamlfile"
)

func Example() {
	e := alerts.NewEvaluator([]alerts.Rule{{
		Name: "FallbackRateCritical", Kind: alerts.FallbackRate, Severity: alerts.Page,
		Window: yamlfile.Duration(5 * time.Minute), Threshold: 0.25,
	}})
	e.SetRoutes(map[string][]string{"chat": {"openai:gpt-4o", "anthropic:claude-sonnet-4"}})

	t0 := time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC)
	for i := range 20 {
		target := "openai:gpt-4o"
		if i%2 == 0 { // half the requests fail over
			target = "anthropic:claude-sonnet-4"
		}
		id := fmt.Sprint(i)
		at := t0.Add(time.Duration(i) * time.Second)
		e.Observe(events.Event{Time: at, Kind: events.RequestStart, RequestID: id, Route: "chat"})
		e.Observe(events.Event{Time: at, Kind: events.AttemptEnd, RequestID: id, Target: target, Class: "ok"})
		e.Observe(events.Event{Time: at, Kind: events.RequestEnd, RequestID: id, Route: "chat", Outcome: events.OutcomeServed})
	}
	for _, ev := range e.Evaluate(t0.Add(time.Minute)) {
		fmt.Println(ev.Kind, ev.Name, ev.Severity, ev.Route)
		fmt.Println(ev.Reason)
	}
	// Output:
	// alert.fired FallbackRateCritical page chat
	// fallback rate 50.0% (10 of 20 requests) over 5m0s, threshold 25.0%
}
