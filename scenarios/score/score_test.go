package score

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/yamlfile"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// logb builds event logs by hand.
type logb struct {
	evs     []events.Event
	journal []JournalEntry
	n       int
	// streamed marks the requests req adds as streams, when set.
	streamed func(n int) bool
}

type att struct {
	target string
	class  string
	dur    time.Duration
	in     int
	cached int
	out    int
	cost   float64
}

func (b *logb) emit(e events.Event) { e.Seq = uint64(len(b.evs) + 1); b.evs = append(b.evs, e) }

// req adds a request starting at start whose attempts run back to back; it
// is served by the last attempt when that one is ok.
func (b *logb) req(start time.Duration, outcome string, atts ...att) string {
	b.n++
	id := fmt.Sprintf("r%d", b.n)
	stream := b.streamed != nil && b.streamed(b.n)
	b.emit(events.Event{Time: at(start), Kind: events.RequestStart, RequestID: id, Route: "chat", Stream: stream})
	t := at(start)
	target := ""
	for i, a := range atts {
		b.emit(events.Event{Time: t, Kind: events.AttemptStart, RequestID: id, Target: a.target, Attempt: i + 1})
		if a.dur == 0 {
			a.dur = 100 * time.Millisecond
		}
		t = t.Add(a.dur)
		b.emit(events.Event{Time: t, Kind: events.AttemptEnd, RequestID: id, Target: a.target, Attempt: i + 1, Class: a.class, Stream: stream,
			TTFT: a.dur / 2, Duration: a.dur, InputTokens: a.in, CachedTokens: a.cached, OutputTokens: a.out, Cost: a.cost})
		if a.class == "ok" {
			target = a.target
		}
	}
	b.emit(events.Event{Time: t, Kind: events.RequestEnd, RequestID: id, Route: "chat", Outcome: outcome, Target: target, Duration: t.Sub(at(start))})
	return id
}

func (b *logb) ev(d time.Duration, e events.Event) { e.Time = at(d); b.emit(e) }

func (b *logb) fault(name, target string, from, to time.Duration) {
	b.ev(from, events.Event{Kind: events.FaultStart, Name: name, Target: target, Reason: "http_error"})
	if to > 0 {
		b.ev(to, events.Event{Kind: events.FaultEnd, Name: name, Target: target})
	}
}

// traffic adds 10 requests per second in [from, to) answered by f(t).
func (b *logb) traffic(from, to time.Duration, f func(t time.Duration) (string, []att)) {
	for t := from; t < to; t += 100 * time.Millisecond {
		outcome, atts := f(t)
		b.req(t, outcome, atts...)
	}
}

// blackBox adds a black box's traffic: a request every 100ms until end,
// no gateway events, each journaled by the mock of a:m, or of b:m from
// shiftFrom to shiftTo.
func (b *logb) blackBox(end, shiftFrom, shiftTo time.Duration) {
	for d := time.Duration(0); d < end; d += 100 * time.Millisecond {
		id := fmt.Sprintf("r%d", d/time.Millisecond)
		b.ev(d, events.Event{Kind: events.RequestStart, RequestID: id})
		tgt := "a:m"
		if d >= shiftFrom && d < shiftTo {
			tgt = "b:m"
		}
		b.journal = append(b.journal, JournalEntry{Time: at(d), RequestID: id, Target: tgt, Outcome: "ok"})
		b.ev(d+50*time.Millisecond, events.Event{Kind: events.RequestEnd, RequestID: id, Outcome: events.OutcomeServed})
	}
}

func ok(target string) att   { return att{target: target, class: "ok"} }
func fail(target string) att { return att{target: target, class: "rate_limited"} }

func (b *logb) score(end time.Duration) *Result {
	// Sort is not needed: builders emit in time order per helper; the scorer
	// reads events by kind, not by position.
	in := Input{Events: b.evs, Journal: b.journal, Start: t0, End: at(end),
		SLO: SLO{SuccessRate: 0.99, Window: 10 * time.Second}, PrimaryTarget: "a:m"}
	res := Score(in)
	if d := cmp.Diff(res, feedScore(in), cmpopts.IgnoreUnexported(Result{})); d != "" {
		// Every hand-built log is also scored as the simulator scores,
		// event by event as it is written.
		panic("scored event by event, the log scores differently (-Score +feed):\n" + d)
	}
	return res
}

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ± %v", name, got, want, tol)
	}
}

func TestScoreTTM(t *testing.T) {
	tests := []struct {
		name          string
		failUntil     time.Duration // requests starting in [20s, failUntil) fail
		wantImpact    bool
		wantMitigated bool
		wantTTM       time.Duration
	}{
		{"no impact", 20 * time.Second, false, true, 0},
		{"mitigated after 5s of failures", 25 * time.Second, true, true, 15 * time.Second},
		{"never mitigated", 60 * time.Second, true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &logb{}
			b.fault("f", "a:m", 20*time.Second, 40*time.Second)
			b.traffic(0, 60*time.Second, func(d time.Duration) (string, []att) {
				if d >= 20*time.Second && d < tt.failUntil {
					return events.OutcomeFailed, []att{fail("a:m")}
				}
				return events.OutcomeServed, []att{ok("a:m")}
			})
			f, found := b.score(60*time.Second).Fault("f", "a:m")
			if !found {
				t.Fatal("fault not scored")
			}
			if f.Impact != tt.wantImpact || f.Mitigated != tt.wantMitigated || f.TTM != tt.wantTTM {
				t.Errorf("impact=%v mitigated=%v ttm=%v, want %v %v %v", f.Impact, f.Mitigated, f.TTM, tt.wantImpact, tt.wantMitigated, tt.wantTTM)
			}
		})
	}
}

