package policy

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/stretchr/testify/require"
)

// one sends one request at now on route chat and observes o for its first
// attempt. It returns the first decision.
func one(e *Engine, now time.Time, o Outcome) Decision {
	a := e.Begin(now, Request{Route: "chat"})
	d := a.Next(now)
	if d.Kind == Send {
		a.Observe(now, o)
	}
	return d
}

func breakerOf(e *Engine, key string) TargetState {
	for _, ts := range e.State().Targets {
		if ts.Key == key {
			return ts
		}
	}
	panic(key)
}

func transitions(log *events.Log) []string {
	var out []string
	for _, ev := range kinds(log.Events(), events.BreakerTransition) {
		out = append(out, ev.Time.Sub(t0).String()+" "+ev.From+">"+ev.To+" "+ev.Reason)
	}
	return out
}

func TestBreakerOpensOnErrorRate(t *testing.T) {
	const a = "a:m1"
	fail := Outcome{Class: ServerError, Status: 500}
	succ := Outcome{Class: OK, Status: 200}
	tests := []struct {
		name       string
		okN, failN int
		open       bool
	}{
		{"below min samples", 0, 19, false},
		{"min samples at 100%", 0, 20, true},
		{"24% of 100", 76, 24, false},
		{"25% of 100", 75, 25, true},
		{"not counted classes", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := oneRoute(tgt(a, attempts(1)))
			e := newEngine(t, cfg, nil)
			now := t0
			for range tt.okN {
				one(e, now, succ)
				now = now.Add(100 * time.Millisecond)
			}
			for range tt.failN {
				one(e, now, fail)
				now = now.Add(100 * time.Millisecond)
			}
			if tt.name == "not counted classes" {
				for _, c := range []Class{BadRequestParam, ContextLength, ContentFilter, ClientCanceled, Truncated, InvalidOutput} {
					for range 10 {
						one(e, now, Outcome{Class: c, Status: 400})
					}
				}
			}
			st := breakerOf(e, a)
			require.Equal(t, tt.open, st.Breaker == Open, "%+v", st)
		})
	}
}

func TestBreakerWindowRolls(t *testing.T) {
	e := newEngine(t, oneRoute(tgt("a:m1", attempts(1))), nil)
	now := t0
	for range 19 {
		one(e, now, Outcome{Class: ServerError, Status: 500})
	}
	now = now.Add(61 * time.Second) // the 19 failures age out
	one(e, now, Outcome{Class: ServerError, Status: 500})
	require.Equal(t, Closed, breakerOf(e, "a:m1").Breaker)
}

func TestBreakerLifecycle(t *testing.T) {
	const a, b = "a:m1", "b:m2"
	var log events.Log
	cfg := noHealth(oneRoute(tgt(a, attempts(1)), tgt(b, prio(1))))
	e := newEngine(t, cfg, &log)
	fail := Outcome{Class: Overloaded, Status: 503}
	for range 20 {
		one(e, t0, fail)
	}
	require.Equal(t, []string{"0s closed>open error_rate"}, transitions(&log))
	require.Equal(t, t0.Add(30*time.Second), e.NextTick())

	// Open: traffic moves to b, and a gets nothing.
	d := one(e, t0.Add(29*time.Second), Outcome{Class: OK})
	require.Equal(t, b, d.Target.Key())

	// Half-open: at most 5 trials in flight.
	now := t0.Add(30 * time.Second)
	e.Tick(now)
	require.Equal(t, HalfOpen, breakerOf(e, a).Breaker)
	var trials []*Attempt
	for range 7 {
		at := e.Begin(now, Request{Route: "chat"})
		d := at.Next(now)
		if d.Target.Key() == a {
			trials = append(trials, at)
		}
	}
	require.Len(t, trials, 5, "the half-open trickle is capped")

	// A client cancel gives its slot back without closing or reopening.
	trials[0].Observe(now, Outcome{Class: ClientCanceled})
	last := e.Begin(now, Request{Route: "chat"})
	require.Equal(t, a, last.Next(now).Target.Key())
	require.Equal(t, b, e.Begin(now, Request{Route: "chat"}).Next(now).Target.Key(), "the cap holds again")
	for _, at := range trials[1:] {
		at.Observe(now, Outcome{Class: OK})
	}
	st := breakerOf(e, a)
	require.Equal(t, HalfOpen, st.Breaker, "4 of 5 trials are not enough")
	require.Equal(t, 5, st.HalfOpenTrials)
	require.Equal(t, 4, st.HalfOpenSucceeded)

	// The last trial fails: open again, for twice as long.
	last.Observe(now.Add(time.Second), Outcome{Class: TimeoutTTFT})
	st = breakerOf(e, a)
	require.Equal(t, Open, st.Breaker)
	require.Equal(t, now.Add(61*time.Second), st.OpenUntil)
	require.Equal(t, []string{"0s closed>open error_rate", "30s open>half_open open_for_elapsed", "31s half_open>open trial_failed"}, transitions(&log))
}

