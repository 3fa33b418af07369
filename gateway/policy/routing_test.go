package policy

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/llm"
	"github.com/stretchr/testify/require"
)

func TestRoutingOrder(t *testing.T) {
	noStream := caps(Capabilities{Tools: true, StructuredOutput: true})
	noTools := caps(Capabilities{Streaming: true, StructuredOutput: true})
	tests := []struct {
		name  string
		route Route
		req   Request
		first string
		// share of first-choice traffic per key over 2000 requests (±0.05)
		shares map[string]float64
	}{
		{name: "priority 0 first", route: Route{Targets: []Target{tgt("b:m2", prio(1)), tgt("a:m1")}}, first: "a:m1"},
		{name: "weights split a priority", route: Route{Targets: []Target{tgt("a:m1", weight(3)), tgt("b:m2", weight(1)), tgt("c:m3", prio(1))}},
			shares: map[string]float64{"a:m1": 0.75, "b:m2": 0.25}},
		{name: "zero weight means 1", route: Route{Targets: []Target{tgt("a:m1"), tgt("b:m2")}},
			shares: map[string]float64{"a:m1": 0.5, "b:m2": 0.5}},
		{name: "tiers before priority", route: Route{Tiers: []string{"primary", "smaller"}, Targets: []Target{tgt("s:small", tier("smaller")), tgt("a:m1", prio(5))}}, first: "a:m1"},
		{name: "streaming capability", route: Route{Targets: []Target{tgt("a:m1", noStream), tgt("b:m2", prio(1))}}, req: Request{Stream: true}, first: "b:m2"},
		{name: "tools capability", route: Route{Targets: []Target{tgt("a:m1", noTools), tgt("b:m2", prio(1))}}, req: Request{Tools: true}, first: "b:m2"},
		{name: "structured capability", route: Route{Targets: []Target{tgt("a:m1", caps(Capabilities{Streaming: true})), tgt("b:m2", prio(1))}}, req: Request{Structured: true}, first: "b:m2"},
		{name: "route-level structured", route: Route{Structured: true, Targets: []Target{tgt("a:m1", caps(Capabilities{Streaming: true})), tgt("b:m2", prio(1))}}, first: "b:m2"},
		{name: "no capabilities declared means all but prefill", route: Route{Targets: []Target{tgt("a:m1")}}, req: Request{Stream: true, Tools: true, Structured: true}, first: "a:m1"},
		{name: "hint ignored by default", route: Route{Targets: []Target{tgt("a:m1"), tgt("b:m2", prio(1))}}, req: Request{Hint: "b:m2"}, first: "a:m1"},
		{name: "hint honoured when allowed", route: Route{AllowHints: true, Targets: []Target{tgt("a:m1"), tgt("b:m2", prio(1))}}, req: Request{Hint: "b:m2"}, first: "b:m2"},
		{name: "hint by model name", route: Route{AllowHints: true, Targets: []Target{tgt("a:m1"), tgt("b:m2", prio(1))}}, req: Request{Hint: "m2"}, first: "b:m2"},
		{name: "hint cannot bypass capabilities", route: Route{AllowHints: true, Targets: []Target{tgt("a:m1"), tgt("b:m2", prio(1), noStream)}}, req: Request{Hint: "b:m2", Stream: true}, first: "a:m1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.route.Name = "chat"
			e := newEngine(t, Config{Routes: []Route{tt.route}}, nil)
			tt.req.Route = "chat"
			if tt.first != "" {
				d := e.Begin(t0, tt.req).Next(t0)
				require.Equal(t, Send, d.Kind)
				require.Equal(t, tt.first, d.Target.Key())
			}
			if tt.shares != nil {
				const n = 2000
				count := map[string]int{}
				for range n {
					a := e.Begin(t0, tt.req)
					d := a.Next(t0)
					count[d.Target.Key()]++
					a.Observe(t0, Outcome{Class: OK})
				}
				for k, want := range tt.shares {
					require.InDelta(t, want, float64(count[k])/n, 0.05, "share of %s: %v", k, count)
				}
			}
		})
	}
}

func TestNoEligibleTargetIsAnHonestError(t *testing.T) {
	e := newEngine(t, oneRoute(tgt("a:m1", caps(Capabilities{Tools: true}))), nil)
	a := e.Begin(t0, Request{Route: "chat", Stream: true})
	d := a.Next(t0)
	require.Equal(t, Fail, d.Kind)
	require.Equal(t, 503, d.Err.Status)
	require.Equal(t, 5*time.Second, d.Err.RetryAfter)
}