func TestScoreTTD(t *testing.T) {
	tests := []struct {
		name   string
		events func(b *logb)
		want   time.Duration
		by     string
		found  bool
	}{
		{"breaker opens", func(b *logb) {
			b.ev(25*time.Second, events.Event{Kind: events.BreakerTransition, Target: "a:m", From: "closed", To: "open"})
		}, 5 * time.Second, "breaker", true},
		{"health before breaker", func(b *logb) {
			b.ev(23*time.Second, events.Event{Kind: events.HealthChange, Target: "a:m", From: "healthy", To: "unhealthy"})
			b.ev(25*time.Second, events.Event{Kind: events.BreakerTransition, Target: "a:m", From: "closed", To: "open"})
		}, 3 * time.Second, "health", true},
		{"detector signal", func(b *logb) {
			b.ev(31*time.Second, events.Event{Kind: events.DetectorSignal, Target: "a:m", Name: "length_share"})
		}, 11 * time.Second, "detector:length_share", true},
		{"probe threshold crossed on the third failure", func(b *logb) {
			for i := range 3 {
				b.ev(time.Duration(21+i)*time.Second, events.Event{Kind: events.ProbeResult, Target: "a:m"})
			}
		}, 3 * time.Second, "probe", true},
		{"rate-limited probes neither fail nor pass", func(b *logb) {
			b.ev(21*time.Second, events.Event{Kind: events.ProbeResult, Target: "a:m"})
			b.ev(22*time.Second, events.Event{Kind: events.ProbeResult, Target: "a:m", Class: "rate_limited"})
			b.ev(23*time.Second, events.Event{Kind: events.ProbeResult, Target: "a:m"})
			b.ev(24*time.Second, events.Event{Kind: events.ProbeResult, Target: "a:m"})
		}, 4 * time.Second, "probe", true},
		{"other target and before the fault ignored", func(b *logb) {
			b.ev(10*time.Second, events.Event{Kind: events.BreakerTransition, Target: "a:m", From: "closed", To: "open"})
			b.ev(15*time.Second, events.Event{Kind: events.BreakerTransition, Target: "a:m", From: "open", To: "half-open"})
			b.ev(25*time.Second, events.Event{Kind: events.BreakerTransition, Target: "b:m", From: "closed", To: "open"})
		}, 0, "", false},
		{"already open at fault start: masked, not re-detected", func(b *logb) {
			b.ev(10*time.Second, events.Event{Kind: events.BreakerTransition, Target: "a:m", From: "closed", To: "open"})
		}, 0, "", false},
		{"after the fault ended", func(b *logb) {
			b.ev(41*time.Second, events.Event{Kind: events.BreakerTransition, Target: "a:m", From: "closed", To: "open"})
		}, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &logb{}
			b.req(0, events.OutcomeServed, ok("a:m"))
			b.fault("f", "a:m", 20*time.Second, 40*time.Second)
			tt.events(b)
			f, _ := b.score(60*time.Second).Fault("f", "")
			if f.Detected != tt.found || f.TTD != tt.want || f.DetectedBy != tt.by {
				t.Errorf("detected=%v ttd=%v by=%q, want %v %v %q", f.Detected, f.TTD, f.DetectedBy, tt.found, tt.want, tt.by)
			}
		})
	}
}

func TestScoreTTDTrafficShiftBlackBox(t *testing.T) {
	// No gateway events: attempts are what the mocks journaled. Before the
	// fault a:m takes every attempt; from 25s on it takes none.
	b := &logb{}
	b.fault("f", "a:m", 20*time.Second, 40*time.Second)
	b.blackBox(60*time.Second, 25*time.Second, 40*time.Second)
	res := b.score(60 * time.Second)
	if !res.BlackBox {
		t.Fatal("want black-box scoring")
	}
	f, _ := res.Fault("f", "a:m")
	// Window (t-10s, t]: a:m's share drops below 50% once more than 5s of the
	// window is after 25s, i.e. at t = 30.1s (bin edge after 30s).
	if !f.Detected || f.DetectedBy != "traffic_shift" {
		t.Fatalf("detected=%v by=%q", f.Detected, f.DetectedBy)
	}
	near(t, "ttd seconds", f.TTD.Seconds(), 10.1, 0.11)
}

