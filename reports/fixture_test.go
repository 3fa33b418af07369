package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/scenarios/score"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fixture scores a hand-built two-minute incident: 10 requests/s, the
// primary answers 429 from 30s to 90s, its breaker opens at 34s and traffic
// moves to the fallback; the breaker half-opens and closes after the fault.
func fixture() *score.Result {
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
	res := score.Score(score.Input{
		Events: log.Events(), Start: t0, End: at(120 * time.Second),
		SLO:           score.SLO{SuccessRate: 0.99, Window: 10 * time.Second},
		PrimaryTarget: primary,
		Prices: map[string]score.Price{
			primary:  {InputPerMTok: 2.5, OutputPerMTok: 10},
			fallback: {InputPerMTok: 3, OutputPerMTok: 15},
		},
	})
	res.Scenario, res.File, res.Mode, res.Seed = "primary-429-storm", "examples/gamedays/primary-429-storm.yaml", score.ModeSim, 42
	res.Start, res.Duration, res.Elapsed = t0, 120*time.Second, 120*time.Second
	res.Source = "version: 1\nname: primary-429-storm\nseed: 42\n"
	res.Expectations = []score.Verdict{
		{Name: "ttd", Step: "openai-429", Target: primary, Want: "<= 30s", Got: fmtDur(res.Faults[0].TTD), Pass: res.Faults[0].Detected && res.Faults[0].TTD <= 30*time.Second},
		{Name: "availability", Want: ">= 99.5%", Got: fmtPct(res.Overall.Availability.Success), Pass: res.Overall.Availability.Success >= 0.995},
		{Name: "alert fallback_rate_high", Want: "delivered to oncall within 2m", Got: "fired at 36s, delivery to oncall failed", Pass: false},
	}
	res.Pass = false
	return res
}