func TestUnknownRoute(t *testing.T) {
	var log events.Log
	e := newEngine(t, oneRoute(tgt("a:m1")), &log)
	d := e.Begin(t0, Request{ID: "r", Route: "nope"}).Next(t0)
	require.Equal(t, Fail, d.Kind)
	require.Equal(t, 404, d.Err.Status)
	require.Equal(t, []events.Kind{events.RequestStart, events.RequestEnd}, []events.Kind{log.Events()[0].Kind, log.Events()[1].Kind})
}

func TestSendDecision(t *testing.T) {
	tg := tgt("a:m1", func(t *Target) {
		t.OverrideParams = map[string]any{"max_tokens": 512}
		t.DropParams = []string{"logprobs"}
		t.Timeouts = Timeouts{Connect: dur("2s"), FirstToken: dur("10s"), Total: dur("60s")}
	})
	cfg := oneRoute(tg)
	cfg.Policy.RequestTimeout = dur("30s")
	e := newEngine(t, cfg, nil)
	d := e.Begin(t0, Request{Route: "chat"}).Next(t0)
	require.Equal(t, Send, d.Kind)
	require.Equal(t, 1, d.Try)
	require.Equal(t, 512, d.Target.OverrideParams["max_tokens"])
	require.Equal(t, []string{"logprobs"}, d.Target.DropParams)
	require.Equal(t, Deadlines{Connect: t0.Add(2 * time.Second), FirstToken: t0.Add(10 * time.Second), Total: t0.Add(30 * time.Second)}, d.Deadlines,
		"total is capped by the request timeout")
	require.Equal(t, dur("30s"), d.Timeouts.Idle, "defaults are resolved")
	require.Equal(t, "primary", d.Tier)
}

func TestRetry(t *testing.T) {
	const a, b = "a:m1", "b:m2"
	t.Run("full jitter backoff grows and is capped", func(t *testing.T) {
		base, capd := 100*time.Millisecond, 800*time.Millisecond
		for n, bound := range []time.Duration{100, 200, 400, 800, 800, 800} {
			bound *= time.Millisecond
			require.Equal(t, time.Duration(0), Backoff(n, base, capd, 0))
			require.Equal(t, bound/2, Backoff(n, base, capd, 0.5))
			require.Less(t, Backoff(n, base, capd, 0.999999), bound)
		}
	})
	t.Run("waits are drawn within the backoff bound", func(t *testing.T) {
		cfg := oneRoute(tgt(a, attempts(3), func(t *Target) { t.Retry.Base = dur("1s"); t.Retry.Cap = dur("1500ms") }))
		cfg.Policy.MaxAttempts = 3
		e := newEngine(t, cfg, nil)
		_, trail, _ := drive(e, t0, Request{}, always(ServerError, 500))
		require.Equal(t, []string{a, "wait", a, "wait", a, "fail"}, keys(trail))
		first := trail[1].Until.Sub(t0.Add(10 * time.Millisecond))
		require.GreaterOrEqual(t, first, time.Duration(0))
		require.Less(t, first, time.Second)
	})
	t.Run("Retry-After is honoured", func(t *testing.T) {
		e := newEngine(t, oneRoute(tgt(a), tgt(b, prio(1))), nil)
		_, trail, _ := drive(e, t0, Request{}, byTarget(map[string]Outcome{a: {Class: RateLimited, Status: 429, RetryAfter: 3 * time.Second}}))
		require.Equal(t, []string{a, "wait", a, b, "done"}, keys(trail))
		require.Equal(t, t0.Add(10*time.Millisecond+3*time.Second), trail[1].Until)
	})
	t.Run("Retry-After beyond its cap fails over at once", func(t *testing.T) {
		e := newEngine(t, oneRoute(tgt(a), tgt(b, prio(1))), nil)
		_, trail, _ := drive(e, t0, Request{}, byTarget(map[string]Outcome{a: {Class: RateLimited, Status: 429, RetryAfter: 60 * time.Second}}))
		require.Equal(t, []string{a, b, "done"}, keys(trail))
	})
	t.Run("custom status lists", func(t *testing.T) {
		e := newEngine(t, oneRoute(tgt(a, func(t *Target) { t.Retry.OnStatusCodes = []int{500}; t.FallbackStatusCodes = []int{500} }), tgt(b, prio(1))), nil)
		final, trail, _ := drive(e, t0, Request{}, byTarget(map[string]Outcome{a: {Class: RateLimited, Status: 429}}))
		require.Equal(t, []string{a, "fail"}, keys(trail))
		require.Equal(t, 429, final.Err.Status, "the provider's error when it may not fail over")
	})
	t.Run("request timeout stops retries", func(t *testing.T) {
		cfg := oneRoute(tgt(a, attempts(3)))
		cfg.Policy.RequestTimeout = dur("2s")
		e := newEngine(t, cfg, nil)
		_, trail, _ := drive(e, t0, Request{}, func(Decision) Outcome { return Outcome{Class: RateLimited, Status: 429, RetryAfter: 3 * time.Second} })
		require.Equal(t, []string{a, "fail"}, keys(trail))
	})
	t.Run("the attempt cap bounds retries and fail-overs", func(t *testing.T) {
		e := newEngine(t, oneRoute(tgt(a, attempts(5)), tgt(b, prio(1))), nil)
		final, trail, _ := drive(e, t0, Request{}, always(ServerError, 500))
		require.Equal(t, []string{a, "wait", a, "wait", a, "fail"}, keys(trail))
		require.Equal(t, 503, final.Err.Status)
		require.Contains(t, final.Err.Message, "attempt cap")
	})
	t.Run("non-retryable is never replayed once bytes were sent", func(t *testing.T) {
		e := newEngine(t, oneRoute(tgt(a), tgt(b, prio(1))), nil)
		_, trail, _ := drive(e, t0, Request{NonRetryable: true}, byTarget(map[string]Outcome{a: {Class: Reset, BytesSent: true}}))
		require.Equal(t, []string{a, "fail"}, keys(trail))
		_, trail, _ = drive(e, t0, Request{NonRetryable: true}, byTarget(map[string]Outcome{a: {Class: ConnectError}}))
		require.Equal(t, []string{a, "wait", a, b, "done"}, keys(trail), "nothing was sent: retrying is safe")
	})
}