func TestScoreTTR(t *testing.T) {
	tests := []struct {
		name      string
		backAt    time.Duration // a:m serves again from here
		runEnd    time.Duration
		recovered bool
		ttr       time.Duration
	}{
		// From 50s a:m serves all; the 10s window holds 90% a:m at 59s.
		{"recovers", 50 * time.Second, 90 * time.Second, true, 19 * time.Second},
		{"immediately", 40 * time.Second, 90 * time.Second, true, 9 * time.Second},
		{"never", 200 * time.Second, 90 * time.Second, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &logb{}
			b.fault("f", "a:m", 20*time.Second, 40*time.Second)
			b.traffic(0, tt.runEnd, func(d time.Duration) (string, []att) {
				if d >= 20*time.Second && d < tt.backAt {
					return events.OutcomeServed, []att{ok("b:m")}
				}
				return events.OutcomeServed, []att{ok("a:m")}
			})
			f, _ := b.score(tt.runEnd).Fault("f", "a:m")
			near(t, "baseline share", f.BaselineShare, 1, 1e-9)
			// Attempts end 100ms after they start, which shifts the series by one bin.
			if f.Recovered != tt.recovered || (f.Recovered && absDur(f.TTR-tt.ttr) > 100*time.Millisecond) {
				t.Errorf("recovered=%v ttr=%v, want %v %v", f.Recovered, f.TTR, tt.recovered, tt.ttr)
			}
		})
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func TestScoreFaultAtZeroAndSuperseded(t *testing.T) {
	// Step one starts at t=0 (no pre-fault baseline) and is followed at once
	// by step two on the same target.
	b := &logb{}
	b.fault("half", "a:m", 0, 20*time.Second)
	b.fault("full", "a:m", 20*time.Second, 40*time.Second)
	b.ev(2*time.Second, events.Event{Kind: events.BreakerTransition, Target: "a:m", From: "closed", To: "open"})
	b.traffic(0, 80*time.Second, func(d time.Duration) (string, []att) {
		if d < 40*time.Second {
			return events.OutcomeServed, []att{fail("a:m"), ok("b:m")}
		}
		return events.OutcomeServed, []att{ok("a:m")}
	})
	res := b.score(80 * time.Second)
	half, _ := res.Fault("half", "")
	if !half.Superseded || half.Recovered {
		t.Errorf("half: superseded=%v recovered=%v, want superseded", half.Superseded, half.Recovered)
	}
	if !half.Detected || half.TTD != 2*time.Second {
		t.Errorf("half: ttd=%v detected=%v", half.TTD, half.Detected)
	}
	full, _ := res.Fault("full", "")
	if !full.Masked || full.MaskedBy != "half" || full.Detected {
		t.Errorf("full: masked=%v by %q, detected=%v (%q), want masked by half, not re-detected", full.Masked, full.MaskedBy, full.Detected, full.DetectedBy)
	}
	// Baseline falls back to the time outside faults (after 40s): share 1.
	near(t, "full baseline share", full.BaselineShare, 1, 0.01) // one b:m answer ends just after 40s
	if !full.Recovered {
		t.Error("full: not recovered")
	}
	near(t, "half amplification", half.Retry.Amplification, 2, 1e-9)
	// Neither step has a pre-fault period with traffic (one starts at 0,
	// the other right after it): both baselines are the time outside
	// every fault, where a:m takes 10 attempts a second, as in both steps.
	near(t, "half load ratio", half.LoadRatio, 1, 0.01)
	near(t, "full load ratio", full.LoadRatio, 1, 0.01)
	near(t, "full baseline load", full.BaselineLoad, 10, 0.1)
}

// TestScoreTrafficShiftByRequests: a black box that retries the faulted
// primary for every request before its fallback never stops trying it
// first, but users are served by the fallback: the shift by first attempts
// never happens, the shift by served requests does, and TTD is that one
// (the share of calls, 2 in 3 on the primary, never falls below half).
func TestScoreTrafficShiftByRequests(t *testing.T) {
	b := &logb{}
	b.fault("f", "a:m", 20*time.Second, 40*time.Second)
	for d := time.Duration(0); d < 60*time.Second; d += 100 * time.Millisecond {
		id := fmt.Sprintf("r%d", d/time.Millisecond)
		b.ev(d, events.Event{Kind: events.RequestStart, RequestID: id, Route: "chat"})
		if d >= 20*time.Second && d < 40*time.Second {
			b.journal = append(b.journal,
				JournalEntry{Time: at(d), RequestID: id, Target: "a:m", Outcome: "error"},
				JournalEntry{Time: at(d + 10*time.Millisecond), RequestID: id, Target: "a:m", Outcome: "error"},
				JournalEntry{Time: at(d + 20*time.Millisecond), RequestID: id, Target: "b:m", Outcome: "ok"})
		} else {
			b.journal = append(b.journal, JournalEntry{Time: at(d), RequestID: id, Target: "a:m", Outcome: "ok"})
		}
		b.ev(d+50*time.Millisecond, events.Event{Kind: events.RequestEnd, RequestID: id, Route: "chat", Outcome: events.OutcomeServed})
	}
	res := b.score(60 * time.Second)
	f, _ := res.Fault("f", "a:m")
	if f.ShiftFirst != nil {
		t.Errorf("shift by first attempts at %v, want none (every request tries a:m first)", *f.ShiftFirst)
	}
	if f.ShiftServed == nil || !f.Detected || f.DetectedBy != "traffic_shift" {
		t.Fatalf("served shift %v detected=%v by %q, want a traffic shift by served requests", f.ShiftServed, f.Detected, f.DetectedBy)
	}
	// The served share of the window (t-10s, t] drops below half once more
	// than 5s of it is after 20s.
	near(t, "ttd seconds", f.TTD.Seconds(), 5.1, 0.11)
	near(t, "degraded during the fault", f.Availability.DegradedRate, 1, 1e-9)
	near(t, "load ratio (calls)", f.LoadRatio, 2, 0.01)
}

func TestScoreOverlappingFaults(t *testing.T) {
	b := &logb{}
	b.fault("a-down", "a:m", 10*time.Second, 30*time.Second)
	b.fault("b-slow", "b:m", 20*time.Second, 40*time.Second)
	b.traffic(0, 50*time.Second, func(d time.Duration) (string, []att) {
		switch {
		case d >= 20*time.Second && d < 30*time.Second:
			return events.OutcomeFailed, []att{fail("a:m"), fail("b:m")}
		case d >= 10*time.Second && d < 30*time.Second:
			return events.OutcomeServed, []att{fail("a:m"), ok("b:m")}
		}
		return events.OutcomeServed, []att{ok("a:m")}
	})
	res := b.score(50 * time.Second)
	if len(res.Faults) != 2 {
		t.Fatalf("faults = %d, want 2", len(res.Faults))
	}
	a, _ := res.Fault("a-down", "")
	bb, _ := res.Fault("b-slow", "")
	near(t, "a-down availability", a.Availability.Success, 0.5, 1e-9)
	near(t, "b-slow availability", bb.Availability.Success, 0.5, 1e-9)
	near(t, "overall availability", res.Overall.Availability.Success, 0.8, 1e-9)
	if a.Availability.Requests != 200 || bb.Availability.Requests != 200 {
		t.Errorf("requests per fault = %d, %d, want 200, 200", a.Availability.Requests, bb.Availability.Requests)
	}
	// Offered load on a:m during its fault equals its baseline (1 attempt per request).
	near(t, "a load ratio", a.LoadRatio, 1, 1e-9)
}

// TestScoreFlaps: demotions split into re-detections within a fault
// (a half-open trial failing during a long fault is one), oscillations
// after it (demote → recover → demote) and false positives outside every
// fault. Before, the re-detection counted as a flap.
func TestScoreFlaps(t *testing.T) {
	b := &logb{}
	b.req(0, events.OutcomeServed, ok("a:m"))
	b.fault("f", "a:m", 20*time.Second, 40*time.Second)
	tr := func(d time.Duration, from, to string) {
		b.ev(d, events.Event{Kind: events.BreakerTransition, Target: "a:m", From: from, To: to})
	}
	tr(25*time.Second, "closed", "open")
	b.ev(26*time.Second, events.Event{Kind: events.HealthChange, Target: "a:m", From: "healthy", To: "unhealthy"})
	tr(35*time.Second, "open", "half_open")
	tr(36*time.Second, "half_open", "open") // a re-detection: the fault lasts
	tr(42*time.Second, "open", "half_open")
	tr(43*time.Second, "half_open", "open") // not recovered yet: still a re-detection
	tr(45*time.Second, "half_open", "closed")
	tr(47*time.Second, "closed", "open") // recovered, then demoted again: an oscillation
	tr(49*time.Second, "open", "closed")
	tr(70*time.Second, "closed", "open") // outside every fault: false positive
	res := b.score(90 * time.Second)
	ts, _ := res.Target("a/m")
	got := [...]int{ts.Openings, ts.Cycles, ts.Unhealthy, ts.ReDetections, ts.Oscillations, ts.FalsePositives, ts.Flaps}
	if want := [...]int{5, 2, 1, 2, 1, 1, 2}; got != want {
		t.Errorf("openings, cycles, unhealthy, re-detections, oscillations, false positives, flaps = %v, want %v", got, want)
	}
	f, _ := res.Fault("f", "")
	if f.ReDetections != 2 || f.Oscillations != 1 || f.Flaps != 1 {
		t.Errorf("fault re-detections=%d oscillations=%d flaps=%d, want 2 1 1", f.ReDetections, f.Oscillations, f.Flaps)
	}
	if res.Overall.Flaps != 2 {
		t.Errorf("overall flaps = %d, want 2", res.Overall.Flaps)
	}
}

// TestScoreUnnecessaryFallback: a:m's fault ends at 20s, but its breaker
// keeps it out of traffic until 50s: 30s healthy and unused (plus the
// SLO window it takes the share to come back), counted; b:m, which never
// had a share, is never counted.
func TestScoreUnnecessaryFallback(t *testing.T) {
	b := &logb{}
	b.fault("f", "a:m", 10*time.Second, 20*time.Second)
	b.traffic(0, 80*time.Second, func(d time.Duration) (string, []att) {
		if d >= 10*time.Second && d < 50*time.Second {
			return events.OutcomeServed, []att{ok("b:m")}
		}
		return events.OutcomeServed, []att{ok("a:m")}
	})
	res := b.score(80 * time.Second)
	a, _ := res.Target("a:m")
	// Below half its share from 20s (the fault's end) until the window
	// (t-10s, t] is half back: about 55s.
	near(t, "a:m unnecessary fallback seconds", a.UnnecessaryFallback.Seconds(), 35, 0.21)
	if bm, _ := res.Target("b:m"); bm.UnnecessaryFallback != 0 {
		t.Errorf("b:m unnecessary fallback = %v, want 0 (no baseline share)", bm.UnnecessaryFallback)
	}
}

func TestScoreCost(t *testing.T) {
	prices := map[string]Price{
		"a:m": {InputPerMTok: 1, OutputPerMTok: 2, CachedInputPerMTok: 0.5},
		"b:m": {InputPerMTok: 10, OutputPerMTok: 20, CachedInputPerMTok: 5},
	}
	cost := func(tgt string, in, cached, out int) att {
		return att{target: tgt, class: "ok", in: in, cached: cached, out: out, cost: prices[tgt].Cost(in, cached, out)}
	}
	b := &logb{}
	b.fault("f", "a:m", 10*time.Second, 20*time.Second)
	// Baseline: 1M in (all cached when warm), 1M out on a:m: 0.5 + 2 = 2.5 each.
	b.req(1*time.Second, events.OutcomeServed, cost("a:m", 1e6, 1e6, 1e6))
	b.req(2*time.Second, events.OutcomeServed, cost("a:m", 1e6, 1e6, 1e6))
	// Fault: a failed attempt (no tokens) then b:m, cold cache: 10 + 20 = 30.
	b.req(11*time.Second, events.OutcomeServed, fail("a:m"), cost("b:m", 1e6, 0, 1e6))
	b.req(12*time.Second, events.OutcomeServed, fail("a:m"), cost("b:m", 1e6, 1e6, 1e6)) // warm: 5 + 20
	res := Score(Input{Events: b.evs, Start: t0, End: at(30 * time.Second), PrimaryTarget: "a:m", Prices: prices,
		SLO: SLO{SuccessRate: 0.99, Window: 10 * time.Second}})
	c := res.Overall.Cost
	near(t, "total", c.Total, 2.5+2.5+30+25, 1e-9)
	// Counterfactual: the same usage at a:m's price.
	near(t, "counterfactual", c.Counterfactual, 2.5+2.5+(1+2)+(0.5+2), 1e-9)
	near(t, "premium", c.FallbackPremium, 60-10.5, 1e-9)
	near(t, "multiplier", c.Multiplier, 27.5/2.5, 1e-9)
	// b:m is warm (hit ratio 1) in its later half; the cold request missed
	// 1M cached tokens at (10-5) per M.
	near(t, "warm-up penalty", c.CacheWarmupPenalty, 5, 1e-9)
	near(t, "by target b:m", c.ByTarget["b:m"], 55, 1e-9)
	f, _ := res.Fault("f", "")
	near(t, "fault cost multiplier", f.CostMultiplier, 11, 1e-9)
}

func TestScoreAvailabilityBadServedQuality(t *testing.T) {
	b := &logb{}
	r1 := b.req(1*time.Second, events.OutcomeServed, ok("a:m"))
	r2 := b.req(2*time.Second, events.OutcomeDegraded, fail("a:m"), ok("c:small"))
	r3 := b.req(3*time.Second, events.OutcomeFailed, fail("a:m"), fail("b:m"))
	r4 := b.req(4*time.Second, events.OutcomeServed, ok("a:m"))
	b.journal = []JournalEntry{
		{Time: at(1 * time.Second), RequestID: r1, Target: "a:m", Outcome: "ok", Corrupted: true, Fault: "truncate"},
		{Time: at(2 * time.Second), RequestID: r2, Target: "a:m", Outcome: "429"},
		{Time: at(2*time.Second + 100*time.Millisecond), RequestID: r2, Target: "c:small", Outcome: "ok"},
		// Corrupted but the request failed: not served.
		{Time: at(3 * time.Second), RequestID: r3, Target: "b:m", Outcome: "ok", Corrupted: true},
		{Time: at(4 * time.Second), RequestID: r4, Target: "a:m", Outcome: "ok"},
	}
	res := b.score(10 * time.Second)
	a := res.Overall.Availability
	if a.Requests != 4 || a.Served != 2 || a.Degraded != 1 || a.Failed != 1 {
		t.Errorf("availability = %+v", a)
	}
	near(t, "success", a.Success, 0.75, 1e-9)
	if res.Overall.BadServed != 1 {
		t.Errorf("bad served = %d, want 1", res.Overall.BadServed)
	}
	ts, _ := res.Target("a:m")
	near(t, "a:m quality", ts.Quality, 0.5, 1e-9)
	if ts.Attempts != 4 || ts.OK != 2 || ts.Classes["rate_limited"] != 2 {
		t.Errorf("a:m attempts=%d ok=%d classes=%v", ts.Attempts, ts.OK, ts.Classes)
	}
	// Eval records, when present, decide quality.
	res = Score(Input{Events: b.evs, Start: t0, End: at(10 * time.Second), Evals: []EvalRecord{
		{RequestID: r1, Target: "a:m", Pass: true}, {RequestID: r4, Target: "a:m", Pass: false}, {RequestID: r4, Target: "a:m", Pass: false},
	}})
	ts, _ = res.Target("a:m")
	near(t, "a:m eval quality", ts.Quality, 1.0/3, 1e-9)
}

func TestScoreLatencyAndRetry(t *testing.T) {
	b := &logb{streamed: func(int) bool { return true }}
	b.fault("f", "a:m", 10*time.Second, 20*time.Second)
	b.traffic(0, 30*time.Second, func(d time.Duration) (string, []att) {
		if d >= 10*time.Second && d < 20*time.Second {
			return events.OutcomeServed, []att{{target: "a:m", class: "timeout_ttft", dur: time.Second}, {target: "b:m", class: "ok", dur: 200 * time.Millisecond}}
		}
		return events.OutcomeServed, []att{{target: "a:m", class: "ok", dur: 200 * time.Millisecond}}
	})
	res := b.score(30 * time.Second)
	l := res.Overall.Latency
	if l.BaselineTTFT.P95 != 100*time.Millisecond || l.FaultTTFT.P95 != 1100*time.Millisecond {
		t.Errorf("ttft p95 baseline=%v fault=%v", l.BaselineTTFT.P95, l.FaultTTFT.P95)
	}
	near(t, "ttft penalty", l.TTFTPenalty, 11, 1e-9)
	if l.BaselineTotal.N != 0 || l.TotalPenalty != 0 {
		t.Errorf("streams scored as non-streamed: total %+v, penalty %v", l.BaselineTotal, l.TotalPenalty)
	}
	r := res.Overall.Retry
	near(t, "amplification", r.Amplification, 400.0/300, 1e-9)
	near(t, "peak", r.PeakAmplification, 2, 1e-9)
	f, _ := res.Fault("f", "")
	near(t, "fault amplification", f.Retry.Amplification, 2, 1e-9)
	near(t, "offered load a:m", f.OfferedLoad, 10, 1e-9)
	near(t, "load ratio", f.LoadRatio, 1, 1e-9)
}

func TestScoreNoTraffic(t *testing.T) {
	res := Score(Input{Start: t0, End: at(time.Minute)})
	if res.Overall.Availability.Requests != 0 || res.Overall.Retry.Amplification != 0 || len(res.Faults) != 0 {
		t.Errorf("empty run scored %+v", res.Overall)
	}
}

func TestScoreAlerts(t *testing.T) {
	b := &logb{}
	b.ev(30*time.Second, events.Event{Kind: events.AlertFired, Name: "fallback_rate_high", Severity: "page"})
	b.ev(30*time.Second, events.Event{Kind: events.AlertDelivered, Name: "fallback_rate_high", Sink: "oncall", OK: false})
	b.ev(30*time.Second, events.Event{Kind: events.AlertDelivered, Name: "fallback_rate_high", Sink: "log", OK: true})
	b.ev(90*time.Second, events.Event{Kind: events.AlertResolved, Name: "fallback_rate_high"})
	res := b.score(2 * time.Minute)
	if len(res.Alerts) != 1 {
		t.Fatalf("alerts = %+v", res.Alerts)
	}
	a := res.Alerts[0]
	if a.Fired != 1 || a.Resolved != 1 || a.Undelivered["oncall"] != 1 || a.Delivered["log"] != 1 || !a.FirstAt.Equal(at(30*time.Second)) || a.Severity != "page" {
		t.Errorf("alert = %+v", a)
	}
}

func TestScoreTTFTOfPartialStream(t *testing.T) {
	// A stream whose first attempt stalls after showing tokens and is
	// continued on a fallback: the user saw the first token of attempt one.
	b := &logb{}
	b.emit(events.Event{Time: at(0), Kind: events.RequestStart, RequestID: "r", Route: "chat", Stream: true})
	b.emit(events.Event{Time: at(0), Kind: events.AttemptStart, RequestID: "r", Target: "a:m", Stream: true})
	b.emit(events.Event{Time: at(6 * time.Second), Kind: events.AttemptEnd, RequestID: "r", Target: "a:m", Stream: true,
		Class: "stall", TTFT: 300 * time.Millisecond, OutputTokens: 20})
	b.emit(events.Event{Time: at(6 * time.Second), Kind: events.AttemptStart, RequestID: "r", Target: "b:m", Stream: true})
	b.emit(events.Event{Time: at(8 * time.Second), Kind: events.AttemptEnd, RequestID: "r", Target: "b:m", Stream: true,
		Class: "ok", TTFT: 500 * time.Millisecond, OutputTokens: 80})
	b.emit(events.Event{Time: at(8 * time.Second), Kind: events.RequestEnd, RequestID: "r", Outcome: events.OutcomeDegraded, Target: "b:m"})
	res := b.score(10 * time.Second)
	if got := res.Overall.Latency.BaselineTTFT.P50; got != 300*time.Millisecond {
		t.Errorf("ttft = %v, want 300ms (the stalled attempt's first token)", got)
	}
	if got := res.Overall.Latency.BaselineInterToken.P50; got != 1500*time.Millisecond/79 {
		t.Errorf("inter-token = %v, want 1.5s/79 (the serving attempt's tokens after its first)", got)
	}
	if n := res.Overall.Latency.BaselineTotal.N; n != 0 {
		t.Errorf("a stream counted among %d non-streamed totals", n)
	}
}

// TestScoreLatencyStreamedApart: non-streamed requests (4s in total, their
// first byte at 2s) and streams (first token at 100ms) mixed: each kind's
// latency is its own. Mixed, the TTFT p95 was the non-streamed 2s.
func TestScoreLatencyStreamedApart(t *testing.T) {
	b := &logb{streamed: func(n int) bool { return n%2 == 0 }}
	b.traffic(0, 30*time.Second, func(d time.Duration) (string, []att) {
		if b.n%2 == 0 { // the next request (b.n+1) is a stream when b.n+1 is even
			return events.OutcomeServed, []att{{target: "a:m", class: "ok", dur: 4 * time.Second, out: 100}}
		}
		return events.OutcomeServed, []att{{target: "a:m", class: "ok", dur: 200 * time.Millisecond, out: 11}}
	})
	l := b.score(40 * time.Second).Overall.Latency
	want := Latency{
		BaselineTTFT:       Percentiles{N: 150, P50: 100 * time.Millisecond, P95: 100 * time.Millisecond, P99: 100 * time.Millisecond},
		BaselineInterToken: Percentiles{N: 150, P50: 10 * time.Millisecond, P95: 10 * time.Millisecond, P99: 10 * time.Millisecond},
		BaselineTotal:      Percentiles{N: 150, P50: 4 * time.Second, P95: 4 * time.Second, P99: 4 * time.Second},
	}
	if d := cmp.Diff(want, l); d != "" {
		t.Errorf("latency (-want +got):\n%s", d)
	}
}

func TestJudgeDetectedBy(t *testing.T) {
	tests := []struct {
		name, want string
		f          FaultScore
		got        string
		pass       bool
	}{
		{"exact detector", "detector:json_invalid", FaultScore{Detected: true, DetectedBy: "detector:json_invalid"}, "detector:json_invalid", true},
		{"any detector", "detector", FaultScore{Detected: true, DetectedBy: "detector:finish_length"}, "detector:finish_length", true},
		{"health is not a detector", "detector", FaultScore{Detected: true, DetectedBy: "health"}, "health", false},
		{"other detector", "detector:json_invalid", FaultScore{Detected: true, DetectedBy: "detector:refusal"}, "detector:refusal", false},
		{"breaker", "breaker", FaultScore{Detected: true, DetectedBy: "breaker"}, "breaker", true},
		{"not detected", "health", FaultScore{}, "not detected", false},
		{"one of two", "detector:json_invalid | health", FaultScore{Detected: true, DetectedBy: "health"}, "health", true},
		{"the other of two", "detector:json_invalid|health", FaultScore{Detected: true, DetectedBy: "detector:json_invalid"}, "detector:json_invalid", true},
		{"neither of two", "detector:json_invalid | health", FaultScore{Detected: true, DetectedBy: "breaker"}, "breaker", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.f.Step, tt.f.Target = "s", "a:m"
			e := &Expect{Steps: map[string]StepExpect{"s": {StepBounds: StepBounds{DetectedBy: tt.want}}}}
			vs := e.Judge(&Result{Faults: []FaultScore{tt.f}})
			if len(vs) != 1 || vs[0].Name != "detected_by" || vs[0].Got != tt.got || vs[0].Want != tt.want || vs[0].Pass != tt.pass {
				t.Errorf("verdicts %+v, want one detected_by got %q pass %v", vs, tt.got, tt.pass)
			}
		})
	}
}

