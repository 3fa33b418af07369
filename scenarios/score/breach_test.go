package score

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TestScoreRelapses: a 100s fault on a:m (20s–120s). Health demotes it at
// 22s and traffic moves to b:m; at 50s health lets users back onto the
// still-sick primary, whose answers fail until it is demoted again at 60s.
// TTM alone (to the last breach) reads like one slow mitigation; the first
// mitigation, the breach time, one relapse and one return tell what
// happened.
func TestScoreRelapses(t *testing.T) {
	b := &logb{}
	b.fault("f", "a:m", 20*time.Second, 120*time.Second)
	health := func(d time.Duration, from, to string) {
		b.ev(d, events.Event{Kind: events.HealthChange, Target: "a:m", From: from, To: to, Reason: "failures"})
	}
	health(22*time.Second, "healthy", "unhealthy")
	health(50*time.Second, "unhealthy", "healthy")
	health(60*time.Second, "healthy", "unhealthy")
	b.traffic(0, 140*time.Second, func(d time.Duration) (string, []att) {
		switch {
		case d >= 20*time.Second && d < 22*time.Second, d >= 50*time.Second && d < 60*time.Second:
			return events.OutcomeFailed, []att{fail("a:m")}
		case d >= 22*time.Second && d < 120*time.Second:
			return events.OutcomeServed, []att{ok("b:m")}
		}
		return events.OutcomeServed, []att{ok("a:m")}
	})
	res := b.score(140 * time.Second)
	f, _ := res.Fault("f", "a:m")
	if !f.Impact || !f.Mitigated || !f.FirstMitigated {
		t.Fatalf("impact=%v mitigated=%v first mitigated=%v", f.Impact, f.Mitigated, f.FirstMitigated)
	}
	// The 10s SLI window holds failures until 10s after the last one.
	if f.FirstMitigation != 12*time.Second || f.TTM != 50*time.Second {
		t.Errorf("first mitigation %v, ttm %v; want 12s and 50s", f.FirstMitigation, f.TTM)
	}
	if f.Breaches != 2 || f.Relapses != 1 {
		t.Errorf("breaches %d relapses %d, want 2 and 1", f.Breaches, f.Relapses)
	}
	if f.BreachTime < 25*time.Second || f.BreachTime > 35*time.Second {
		t.Errorf("breach time %v, want about 12s + 20s", f.BreachTime)
	}
	if f.Returns != 1 {
		t.Errorf("returns %d, want 1 (health let traffic back at 50s)", f.Returns)
	}
	if res.Overall.BreachTime != f.BreachTime {
		t.Errorf("run breach time %v, the fault's %v: no breach outside it", res.Overall.BreachTime, f.BreachTime)
	}
	zero, one := 0.0, 1.0
	vs := (&Expect{Steps: map[string]StepExpect{"f": {StepBounds: StepBounds{
		Relapses:        &NumberBound{Max: &zero},
		FirstMitigation: &DurationBound{Max: durp(15 * time.Second)},
	}}}, FalseAlarms: &NumberBound{Max: &one}}).Judge(res)
	got := map[string]bool{}
	for _, v := range vs {
		got[v.Name] = v.Pass
	}
	if got["relapses"] || !got["first_mitigation"] || !got["false_alarms"] {
		t.Errorf("verdicts %+v: want relapses failed, first_mitigation and false_alarms passed", vs)
	}
}