func TestMidStreamFailover(t *testing.T) {
	const a, b, c = "a:m1", "b:m2", "c:m3"
	pre := caps(Capabilities{Streaming: true, Prefill: true})
	t.Run("continues on a prefill-capable target", func(t *testing.T) {
		e := newEngine(t, oneRoute(tgt(a), tgt(b, prio(1)), tgt(c, prio(2), pre)), nil)
		_, trail, _ := drive(e, t0, Request{Stream: true}, byTarget(map[string]Outcome{a: {Class: CutMidStream, Partial: true, BytesSent: true}}))
		require.Equal(t, []string{a, c, "done"}, keys(trail))
		require.False(t, trail[0].Prefill)
		require.True(t, trail[1].Prefill)
	})
	t.Run("no prefill-capable target: an error, never a clean end", func(t *testing.T) {
		e := newEngine(t, Config{Routes: []Route{{Name: "chat", Tiers: []string{"primary", TierCached}, Targets: []Target{tgt(a), tgt(b, prio(1))}}}}, nil)
		final, trail, _ := drive(e, t0, Request{Stream: true}, byTarget(map[string]Outcome{a: {Class: Stall, Partial: true}}))
		require.Equal(t, []string{a, "fail"}, keys(trail), "the cached tier cannot continue a partial answer either")
		require.Equal(t, 503, final.Err.Status)
	})
}

