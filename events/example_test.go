package events_test

import (
	"fmt"
	"os"
	"time"

	"github.com/brownout-dev/brownout/events"
)

func ExampleWriteJSONL() {
	var log events.Log
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	log.Emit(events.Event{Time: t0, Kind: events.BreakerTransition, Target: "openai:gpt-4o", From: "closed", To: "open", Reason: "error_rate"})
	_ = events.WriteJSONL(os.Stdout, log.Events())
	// Output:
	// {"seq":1,"time":"2026-01-01T00:00:00Z","kind":"breaker.transition","target":"openai:gpt-4o","from":"closed","to":"open","reason":"error_rate"}
}

func ExamplePacked() {
	var log events.Packed
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	log.Append(&events.Event{Seq: 1, Time: t0, Kind: events.RequestStart, RequestID: "req-1", Route: "chat", Stream: true})
	log.Append(&events.Event{Seq: 2, Time: t0.Add(850 * time.Millisecond), Kind: events.RequestEnd, RequestID: "req-1", Route: "chat",
		Target: "openai:gpt-4o", Outcome: events.OutcomeServed, Duration: 850 * time.Millisecond})
	for i, e := range log.All() {
		fmt.Printf("%d %s %s at %v target=%q\n", i, e.Kind, e.RequestID, e.Time.Sub(t0), e.Target)
	}
	_ = log.WriteJSONL(os.Stdout)
	// Output:
	// 0 request.start req-1 at 0s target=""
	// 1 request.end req-1 at 850ms target="openai:gpt-4o"
	// {"seq":1,"time":"2026-01-01T00:00:00Z","kind":"request.start","request_id":"req-1","route":"chat","stream":true}
	// {"seq":2,"time":"2026-01-01T00:00:00.85Z","kind":"request.end","request_id":"req-1","route":"chat","target":"openai:gpt-4o","outcome":"served","duration_ns":850000000}
}
