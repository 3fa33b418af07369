package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/scenarios"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fixture scores a hand-built two-minute incident: 10 requests/s, the
// primary answers 429 from 30s to 90s, its breaker opens at 34s and traffic
// moves to the fallback; the breaker half-opens and closes after the fault.
func fixture() *scenarios.Result {
	const primary, fallback = "openai:gpt-4o", "anthropic:claude-sonnet"
	var log events.Log
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	log.Emit(events.Event{Time: at(30 * time.Second), Kind: events.FaultStart, Name: "openai-429", Target: primary, Reason: "http_error"})
	breakerOpen := false
	for i := 0; i < 1200; i++ {
		start := time.Duration(i) * 100 * time.Millisecond
		id := fmt.Sprintf("r%04d", i)
		log.Emit(events.Event{Time: at(start), Kind: events.RequestStart, RequestID: id, Route: "chat"})
		inFault := start >= 30*time.Second && start < 90*time.Second
		if start >= 34*time.Second && !breakerOpen && start < 95*time.Second {
			breakerOpen = true
			log.Emit(events.Event{Time: at(start), Kind: events.BreakerTransition, Target: primary, From: "closed", To: "open", Reason: "error_rate"})
		}
		if start >= 95*time.Second && breakerOpen {
			breakerOpen = false
			log.Emit(events.Event{Time: at(start), Kind: events.BreakerTransition, Target: primary, From: "open", To: "half_open", Reason: "timer"})
			log.Emit(events.Event{Time: at(start + 50*time.Millisecond), Kind: events.BreakerTransition, Target: primary, From: "half_open", To: "closed", Reason: "trial_ok"})
		}
		tgt := primary
		tt := start
		if inFault && !breakerOpen {
			log.Emit(events.Event{Time: at(tt), Kind: events.AttemptStart, RequestID: id, Target: primary, Attempt: 1})
			log.Emit(events.Event{Time: at(tt + 20*time.Millisecond), Kind: events.AttemptEnd, RequestID: id, Target: primary, Attempt: 1, Status: 429, Class: "rate_limited", Duration: 20 * time.Millisecond})
			tt += 20 * time.Millisecond
			tgt = fallback
		} else if breakerOpen {
			tgt = fallback
		}
		ttft := 300 * time.Millisecond
		if tgt == fallback {
			ttft = 450 * time.Millisecond
		}
		log.Emit(events.Event{Time: at(tt), Kind: events.AttemptStart, RequestID: id, Target: tgt, Attempt: 2})
		log.Emit(events.Event{Time: at(tt + 800*time.Millisecond), Kind: events.AttemptEnd, RequestID: id, Target: tgt, Attempt: 2, Status: 200, Class: "ok",
			TTFT: ttft, Duration: 800 * time.Millisecond, InputTokens: 500, OutputTokens: 200})
		log.Emit(events.Event{Time: at(tt + 800*time.Millisecond), Kind: events.RequestEnd, RequestID: id, Route: "chat", Target: tgt, Outcome: events.OutcomeServed,
			TTFT: tt - start + ttft, Duration: tt - start + 800*time.Millisecond})
	}
	log.Emit(events.Event{Time: at(36 * time.Second), Kind: events.AlertFired, Name: "fallback_rate_high", Severity: "page", Route: "chat"})
	log.Emit(events.Event{Time: at(36 * time.Second), Kind: events.AlertDelivered, Name: "fallback_rate_high", Sink: "oncall", OK: false, Reason: "connection refused"})
	log.Emit(events.Event{Time: at(90 * time.Second), Kind: events.FaultEnd, Name: "openai-429", Target: primary})
	res := scenarios.Score(scenarios.Input{
		Events: log.Events(), Start: t0, End: at(120 * time.Second),
		SLO:           scenarios.SLO{SuccessRate: 0.99, Window: 10 * time.Second},
		PrimaryTarget: primary,
		Prices: map[string]scenarios.Price{
			primary:  {InputPerMTok: 2.5, OutputPerMTok: 10},
			fallback: {InputPerMTok: 3, OutputPerMTok: 15},
		},
	})
	res.Scenario, res.File, res.Mode, res.Seed = "primary-429-storm", "examples/gamedays/primary-429-storm.yaml", scenarios.ModeSim, 42
	res.Start, res.Duration, res.Elapsed = t0, 120*time.Second, 120*time.Second
	res.Source = "version: 1\nname: primary-429-storm\nseed: 42\n"
	res.Expectations = []scenarios.Verdict{
		{Name: "ttd", Step: "openai-429", Target: primary, Want: "<= 30s", Got: fmtDur(res.Faults[0].TTD), Pass: res.Faults[0].Detected && res.Faults[0].TTD <= 30*time.Second},
		{Name: "availability", Want: ">= 99.5%", Got: fmtPct(res.Overall.Availability.Success), Pass: res.Overall.Availability.Success >= 0.995},
		{Name: "alert fallback_rate_high", Want: "delivered to oncall within 2m", Got: "fired at 36s, delivery to oncall failed", Pass: false},
	}
	res.Pass = false
	return res
}

func jsonEncode(buf *bytes.Buffer, v any) error { return json.NewEncoder(buf).Encode(v) }