// incidents scores a hand-built three-minute run with several faults on
// two targets, for the renderings where faults crowd each other: 10
// requests/s; the primary answers 429 from 30s to 90s (its breaker opens
// 829ms in), then is slow from 90s to 2m; the fallback flaps from 60s to
// 75s (unhealthy, healthy, unhealthy), so requests go to the third target;
// a false alarm marks the third target unhealthy at 2m30s for 5s. Every
// request served by a fallback is a tier.served event.
func incidents() *score.Result {
	const primary, fallback, third = "openai:gpt-4o", "anthropic:claude-sonnet-4-5", "gemini:gemini-2.5-flash"
	var log events.Log
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	s := time.Second
	ms := time.Millisecond
	fault := func(name, target, reason string, from, to time.Duration) {
		log.Emit(events.Event{Time: at(from), Kind: events.FaultStart, Name: name, Target: target, Reason: reason})
		log.Emit(events.Event{Time: at(to), Kind: events.FaultEnd, Name: name, Target: target})
	}
	fault("primary-429-storm-of-the-quarter", primary, "http_error", 30*s, 90*s)
	fault("primary-slow", primary, "ttft", 90*s, 120*s)
	fault("fallback-flaky", fallback, "http_error", 60*s, 75*s)
	type change struct {
		at            time.Duration
		target, kind  string
		from, to, why string
	}
	changes := []change{
		{30*s + 829*ms, primary, "breaker", "closed", "open", "error_rate"},
		{61 * s, fallback, "health", "healthy", "unhealthy", "failures"},
		{63 * s, fallback, "health", "unhealthy", "healthy", "recovered"},
		{64 * s, fallback, "health", "healthy", "unhealthy", "failures"},
		{77 * s, fallback, "health", "unhealthy", "healthy", "recovered"},
		{78 * s, fallback, "health", "healthy", "unhealthy", "failures"},
		{80 * s, fallback, "health", "unhealthy", "healthy", "recovered"},
		{125 * s, primary, "breaker", "open", "half_open", "timer"},
		{125*s + 50*ms, primary, "breaker", "half_open", "closed", "trial_ok"},
		{150 * s, third, "health", "healthy", "unhealthy", "failures"},
		{155 * s, third, "health", "unhealthy", "healthy", "recovered"},
	}
	demoted := map[string]bool{}
	next := 0
	for i := 0; i < 1800; i++ {
		start := time.Duration(i) * 100 * time.Millisecond
		for next < len(changes) && changes[next].at <= start {
			c := changes[next]
			kind := events.BreakerTransition
			if c.kind == "health" {
				kind = events.HealthChange
			}
			log.Emit(events.Event{Time: at(c.at), Kind: kind, Target: c.target, From: c.from, To: c.to, Reason: c.why})
			demoted[c.target] = c.to != "closed" && c.to != "healthy"
			next++
		}
		id := fmt.Sprintf("r%04d", i)
		log.Emit(events.Event{Time: at(start), Kind: events.RequestStart, RequestID: id, Route: "chat"})
		tgt := primary
		for _, c := range []string{primary, fallback, third} {
			if !demoted[c] {
				tgt = c
				break
			}
		}
		tt := start
		if start >= 30*s && start < 90*s && tgt == primary {
			log.Emit(events.Event{Time: at(tt), Kind: events.AttemptStart, RequestID: id, Target: primary, Attempt: 1})
			log.Emit(events.Event{Time: at(tt + 20*ms), Kind: events.AttemptEnd, RequestID: id, Target: primary, Attempt: 1, Status: 429, Class: "rate_limited", Duration: 20 * ms})
			tt += 20 * ms
			tgt = fallback
		}
		ttft := 300 * ms
		if tgt != primary {
			ttft = 450 * ms
		}
		log.Emit(events.Event{Time: at(tt), Kind: events.AttemptStart, RequestID: id, Target: tgt, Attempt: 2})
		log.Emit(events.Event{Time: at(tt + 800*ms), Kind: events.AttemptEnd, RequestID: id, Target: tgt, Attempt: 2, Status: 200, Class: "ok",
			TTFT: ttft, Duration: 800 * ms, InputTokens: 500, OutputTokens: 200})
		if tgt != primary {
			log.Emit(events.Event{Time: at(tt + 800*ms), Kind: events.TierServed, RequestID: id, Route: "chat", Target: tgt, Tier: "equivalent"})
		}
		log.Emit(events.Event{Time: at(tt + 800*ms), Kind: events.RequestEnd, RequestID: id, Route: "chat", Target: tgt, Outcome: events.OutcomeServed,
			TTFT: tt - start + ttft, Duration: tt - start + 800*ms})
	}
	// In time order, numbered in that order, as an engine logs them.
	evs := log.Events()
	slices.SortStableFunc(evs, func(a, b events.Event) int { return a.Time.Compare(b.Time) })
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
	}
	res := score.Score(score.Input{
		Events: evs, Start: t0, End: at(180 * s),
		SLO:           score.SLO{SuccessRate: 0.99, Window: 10 * s},
		PrimaryTarget: primary,
		Prices: map[string]score.Price{
			primary:  {InputPerMTok: 2.5, OutputPerMTok: 10},
			fallback: {InputPerMTok: 3, OutputPerMTok: 15},
			third:    {InputPerMTok: 0.3, OutputPerMTok: 2.5},
		},
	})
	res.Scenario, res.File, res.Mode, res.Seed = "crowded-incident", "crowded-incident.yaml", score.ModeSim, 7
	res.Start, res.Duration, res.Elapsed = t0, 180*s, 180*s
	f := res.Faults[0]
	fb, _ := res.Target(fallback)
	res.Expectations = []score.Verdict{
		{Name: "ttd", Step: f.Step, Target: f.Target, Want: "<= 30s", Got: fmtDur(f.TTD) + " (" + f.DetectedBy + ")", Pass: true},
		{Name: "flaps", Target: fallback, Want: "<= 0", Got: fmt.Sprint(fb.Flaps), Pass: fb.Flaps == 0},
		{Name: "alert fallback_rate_high", Want: "fires within 2m0s of the first fault, delivered to oncall", Got: "fired ×1, first 10s after the first fault, delivered to oncall ×1", Pass: true},
	}
	res.Pass = fb.Flaps == 0
	return res
}

func jsonEncode(buf *bytes.Buffer, v any) error { return json.NewEncoder(buf).Encode(v) }