// With Route.Replay, targets that cannot take the partial answer as a
// prefill replay the original request instead: one without prefill, and
// one whose prefill was rejected (tried again at once, as a replay).
func TestMidStreamReplay(t *testing.T) {
	const a, b, c = "a:m1", "b:m2", "c:m3"
	pre := caps(Capabilities{Streaming: true, Prefill: true})
	cut := Outcome{Class: CutMidStream, Status: 200, Partial: true, BytesSent: true}
	rejected := Outcome{Class: BadRequestParam, Status: 400, BytesSent: true}
	replayRoute := func(targets ...Target) Config {
		cfg := oneRoute(targets...)
		cfg.Routes[0].Replay = true
		cfg.Policy.MaxAttempts = 5
		return cfg
	}
	tests := []struct {
		name    string
		cfg     Config
		answer  func(d Decision) Outcome
		want    []string
		prefill []bool
		replay  []bool
	}{
		{
			name: "a target without prefill replays", cfg: replayRoute(tgt(a, attempts(1)), tgt(b, prio(1))),
			answer:  byTarget(map[string]Outcome{a: cut}),
			want:    []string{a, b, "done"},
			prefill: []bool{false, false}, replay: []bool{false, true},
		},
		{
			name: "a rejected prefill is replayed on the same target", cfg: replayRoute(tgt(a, attempts(1)), tgt(b, prio(1), pre)),
			answer: func(d Decision) Outcome {
				switch {
				case d.Target.Key() == a:
					return cut
				case d.Prefill:
					return rejected
				}
				return Outcome{Class: OK, Status: 200}
			},
			want:    []string{a, b, b, "done"},
			prefill: []bool{false, true, false}, replay: []bool{false, false, true},
		},
		{
			name: "a diverged prefill is replayed on the same target", cfg: replayRoute(tgt(a, attempts(1)), tgt(b, prio(1), pre)),
			answer: func(d Decision) Outcome {
				switch {
				case d.Target.Key() == a:
					return cut
				case d.Prefill:
					return Outcome{Class: InvalidOutput, Status: 200, BytesSent: true, Diverged: true}
				}
				return Outcome{Class: OK, Status: 200}
			},
			want:    []string{a, b, b, "done"},
			prefill: []bool{false, true, false}, replay: []bool{false, false, true},
		},
		{
			name: "without Replay a diverged prefill fails over", cfg: oneRoute(tgt(a, attempts(1)), tgt(b, prio(1), pre), tgt(c, prio(2), pre)),
			answer:  byTarget(map[string]Outcome{a: cut, b: {Class: InvalidOutput, Status: 200, BytesSent: true, Diverged: true}}),
			want:    []string{a, b, c, "done"},
			prefill: []bool{false, true, true}, replay: []bool{false, false, false},
		},
		{
			name: "a rejected replay fails over", cfg: replayRoute(tgt(a, attempts(1)), tgt(b, prio(1), pre), tgt(c, prio(2))),
			answer:  byTarget(map[string]Outcome{a: cut, b: rejected}),
			want:    []string{a, b, b, c, "done"},
			prefill: []bool{false, true, false, false}, replay: []bool{false, false, true, true},
		},
		{
			name: "without Replay a rejected prefill fails over", cfg: oneRoute(tgt(a, attempts(1)), tgt(b, prio(1), pre), tgt(c, prio(2), pre)),
			answer:  byTarget(map[string]Outcome{a: cut, b: rejected}),
			want:    []string{a, b, c, "done"},
			prefill: []bool{false, true, true}, replay: []bool{false, false, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, tt.cfg, nil)
			_, trail, _ := drive(e, t0, Request{Stream: true}, tt.answer)
			require.Equal(t, tt.want, keys(trail))
			var prefill, replay []bool
			for _, d := range trail[:len(trail)-1] {
				prefill, replay = append(prefill, d.Prefill), append(replay, d.Replay)
			}
			require.Equal(t, tt.prefill, prefill)
			require.Equal(t, tt.replay, replay)
		})
	}
}

func TestTiers(t *testing.T) {
	const a, b, s = "a:m1", "b:m1", "a:small"
	route := Route{Name: "chat", Tiers: []string{"primary", "equivalent", "smaller", TierCached},
		Targets: []Target{tgt(a), tgt(b, tier("equivalent")), tgt(s, tier("smaller"))}}
	cfg := Config{Routes: []Route{route}}
	cfg.Policy.MaxAttempts = 5
	down := Outcome{Class: ServerError, Status: 502}
	tests := []struct {
		name    string
		answers map[string]Outcome
		want    []string
		outcome string
		tier    string
	}{
		{"primary", nil, []string{a, "done"}, events.OutcomeServed, "primary"},
		{"equivalent", map[string]Outcome{a: down}, []string{a, "wait", a, b, "done"}, events.OutcomeDegraded, "equivalent"},
		{"smaller", map[string]Outcome{a: {Class: Auth, Status: 401}, b: {Class: Auth, Status: 401}}, []string{a, b, s, "done"}, events.OutcomeDegraded, "smaller"},
		{"cached", map[string]Outcome{a: {Class: Auth, Status: 401}, b: {Class: Auth, Status: 401}, s: {Class: Auth, Status: 401}, TierCached: {Class: OK}},
			[]string{a, b, s, "serve_cached", "done"}, events.OutcomeDegraded, TierCached},
		{"honest error", map[string]Outcome{a: {Class: Auth, Status: 401}, b: {Class: Auth, Status: 401}, s: {Class: Auth, Status: 401}},
			[]string{a, b, s, "serve_cached", "fail"}, events.OutcomeFailed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log events.Log
			e := newEngine(t, cfg, &log)
			final, trail, _ := drive(e, t0, Request{ID: "r"}, byTarget(tt.answers))
			require.Equal(t, tt.want, keys(trail))
			end := kinds(log.Events(), events.RequestEnd)[0]
			require.Equal(t, tt.outcome, end.Outcome)
			require.Equal(t, tt.tier, end.Tier)
			served := kinds(log.Events(), events.TierServed)
			if tt.outcome == events.OutcomeDegraded {
				require.Len(t, served, 1)
				require.Equal(t, tt.tier, served[0].Tier)
			} else {
				require.Empty(t, served)
			}
			if final.Kind == Fail {
				require.Equal(t, 503, final.Err.Status)
				require.Positive(t, final.Err.RetryAfter)
			}
		})
	}
	t.Run("attempt cap still allows the cached tier", func(t *testing.T) {
		cfg := Config{Routes: []Route{route}}
		e := newEngine(t, cfg, nil)
		_, trail, _ := drive(e, t0, Request{}, byTarget(map[string]Outcome{a: {Class: Auth, Status: 401}, b: {Class: Auth, Status: 401}, s: {Class: Auth, Status: 401}, TierCached: {Class: OK}}))
		require.Equal(t, []string{a, b, s, "serve_cached", "done"}, keys(trail))
	})
}