func TestBreakerClosesAfterTrialsAndGrowsOnReopen(t *testing.T) {
	const a, b = "a:m1", "b:m2"
	var log events.Log
	e := newEngine(t, noHealth(oneRoute(tgt(a, attempts(1)), tgt(b, prio(1)))), &log)
	trip := func(now time.Time) {
		for range 20 {
			one(e, now, Outcome{Class: ServerError, Status: 500})
		}
	}
	trip(t0)
	// first half-open: a trial fails → open 60s
	now := t0.Add(30 * time.Second)
	one(e, now, Outcome{Class: ServerError, Status: 500})
	require.Equal(t, Open, breakerOf(e, a).Breaker)
	require.Equal(t, now.Add(60*time.Second), breakerOf(e, a).OpenUntil)
	// second half-open: a trial fails → open 120s
	now = now.Add(60 * time.Second)
	one(e, now, Outcome{Class: ServerError, Status: 500})
	require.Equal(t, now.Add(120*time.Second), breakerOf(e, a).OpenUntil)
	// third half-open: 5 successes close it
	now = now.Add(120 * time.Second)
	for range 5 {
		d := one(e, now, Outcome{Class: OK})
		require.Equal(t, a, d.Target.Key())
	}
	require.Equal(t, Closed, breakerOf(e, a).Breaker)
	// re-tripping soon after closing keeps growing: 240s
	now = now.Add(time.Minute)
	trip(now)
	require.Equal(t, now.Add(240*time.Second), breakerOf(e, a).OpenUntil)
	// cap at 5m
	for range 3 {
		now = breakerOf(e, a).OpenUntil
		one(e, now, Outcome{Class: ServerError, Status: 500})
	}
	require.Equal(t, now.Add(5*time.Minute), breakerOf(e, a).OpenUntil)
	// after reset_after closed, it starts from 30s again
	now = breakerOf(e, a).OpenUntil
	for range 5 {
		one(e, now, Outcome{Class: OK})
	}
	require.Equal(t, Closed, breakerOf(e, a).Breaker)
	now = now.Add(11 * time.Minute)
	trip(now)
	require.Equal(t, now.Add(30*time.Second), breakerOf(e, a).OpenUntil)
	tr := transitions(&log)
	require.Equal(t, "0s closed>open error_rate", tr[0])
	require.Equal(t, "30s open>half_open open_for_elapsed", tr[1])
	require.Equal(t, "30s half_open>open trial_failed", tr[2])
}

func TestBreakerDiscardsOldGeneration(t *testing.T) {
	const a = "a:m1"
	e := newEngine(t, oneRoute(tgt(a, attempts(1))), nil)
	// a long stream admitted while closed
	slow := e.Begin(t0, Request{Route: "chat"})
	require.Equal(t, a, slow.Next(t0).Target.Key())
	for range 20 {
		one(e, t0, Outcome{Class: ServerError, Status: 500})
	}
	now := t0.Add(30 * time.Second)
	e.Tick(now)
	require.Equal(t, HalfOpen, breakerOf(e, a).Breaker)
	before := breakerOf(e, a)
	// the old stream fails late: it must not reopen the half-open breaker
	slow.Observe(now, Outcome{Class: Stall})
	require.Equal(t, before, breakerOf(e, a))
}

func TestProbesAndSignals(t *testing.T) {
	const a = "a:m1"
	var log events.Log
	e := newEngine(t, oneRoute(tgt(a)), &log)
	require.NoError(t, e.ProbeResult(t0, a, false))
	require.NoError(t, e.ProbeResult(t0, a, false))
	require.NoError(t, e.ProbeResult(t0, a, true))
	require.NoError(t, e.ProbeResult(t0, a, false))
	require.NoError(t, e.ProbeResult(t0, a, false))
	require.Equal(t, Closed, breakerOf(e, a).Breaker, "a success resets the count")
	require.NoError(t, e.ProbeResult(t0, a, false))
	require.Equal(t, Open, breakerOf(e, a).Breaker)
	require.Equal(t, []string{"0s closed>open probe_failures"}, transitions(&log))

	require.ErrorIs(t, e.ProbeResult(t0, "x:y", false), ErrUnknownTarget)
	require.ErrorIs(t, e.Signal(t0, "x:y", "r", Demote), ErrUnknownTarget)
	require.Error(t, e.Signal(t0, a, "r", Action("explode")))

	require.NoError(t, e.Signal(t0, a, "refusal_rate", Demote))
	st := breakerOf(e, a)
	require.Equal(t, Unhealthy, st.Health)
	require.Equal(t, "refusal_rate", st.Reason)
	require.Equal(t, t0.Add(2*time.Minute), st.UnhealthyUntil)
}