// TestScoreTTMCountsLatencyAndCorruption: during a TTFT brownout every
// answer succeeds but streams wait 8s for a first token; during a
// silent corruption every answer succeeds but is corrupted. Success rate
// alone saw "no impact" in both; with the SLO's TTFT and correctness
// parts the user impact is measured, and mitigated once the gateway moves
// traffic to b:m at 30s.
func TestScoreTTMCountsLatencyAndCorruption(t *testing.T) {
	for _, kind := range []string{"ttft", "corruption"} {
		t.Run(kind, func(t *testing.T) {
			b := &logb{streamed: func(int) bool { return true }}
			b.fault("f", "a:m", 20*time.Second, 60*time.Second)
			b.traffic(0, 80*time.Second, func(d time.Duration) (string, []att) {
				if d < 20*time.Second || d >= 30*time.Second {
					target := "a:m"
					if d >= 20*time.Second && d < 60*time.Second {
						target = "b:m"
					}
					return events.OutcomeServed, []att{ok(target)}
				}
				if kind == "ttft" {
					return events.OutcomeServed, []att{{target: "a:m", class: "ok", dur: 16 * time.Second}}
				}
				b.journal = append(b.journal, JournalEntry{Time: at(d), RequestID: fmt.Sprintf("r%d", b.n+1), Target: "a:m", Outcome: "ok", Corrupted: true})
				return events.OutcomeServed, []att{ok("a:m")}
			})
			in := Input{Events: b.evs, Journal: b.journal, Start: t0, End: at(80 * time.Second), PrimaryTarget: "a:m",
				SLO: SLO{SuccessRate: 0.99, Window: 10 * time.Second, Correctness: true, TTFT: LatencyObjective{Max: 2 * time.Second}}}
			res := Score(in)
			f, _ := res.Fault("f", "a:m")
			if !f.Impact || !f.Mitigated {
				t.Fatalf("impact=%v mitigated=%v, want impact, mitigated", f.Impact, f.Mitigated)
			}
			// The last bad answers end by 46s (TTFT: started by 29.9s,
			// 16s long) or 30s (corrupted); the window clears 10s later.
			want := map[string]time.Duration{"ttft": 36 * time.Second, "corruption": 20100 * time.Millisecond}[kind]
			near(t, "ttm seconds", f.TTM.Seconds(), want.Seconds(), 0.11)
			if a := f.Availability; a.Success != 1 || a.Good != 300 || a.GoodRate >= 0.8 {
				t.Errorf("availability %+v: want every request served, 300 of 400 good", a)
			}
			in.SLO = SLO{SuccessRate: 0.99, Window: 10 * time.Second}
			if f, _ := Score(in).Fault("f", "a:m"); f.Impact {
				t.Error("success rate alone sees impact: the log is not the disputed case")
			}
		})
	}
}