func TestHonestErrorRetryAfterFollowsBreaker(t *testing.T) {
	e := newEngine(t, oneRoute(tgt("a:m1")), nil)
	require.NoError(t, e.Signal(t0, "a:m1", "manual", Trip))
	d := e.Begin(t0.Add(12300*time.Millisecond), Request{Route: "chat"}).Next(t0.Add(12300 * time.Millisecond))
	require.Equal(t, Fail, d.Kind)
	require.Equal(t, 18*time.Second, d.Err.RetryAfter, "30s open, 17.7s left, rounded up")
	require.Equal(t, llm.ErrOverloaded, d.Err.Type)
}

func TestCost(t *testing.T) {
	var log events.Log
	e := newEngine(t, oneRoute(tgt("a:m1", func(t *Target) { t.Price = Price{InputPerMTok: 2, OutputPerMTok: 10, CachedInputPerMTok: 0.5} })), &log)
	a := e.Begin(t0, Request{Route: "chat"})
	a.Next(t0)
	a.Observe(t0.Add(time.Second), Outcome{Class: OK, Status: 200, TTFT: 300 * time.Millisecond, Usage: llm.Usage{InputTokens: 1_000_000, CachedInputTokens: 200_000, OutputTokens: 100_000}})
	end := kinds(log.Events(), events.AttemptEnd)[0]
	require.InDelta(t, 0.8*2+0.2*0.5+0.1*10, end.Cost, 1e-9)
	require.Equal(t, 100_000, end.OutputTokens)
	require.Equal(t, time.Second, end.Duration)
	require.Equal(t, 300*time.Millisecond, end.TTFT)
	require.Equal(t, "a:m1", end.Target)
}

// A target whose prefill the continuation probe failed completes no
// partial answer from a prefill: it replays it on a route with Replay, and
// is skipped otherwise; a later verdict that passes restores it.
func TestPrefillVerdict(t *testing.T) {
	const a, b, c = "a:m1", "b:m2", "c:m3"
	pre := caps(Capabilities{Streaming: true, Prefill: true})
	cut := Outcome{Class: CutMidStream, Status: 200, Partial: true, BytesSent: true}

	e := newEngine(t, oneRoute(tgt(a, attempts(1)), tgt(b, prio(1), pre), tgt(c, prio(2), pre)), nil)
	require.NoError(t, e.PrefillVerdict(b, false))
	_, trail, _ := drive(e, t0, Request{Stream: true}, byTarget(map[string]Outcome{a: cut}))
	require.Equal(t, []string{a, c, "done"}, keys(trail), "the unverified target is skipped")
	require.True(t, trail[1].Prefill)

	require.NoError(t, e.PrefillVerdict(b, true))
	_, trail, _ = drive(e, t0, Request{Stream: true}, byTarget(map[string]Outcome{a: cut}))
	require.Equal(t, []string{a, b, "done"}, keys(trail), "verified again")
	st := e.State()
	for _, ts := range st.Targets {
		switch ts.Key {
		case b:
			require.Equal(t, PrefillVerified, ts.Prefill)
		default:
			require.Empty(t, ts.Prefill, "unchecked")
		}
	}

	cfg := oneRoute(tgt(a, attempts(1)), tgt(b, prio(1), pre))
	cfg.Routes[0].Replay = true
	e = newEngine(t, cfg, nil)
	require.NoError(t, e.PrefillVerdict(b, false))
	_, trail, _ = drive(e, t0, Request{Stream: true}, byTarget(map[string]Outcome{a: cut}))
	require.Equal(t, []string{a, b, "done"}, keys(trail))
	require.False(t, trail[1].Prefill, "with Replay the failed target replays")
	require.True(t, trail[1].Replay)
	require.Equal(t, PrefillFailed, e.State().Targets[1].Prefill)

	require.ErrorIs(t, e.PrefillVerdict("x:y", true), ErrUnknownTarget)
}