func TestBudget(t *testing.T) {
	const a, b = "a:m1", "b:m2"
	for _, mode := range []string{OnExhaustedFailover, OnExhaustedFailFast} {
		t.Run(mode, func(t *testing.T) {
			cfg := noHealth(oneRoute(tgt(a), tgt(b, prio(1))))
			cfg.Policy.RetryBudget.OnExhausted = mode
			var log events.Log
			e := newEngine(t, cfg, &log)
			// 10 requests in the window: 10% is 1, the floor is 3.
			var trails [][]string
			for i := range 10 {
				_, trail, _ := drive(e, t0.Add(time.Duration(i)*time.Millisecond), Request{ID: itoa(i + 1)}, byTarget(map[string]Outcome{a: {Class: ServerError, Status: 500}}))
				trails = append(trails, keys(trail))
			}
			for i, tr := range trails {
				switch {
				case i < 3:
					require.Equal(t, []string{a, "wait", a, b, "done"}, tr, "request %d retries (floor)", i)
				case mode == OnExhaustedFailover:
					require.Equal(t, []string{a, b, "done"}, tr, "request %d fails over without retrying", i)
				default:
					require.Equal(t, []string{a, "fail"}, tr, "request %d fails fast", i)
				}
			}
			ex := kinds(log.Events(), events.BudgetExhausted)
			require.Len(t, ex, 7)
			require.Equal(t, "4", ex[0].RequestID)
			require.Equal(t, a, ex[0].Target)
			rs := e.State().Routes[0]
			require.Equal(t, RouteState{Name: "chat", Requests: 10, Retries: 3, Allowed: 3}, rs)
		})
	}
	t.Run("ratio above the floor", func(t *testing.T) {
		e := newEngine(t, noHealth(oneRoute(tgt(a), tgt(b, prio(1)))), nil)
		now := t0
		for range 100 {
			one(e, now, Outcome{Class: OK})
		}
		retries := 0
		for range 20 {
			_, trail, _ := drive(e, now, Request{}, byTarget(map[string]Outcome{a: {Class: ServerError, Status: 500}}))
			if keys(trail)[1] == "wait" {
				retries++
			}
		}
		require.Equal(t, 12, retries, "10%% of 120 requests")
	})
}

func TestPassiveHealth(t *testing.T) {
	const a, b = "a:m1", "b:m2"
	var log events.Log
	cfg := oneRoute(tgt(a, attempts(1)), tgt(b, prio(1)))
	e := newEngine(t, cfg, &log)
	fail := Outcome{Class: Stall}
	one(e, t0, fail)
	require.Equal(t, Healthy, breakerOf(e, a).Health, "one failure is not enough")
	one(e, t0.Add(90*time.Second), fail)
	require.Equal(t, Unhealthy, breakerOf(e, a).Health)
	require.Equal(t, t0.Add(2*time.Minute), breakerOf(e, a).UnhealthyUntil, "until the older failure ages out")

	// end of the line: b first, a used when b fails
	now := t0.Add(100 * time.Second)
	require.Equal(t, b, one(e, now, Outcome{Class: OK}).Target.Key())
	_, trail, _ := drive(e, now, Request{}, byTarget(map[string]Outcome{b: {Class: Auth, Status: 401}}))
	require.Equal(t, []string{b, a, "done"}, keys(trail))

	// recovers on its own; the ramp admits a growing share
	require.Equal(t, t0.Add(2*time.Minute), e.NextTick())
	e.Tick(t0.Add(2 * time.Minute))
	require.Equal(t, Recovering, breakerOf(e, a).Health)
	share := func(at time.Time) float64 {
		n := 0
		for range 400 {
			if e.Begin(at, Request{Route: "chat"}).Next(at).Target.Key() == a {
				n++
			}
		}
		return float64(n) / 400
	}
	require.InDelta(t, 0.25, share(t0.Add(2*time.Minute+30*time.Second)), 0.07)
	require.InDelta(t, 0.75, share(t0.Add(2*time.Minute+90*time.Second)), 0.07)
	e.Tick(t0.Add(4 * time.Minute))
	require.Equal(t, Healthy, breakerOf(e, a).Health)
	require.Equal(t, 1.0, share(t0.Add(4*time.Minute)))
	var hc []string
	for _, ev := range kinds(log.Events(), events.HealthChange) {
		hc = append(hc, ev.Time.Sub(t0).String()+" "+ev.From+">"+ev.To+" "+ev.Reason)
	}
	require.Equal(t, []string{"1m30s healthy>unhealthy failures", "2m0s unhealthy>recovering recovered", "4m0s recovering>healthy cooldown_elapsed"}, hc)
}