// TestScoreFalseAlarms: a token_wall detector firing on a healthy primary
// 100s before its fault, a demotion it causes, and a page in the baseline
// are false alarms; the same during the fault, and within one SLO window
// after it, are not.
func TestScoreFalseAlarms(t *testing.T) {
	b := &logb{}
	b.fault("f", "a:m", 120*time.Second, 180*time.Second)
	b.ev(20*time.Second, events.Event{Kind: events.DetectorSignal, Target: "a:m", Name: "token_wall"})
	b.ev(20*time.Second, events.Event{Kind: events.HealthChange, Target: "a:m", From: "healthy", To: "unhealthy", Reason: "token_wall"})
	b.ev(21*time.Second, events.Event{Kind: events.AlertFired, Name: "BrownoutTargetDown", Severity: "page"})
	b.ev(125*time.Second, events.Event{Kind: events.DetectorSignal, Target: "a:m", Name: "token_wall"})
	b.ev(126*time.Second, events.Event{Kind: events.AlertFired, Name: "BrownoutTargetDown", Severity: "page"})
	b.ev(185*time.Second, events.Event{Kind: events.BreakerTransition, Target: "a:m", From: "closed", To: "open"})
	b.ev(185*time.Second, events.Event{Kind: events.BreakerTransition, Target: "b:m", From: "closed", To: "open", Reason: "error_rate"})
	b.traffic(0, 200*time.Second, func(time.Duration) (string, []att) { return events.OutcomeServed, []att{ok("a:m")} })
	res := b.score(200 * time.Second)
	var got []string
	for _, a := range res.Overall.FalseAlarms {
		got = append(got, a.Time.Sub(t0).String()+" "+a.Target+" "+a.Source)
	}
	want := []string{"20s a:m detector:token_wall", "20s a:m health", "21s  alert:BrownoutTargetDown", "3m5s b:m breaker"}
	if len(got) != len(want) {
		t.Fatalf("false alarms %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("false alarm %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func durp(d time.Duration) *yamlfile.Duration { v := yamlfile.Duration(d); return &v }

// TestScoreWrongAnswers: a bake-off contestant that drops response_format
// on its fallback answers structured requests in prose. No mock corrupted
// anything, but the client's checks failed: each is a wrong answer served
// as success (bad served), and not a good request when correctness is part
// of the SLO. A failed request's record is not a wrong answer.
func TestScoreWrongAnswers(t *testing.T) {
	b := &logb{}
	b.fault("f", "a:m", 10*time.Second, 20*time.Second)
	var evs []EvalRecord
	b.traffic(0, 30*time.Second, func(d time.Duration) (string, []att) {
		if d >= 10*time.Second && d < 20*time.Second {
			return events.OutcomeServed, []att{fail("a:m"), ok("b:m")}
		}
		return events.OutcomeServed, []att{ok("a:m")}
	})
	b.req(29*time.Second, events.OutcomeFailed, fail("a:m"))
	for _, e := range b.evs {
		if e.Kind != events.RequestEnd {
			continue
		}
		evs = append(evs, EvalRecord{Time: e.Time, RequestID: e.RequestID, Target: e.Target,
			Pass: e.Target != "b:m" && e.Outcome != events.OutcomeFailed})
	}
	in := Input{Events: b.evs, Evals: evs, Start: t0, End: at(30 * time.Second),
		SLO: SLO{SuccessRate: 0.99, Correctness: true, Window: 10 * time.Second}, PrimaryTarget: "a:m"}
	res := Score(in)
	if got := res.Overall.BadServed; got != 100 {
		t.Errorf("bad served %d, want the fallback's 100 prose answers", got)
	}
	f, _ := res.Fault("f", "a:m")
	if f.BadServed != 100 || f.Availability.GoodRate != 0 {
		t.Errorf("during the fault: bad served %d, good %v; want 100 and 0", f.BadServed, f.Availability.GoodRate)
	}
	if want := 200.0 / 301; res.Overall.Availability.GoodRate > want+1e-9 {
		t.Errorf("good rate %v, want at most %v", res.Overall.Availability.GoodRate, want)
	}
	if d := cmp.Diff(res, feedScore(in), cmpopts.IgnoreUnexported(Result{})); d != "" {
		t.Errorf("fed scores differ:\n%s", d)
	}
}

// TestScoreBlackBoxShiftBeforeFault: a black box's first-token limit
// demoted a healthy primary in the baseline (traffic left a:m at 30s, 30s
// before the fault); a traffic shift that predates the fault is not its
// detection (it read "detected by traffic_shift after 100ms"): the step
// is masked and not re-detected.
func TestScoreBlackBoxShiftBeforeFault(t *testing.T) {
	b := &logb{}
	b.fault("f", "a:m", 60*time.Second, 90*time.Second)
	b.blackBox(100*time.Second, 30*time.Second, 90*time.Second)
	res := b.score(100 * time.Second)
	if !res.BlackBox {
		t.Fatal("want black-box scoring")
	}
	f, _ := res.Fault("f", "a:m")
	if f.Detected || !f.Masked {
		t.Errorf("detected=%v by %q after %v, masked=%v; want not detected, masked", f.Detected, f.DetectedBy, f.TTD, f.Masked)
	}
}

// TestFleetSpuriousDegradedAndUnmeasuredTrials: a replica falling back to
// local state during a store step counts as the outage's; one with the
// store up is spurious (load, a tight timeout). A bound on trials per
// recovery fails as not measured when no outage ended in the run (it
// passed with 0 trials measured).
func TestFleetSpuriousDegradedAndUnmeasuredTrials(t *testing.T) {
	b := &logb{}
	b.ev(15*time.Second, events.Event{Kind: events.StateDegraded, Replica: 1, Reason: "store unavailable"})
	b.ev(30*time.Second, events.Event{Kind: events.StateDegraded, Replica: 2, Reason: "store timeout"})
	b.ev(31*time.Second, events.Event{Kind: events.StateDegraded, Replica: 2, OK: true})
	in := Input{Events: b.evs, Start: t0, End: at(60 * time.Second)}
	fs := Fleet(&in, 2, "redis", []Window{{Start: at(10 * time.Second), End: at(20 * time.Second)}})
	if fs.Degraded != 2 || fs.SpuriousDegraded != 1 || fs.Resynced != 1 {
		t.Errorf("degraded %d, spurious %d, resynced %d; want 2, 1, 1", fs.Degraded, fs.SpuriousDegraded, fs.Resynced)
	}
	two := 2.0
	vs := (&Expect{Fleet: &FleetExpect{TrialsPerRecovery: &NumberBound{Max: &two}}}).Judge(&Result{Fleet: fs})
	if len(vs) != 1 || vs[0].Pass || vs[0].Got != "not measured: no outage ended in the run" {
		t.Errorf("verdicts %+v, want trials_per_recovery failed as not measured", vs)
	}
}

// TestScoreFalseAlarmsEcho: a detection after its fault ended is still the
// fault's while attempts started during the fault are ending (a long
// truncated stream ends seconds after the fault) and one SLO window after
// the last of them; later, it is a false alarm.
func TestScoreFalseAlarmsEcho(t *testing.T) {
	b := &logb{}
	b.fault("f", "a:m", 60*time.Second, 120*time.Second)
	b.traffic(0, 119*time.Second, func(time.Duration) (string, []att) { return events.OutcomeServed, []att{ok("a:m")} })
	// Started during the fault, ends at 150s.
	b.req(119*time.Second, events.OutcomeServed, att{target: "a:m", class: "ok", dur: 31 * time.Second})
	b.traffic(150*time.Second, 200*time.Second, func(time.Duration) (string, []att) { return events.OutcomeServed, []att{ok("a:m")} })
	b.ev(135*time.Second, events.Event{Kind: events.DetectorSignal, Target: "a:m", Name: "token_wall"}) // the long stream still running
	b.ev(158*time.Second, events.Event{Kind: events.DetectorSignal, Target: "a:m", Name: "token_wall"}) // within a window of its end
	b.ev(170*time.Second, events.Event{Kind: events.DetectorSignal, Target: "a:m", Name: "finish_length"})
	res := b.score(200 * time.Second)
	var got []string
	for _, a := range res.Overall.FalseAlarms {
		got = append(got, a.Time.Sub(t0).String()+" "+a.Source)
	}
	if want := []string{"2m50s detector:finish_length"}; !slices.Equal(got, want) {
		t.Errorf("false alarms %q, want %q", got, want)
	}
}

// TestScoreBreachByPart: the good-request SLI breaks when any part of the
// SLO does; BreachByPart says which. Slow answers (10s-20s, 2s against a
// 1s bound) break the latency part only; wrong answers served with a 200
// (40s-50s) break correctness only; a 503 spell (70s-75s) breaks success,
// and with it every part that counts successes. Over the whole run and
// per fault.
func TestScoreBreachByPart(t *testing.T) {
	b := &logb{}
	b.fault("slow", "a:m", 10*time.Second, 20*time.Second)
	b.fault("wrong", "a:m", 40*time.Second, 50*time.Second)
	b.fault("down", "a:m", 70*time.Second, 75*time.Second)
	b.traffic(0, 90*time.Second, func(d time.Duration) (string, []att) {
		switch {
		case d >= 10*time.Second && d < 20*time.Second:
			return events.OutcomeServed, []att{{target: "a:m", class: "ok", dur: 2 * time.Second}}
		case d >= 70*time.Second && d < 75*time.Second:
			return events.OutcomeFailed, []att{fail("a:m")}
		}
		return events.OutcomeServed, []att{ok("a:m")}
	})
	var evs []EvalRecord
	for _, e := range b.evs {
		if e.Kind == events.RequestEnd && e.Outcome != events.OutcomeFailed {
			wrong := e.Time.After(at(40*time.Second)) && !e.Time.After(at(50*time.Second))
			evs = append(evs, EvalRecord{Time: e.Time, RequestID: e.RequestID, Target: e.Target, Pass: !wrong})
		}
	}
	res := Score(Input{Events: b.evs, Evals: evs, Start: t0, End: at(90 * time.Second),
		SLO: SLO{SuccessRate: 0.99, Correctness: true, Latency: LatencyObjective{Max: time.Second}, Window: 10 * time.Second}, PrimaryTarget: "a:m"})
	parts := res.Overall.BreachByPart
	if len(parts) != 3 {
		t.Fatalf("parts %v: want success, correctness and latency (no p95 declared)", parts)
	}
	// Each spell breaks its part while the 10s window holds one of its
	// requests: from its first bad end to 10s after its last.
	if parts[PartSuccess] < 10*time.Second || parts[PartSuccess] > 16*time.Second {
		t.Errorf("success broken %v, want about the 503 spell plus a window", parts[PartSuccess])
	}
	if parts[PartCorrectness] < 20*time.Second || parts[PartCorrectness] > parts[PartSuccess]+22*time.Second {
		t.Errorf("correctness broken %v: the wrong answers and the 503s", parts[PartCorrectness])
	}
	if parts[PartLatency] < 20*time.Second || parts[PartLatency] > parts[PartSuccess]+22*time.Second {
		t.Errorf("latency broken %v: the slow answers and the 503s", parts[PartLatency])
	}
	slow, _ := res.Fault("slow", "a:m")
	if slow.BreachByPart[PartSuccess] != 0 || slow.BreachByPart[PartCorrectness] != 0 || slow.BreachByPart[PartLatency] == 0 {
		t.Errorf("slow step: %v, want latency only", slow.BreachByPart)
	}
	wrong, _ := res.Fault("wrong", "a:m")
	if wrong.BreachByPart[PartSuccess] != 0 || wrong.BreachByPart[PartLatency] != 0 || wrong.BreachByPart[PartCorrectness] == 0 {
		t.Errorf("wrong step: %v, want correctness only", wrong.BreachByPart)
	}
}

// TestFleetRecoveryThroughHealth: a fleet that demotes by health recovers
// through health. After the outage both replicas' breakers are closed (they
// never opened), but the target is back only when every replica's health
// took it back in full: replica 2 recovers at 50s, the first recovery is
// healthy then; a second outage whose run ends with replica 1 still
// ramping is closed but not healthy.
func TestFleetRecoveryThroughHealth(t *testing.T) {
	b := &logb{}
	health := func(d time.Duration, replica int, from, to string) {
		b.ev(d, events.Event{Kind: events.HealthChange, Replica: replica, Target: "a:m", From: from, To: to})
	}
	// In time order, as a log is.
	b.fault("down", "a:m", 10*time.Second, 0)
	health(12*time.Second, 1, "healthy", "unhealthy")
	health(13*time.Second, 2, "healthy", "unhealthy")
	b.ev(20*time.Second, events.Event{Kind: events.FaultEnd, Name: "down", Target: "a:m"})
	health(30*time.Second, 1, "unhealthy", "recovering")
	health(35*time.Second, 2, "unhealthy", "recovering")
	health(40*time.Second, 1, "recovering", "healthy")
	health(50*time.Second, 2, "recovering", "healthy")
	b.fault("down-again", "a:m", 60*time.Second, 0)
	health(61*time.Second, 1, "healthy", "unhealthy")
	b.ev(70*time.Second, events.Event{Kind: events.FaultEnd, Name: "down-again", Target: "a:m"})
	health(80*time.Second, 1, "unhealthy", "recovering")
	in := Input{Events: b.evs, Start: t0, End: at(90 * time.Second), Primary: map[string]string{"chat": "a:m"}}
	fs := Fleet(&in, 2, "redis", nil)
	if len(fs.Recoveries) != 2 {
		t.Fatalf("recoveries %+v, want two", fs.Recoveries)
	}
	if r := fs.Recoveries[0]; !r.Closed || !r.Healthy {
		t.Errorf("first recovery %+v: want closed and healthy", r)
	}
	if r := fs.Recoveries[1]; !r.Closed || r.Healthy {
		t.Errorf("second recovery %+v: want closed, not healthy (replica 1 still ramping)", r)
	}
}