// TestScoreMaskedStep: a TTFT step demotes a:m; a token-rate step starts
// while a:m is still demoted. Its TTD is the time to the first detection
// caused by token-rate failures (1m54s), not "0s (already_open)".
func TestScoreMaskedStep(t *testing.T) {
	b := &logb{}
	b.ev(20*time.Second, events.Event{Kind: events.FaultStart, Name: "ttft", Target: "a:m", Reason: "ttft"})
	b.ev(60*time.Second, events.Event{Kind: events.FaultEnd, Name: "ttft", Target: "a:m"})
	b.ev(60*time.Second, events.Event{Kind: events.FaultStart, Name: "slow-tokens", Target: "a:m", Reason: "token_rate"})
	b.ev(300*time.Second, events.Event{Kind: events.FaultEnd, Name: "slow-tokens", Target: "a:m"})
	tr := func(d time.Duration, from, to string) {
		b.ev(d, events.Event{Kind: events.BreakerTransition, Target: "a:m", From: from, To: to})
	}
	tr(25*time.Second, "closed", "open")
	b.req(24*time.Second, events.OutcomeServed, att{target: "a:m", class: "timeout_ttft"}, ok("b:m"))
	// The breaker half-opens at 90s; its trial fails on a timeout left
	// from the TTFT step (not this fault's class); at 170s on the token
	// rate floor.
	tr(90*time.Second, "open", "half_open")
	b.req(90*time.Second, events.OutcomeServed, att{target: "a:m", class: "timeout_ttft"}, ok("b:m"))
	tr(91*time.Second, "half_open", "open")
	tr(170*time.Second, "open", "half_open")
	b.req(173*time.Second, events.OutcomeServed, att{target: "a:m", class: "token_rate_floor", dur: time.Second}, ok("b:m"))
	tr(174*time.Second, "half_open", "open")
	res := b.score(320 * time.Second)
	f, _ := res.Fault("slow-tokens", "a:m")
	if !f.Masked || f.MaskedBy != "ttft" || !f.Detected || f.TTD != 114*time.Second || f.DetectedBy != "breaker" {
		t.Errorf("masked=%v by %q, detected=%v ttd=%v by %q; want masked by ttft, detected after 1m54s by breaker",
			f.Masked, f.MaskedBy, f.Detected, f.TTD, f.DetectedBy)
	}
	first, _ := res.Fault("ttft", "a:m")
	if first.Masked || first.TTD != 5*time.Second {
		t.Errorf("ttft step: masked=%v ttd=%v, want 5s", first.Masked, first.TTD)
	}
}