func TestSLA(t *testing.T) {
	const a, b = "a:m1", "b:m2"
	sla := func(t *Target) { t.SLA = SLA{FirstToken: dur("2s"), TimePerOutputToken: dur("50ms"), MinSamples: 3} }
	tests := []struct {
		name   string
		o      Outcome
		dur    time.Duration
		reason string
	}{
		{"within", Outcome{Class: OK, TTFT: time.Second, OutputTokens: 101}, 5 * time.Second, ""},
		{"ttft", Outcome{Class: OK, TTFT: 3 * time.Second, OutputTokens: 101}, 5 * time.Second, "sla_first_token"},
		{"tpot", Outcome{Class: OK, TTFT: time.Second, OutputTokens: 101}, 7 * time.Second, "sla_time_per_output_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, oneRoute(tgt(a, sla), tgt(b, prio(1))), nil)
			for i := range 3 {
				now := t0.Add(time.Duration(i) * time.Second)
				at := e.Begin(now, Request{Route: "chat"})
				at.Next(now)
				at.Observe(now.Add(tt.dur), tt.o)
			}
			st := breakerOf(e, a)
			if tt.reason == "" {
				require.Equal(t, Healthy, st.Health)
				return
			}
			require.Equal(t, Unhealthy, st.Health)
			require.Equal(t, tt.reason, st.Reason)
			require.Equal(t, Closed, st.Breaker, "an SLA breach demotes; it does not open the breaker")
		})
	}
}

func TestBreakerLostTrial(t *testing.T) {
	const a, b = "a:m1", "b:m2"
	var log events.Log
	cfg := oneRoute(tgt(a), tgt(b, prio(1)))
	cfg.Policy.Breaker.HalfOpenRequests = 1
	cfg.Policy.Breaker.TrialTimeout = dur("1m")
	e := newEngine(t, cfg, &log)
	require.NoError(t, e.Signal(t0, a, "manual", Trip))
	now := t0.Add(30 * time.Second)
	lost := e.Begin(now, Request{Route: "chat"})
	require.Equal(t, a, lost.Next(now).Target.Key(), "the one trial")
	require.Equal(t, b, e.Begin(now, Request{Route: "chat"}).Next(now).Target.Key())
	require.Equal(t, now.Add(time.Minute), e.NextTick(), "the trial's timeout is scheduled")
	e.Tick(now.Add(time.Minute))
	require.Equal(t, Open, breakerOf(e, a).Breaker)
	// the lost trial reports at last: an old generation, ignored
	lost.Observe(now.Add(time.Minute+time.Second), Outcome{Class: OK})
	require.Equal(t, Open, breakerOf(e, a).Breaker)
	require.Equal(t, []string{"0s closed>open manual", "30s open>half_open open_for_elapsed", "1m30s half_open>open trial_timeout"}, transitions(&log))
}

// Time given by concurrent callers may go backwards a little; samples land
// in the newest bucket and nothing is lost or double counted.
func TestTimeGoesBackwards(t *testing.T) {
	e := newEngine(t, noHealth(oneRoute(tgt("a:m1", attempts(1)))), nil)
	now := t0.Add(time.Minute)
	for i := range 20 {
		at := now.Add(-time.Duration(i%5) * time.Second) // jitter backwards
		one(e, at, Outcome{Class: ServerError, Status: 500})
		if i < 19 {
			require.Equal(t, Closed, breakerOf(e, "a:m1").Breaker, "sample %d", i)
		}
	}
	st := breakerOf(e, "a:m1")
	require.Equal(t, Open, st.Breaker)
	require.Equal(t, 20, st.Samples)
	e.Tick(t0) // a tick from the past changes nothing
	require.Equal(t, st, breakerOf(e, "a:m1"))
}
