package score_test

import (
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// Score a hand-built log: a 429 storm on the primary from 10s to 20s, a
// breaker that opens 2s in, and traffic that moves to the fallback.
func ExampleScore() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	log := []events.Event{
		{Time: at(10), Kind: events.FaultStart, Name: "storm", Target: "a:m", Reason: "http_error"},
		{Time: at(12), Kind: events.BreakerTransition, Target: "a:m", From: "closed", To: "open"},
		{Time: at(20), Kind: events.FaultEnd, Name: "storm", Target: "a:m"},
	}
	for i := range 30 {
		id, target := fmt.Sprintf("r%d", i), "a:m"
		if i >= 12 && i < 22 {
			target = "b:m"
		}
		start := at(float64(i))
		log = append(log,
			events.Event{Time: start, Kind: events.RequestStart, RequestID: id, Route: "chat"},
			events.Event{Time: start, Kind: events.AttemptStart, RequestID: id, Target: target},
			events.Event{Time: start.Add(100 * time.Millisecond), Kind: events.AttemptEnd, RequestID: id, Target: target, Class: "ok"},
			events.Event{Time: start.Add(100 * time.Millisecond), Kind: events.RequestEnd, RequestID: id, Outcome: events.OutcomeServed, Target: target})
	}
	res := score.Score(score.Input{Events: log, Start: t0, End: at(30)})
	f, _ := res.Fault("storm", "a:m")
	fmt.Println("detected:", f.Detected, "by", f.DetectedBy, "after", score.FormatDuration(f.TTD))
	fmt.Println("requests:", res.Overall.Availability.Requests)
	// Output:
	// detected: true by breaker after 2s
	// requests: 30
}
