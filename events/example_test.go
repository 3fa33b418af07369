package events_test

import (
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