// TestScoreNotExercised: an idle lower tier faulted with the primary
// receives no attempt: not exercised, which no step-wide ttd bound fails;
// named as a (step, target) pair it is reported.
func TestScoreNotExercised(t *testing.T) {
	b := &logb{}
	b.fault("f", "a:m", 20*time.Second, 40*time.Second)
	b.fault("f", "c:m", 20*time.Second, 40*time.Second)
	b.ev(22*time.Second, events.Event{Kind: events.BreakerTransition, Target: "a:m", From: "closed", To: "open"})
	b.traffic(0, 60*time.Second, func(d time.Duration) (string, []att) {
		if d >= 20*time.Second && d < 40*time.Second {
			return events.OutcomeServed, []att{ok("b:m")}
		}
		return events.OutcomeServed, []att{ok("a:m")}
	})
	res := b.score(60 * time.Second)
	c, _ := res.Fault("f", "c:m")
	if !c.NotExercised || c.Detected {
		t.Fatalf("c:m: not exercised=%v detected=%v", c.NotExercised, c.Detected)
	}
	if a, _ := res.Fault("f", "a:m"); a.NotExercised || !a.Detected {
		t.Errorf("a:m: not exercised=%v detected=%v", a.NotExercised, a.Detected)
	}
	max := yamlfile.Duration(10 * time.Second)
	e := &Expect{TTD: &DurationBound{Max: &max}}
	vs := e.Judge(res)
	if len(vs) != 1 || vs[0].Target != "a:m" || !vs[0].Pass {
		t.Errorf("step-wide ttd verdicts %+v, want one passing for a:m", vs)
	}
	e.Steps = map[string]StepExpect{"f": {Targets: map[string]StepBounds{"c/m": {TTD: &DurationBound{Max: &max}}}}}
	vs = e.Judge(res)
	i := slices.IndexFunc(vs, func(v Verdict) bool { return v.Target == "c:m" })
	if i < 0 || vs[i].Pass || vs[i].Got != "not exercised" {
		t.Errorf("verdicts %+v, want c:m's ttd failed as not exercised", vs)
	}
}

// TestScoreSupersededWithinATick: the live engine ends one step and
// starts the next 4µs later; that is adjacency (within a 1ms scheduling
// tick), as the simulator's equal instants are: superseded, not "not
// recovered". 2ms apart they are separate steps.
func TestScoreSupersededWithinATick(t *testing.T) {
	for _, tt := range []struct {
		gap        time.Duration
		superseded bool
	}{{0, true}, {4 * time.Microsecond, true}, {Adjacency, true}, {2 * time.Millisecond, false}} {
		b := &logb{}
		b.fault("one", "a:m", 10*time.Second, 30*time.Second)
		b.fault("two", "a:m", 30*time.Second+tt.gap, 50*time.Second)
		b.traffic(0, 70*time.Second, func(d time.Duration) (string, []att) {
			if d >= 10*time.Second && d < 50*time.Second {
				return events.OutcomeServed, []att{fail("a:m"), ok("b:m")}
			}
			return events.OutcomeServed, []att{ok("a:m")}
		})
		one, _ := b.score(70*time.Second).Fault("one", "a:m")
		if one.Superseded != tt.superseded || (!tt.superseded && one.Recovered) {
			t.Errorf("gap %v: superseded=%v recovered=%v, want superseded=%v", tt.gap, one.Superseded, one.Recovered, tt.superseded)
		}
	}
}

// feedScore scores in as the simulator does: each event handed to a feed
// as it is written, the rest of the input at the end.
func feedScore(in Input) *Result {
	f := NewFeed(Input{Start: in.Start, SLO: in.SLO, Primary: in.Primary, PrimaryTarget: in.PrimaryTarget, Prices: in.Prices}, 4)
	for _, e := range in.all() {
		f.Event(&e)
	}
	return f.Score(in)
}

// TestFeedReusedRequestID: a request id in flight twice: each id denotes
// its latest record, fed or read.
func TestFeedReusedRequestID(t *testing.T) {
	evs := []events.Event{
		{Time: at(0), Kind: events.RequestStart, RequestID: "r"},
		{Time: at(0), Kind: events.RequestStart, RequestID: "r"},
		{Time: at(0), Kind: events.AttemptStart, RequestID: "r", Target: "a:m"},
		{Time: at(time.Second), Kind: events.AttemptEnd, RequestID: "r", Target: "a:m", Class: "ok"},
		{Time: at(time.Second), Kind: events.RequestEnd, RequestID: "r", Outcome: events.OutcomeServed},
		{Time: at(2 * time.Second), Kind: events.FaultStart, Name: "f", Target: "a:m", Reason: "http_error"},
	}
	in := Input{Events: evs, Start: t0, End: at(10 * time.Second)}
	f := NewFeed(Input{Start: t0}, 4)
	for i := range evs {
		f.Event(&evs[i])
	}
	want, got := Score(in), f.Score(in)
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Result{})); d != "" {
		t.Errorf("fed scores differ (-Score +feed):\n%s", d)
	}
	if len(want.Faults) != 1 || !want.Faults[0].End.Equal(in.End) {
		t.Errorf("faults %+v, want one open until the end", want.Faults)
	}
}

// TestScoreCutShort: a fault the run ends with (a step lasting until the
// end, or a run aborted mid-step: no fault.end) has no time to recover in.
// It reads cut short, not superseded — there is no later step — and a ttr
// expectation is not judged on it.
func TestScoreCutShort(t *testing.T) {
	b := &logb{}
	b.fault("storm", "a:m", 20*time.Second, 0) // the run is cut at 40s
	b.traffic(0, 40*time.Second, func(d time.Duration) (string, []att) {
		if d >= 20*time.Second {
			return events.OutcomeServed, []att{fail("a:m"), ok("b:m")}
		}
		return events.OutcomeServed, []att{ok("a:m")}
	})
	res := b.score(40 * time.Second)
	f, ok := res.Fault("storm", "a:m")
	if !ok {
		t.Fatal("no score for storm")
	}
	if !f.CutShort || f.Superseded || f.Recovered || f.RecoveryMeasured() {
		t.Errorf("cut_short=%v superseded=%v recovered=%v measured=%v, want cut short only", f.CutShort, f.Superseded, f.Recovered, f.RecoveryMeasured())
	}
	limit := yamlfile.Duration(30 * time.Second)
	for _, v := range (&Expect{TTR: &DurationBound{Max: &limit}}).Judge(res) {
		if v.Name == "ttr" {
			t.Errorf("ttr judged on a step cut short: %+v", v)
		}
	}
}

// TestDetection: the four outcomes of detection are told apart, from the
// flags the scorer sets.
func TestDetection(t *testing.T) {
	for _, tc := range []struct {
		f    FaultScore
		want Detection
	}{
		{FaultScore{Detected: true, TTD: time.Second}, Detected},
		{FaultScore{}, NotDetected},
		{FaultScore{NotExercised: true}, NotExercised},
		{FaultScore{Masked: true, MaskedBy: "earlier"}, NotReDetected},
		{FaultScore{Masked: true, Detected: true}, Detected},
	} {
		if got := tc.f.Detection(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.f, got, tc.want)
		}
	}
}
