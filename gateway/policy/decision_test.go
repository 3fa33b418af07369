package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every field of every decision, as the caller sees it: deadlines from the
// send time and the target's timeouts, clipped by the request timeout; the
// target's resolved timeouts; the try number; prefill after a partial
// answer; the wait's until; the tiers. Next returns the same decision until
// the next step.
func TestDecisionFields(t *testing.T) {
	timeouts := func(tg *Target) {
		tg.Timeouts = Timeouts{Connect: dur("2s"), FirstToken: dur("10s"), Total: dur("1m")}
	}
	prefill := caps(Capabilities{Streaming: true, Tools: true, StructuredOutput: true, Prefill: true})
	resolved := Timeouts{Connect: dur("2s"), FirstToken: dur("10s"), Idle: dur("30s"), Total: dur("1m"), Grace: dur("5s")}
	tests := []struct {
		name           string
		requestTimeout string
		// want: the deadlines of the first send, relative to the start.
		connect, firstToken, total time.Duration
	}{
		{"target timeouts", "", 2 * time.Second, 10 * time.Second, time.Minute},
		{"request timeout clips total", "30s", 2 * time.Second, 10 * time.Second, 30 * time.Second},
		{"request timeout clips all", "1s", time.Second, time.Second, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := oneRoute(tgt("openai:gpt-4o", timeouts, prefill), tgt("anthropic:claude", prio(1), tier("economy"), timeouts, prefill))
			cfg.Routes[0].Tiers = []string{DefaultTier, "economy", TierCached}
			if tt.requestTimeout != "" {
				cfg.Policy.RequestTimeout = dur(tt.requestTimeout)
			}
			e := newEngine(t, cfg, nil)
			a := e.Begin(t0, Request{ID: "r", Route: "chat", Stream: true})
			d := a.Next(t0)
			require.Equal(t, Decision{Kind: Send, Target: &e.routes["chat"].targets[0], Try: 1, Tier: DefaultTier, Timeouts: resolved,
				Deadlines: Deadlines{Connect: t0.Add(tt.connect), FirstToken: t0.Add(tt.firstToken), Total: t0.Add(tt.total)}}, d)
			require.Equal(t, d, a.Next(t0.Add(time.Millisecond)), "Next again")

			// A 429 with Retry-After after part of the answer: wait, then the
			// same target again with prefill.
			at := t0.Add(500 * time.Millisecond)
			a.Observe(at, Outcome{Class: RateLimited, Status: 429, RetryAfter: 200 * time.Millisecond, Partial: true, BytesSent: true})
			d = a.Next(at)
			require.Equal(t, Decision{Kind: Wait, Target: &e.routes["chat"].targets[0], Tier: DefaultTier, Until: at.Add(200 * time.Millisecond)}, d)
			require.Equal(t, d, a.Next(at.Add(100*time.Millisecond)), "Next during the wait")
			at = d.Until
			d = a.Next(at)
			end := t0.Add(tt.total)
			if tt.requestTimeout == "" {
				end = at.Add(time.Minute)
			}
			require.Equal(t, Decision{Kind: Send, Target: &e.routes["chat"].targets[0], Try: 2, Tier: DefaultTier, Timeouts: resolved, Prefill: true,
				Deadlines: Deadlines{Connect: minTime(at.Add(2*time.Second), end), FirstToken: minTime(at.Add(10*time.Second), end), Total: end}}, d)

			// A reset fails over to the economy tier; it serves.
			at = at.Add(100 * time.Millisecond)
			a.Observe(at, Outcome{Class: TimeoutTTFT, BytesSent: true, Partial: true})
			d = a.Next(at)
			require.Equal(t, Send, d.Kind)
			require.Equal(t, "economy", d.Tier)
			require.Equal(t, 3, d.Try)
			require.True(t, d.Prefill)
			a.Observe(at, okOutcome)
			require.Equal(t, Decision{Kind: Done, Target: &e.routes["chat"].targets[1], Tier: "economy"}, a.Next(at))
		})
	}
}

// A request no target can serve is answered from the cache (tier cached),
// or fails with the honest error.
func TestDecisionCachedAndFail(t *testing.T) {
	cfg := oneRoute(tgt("openai:gpt-4o", attempts(1)))
	cfg.Routes[0].Tiers = []string{DefaultTier, TierCached}
	e := newEngine(t, cfg, nil)
	for _, hit := range []bool{true, false} {
		a := e.Begin(t0, Request{ID: "r", Route: "chat"})
		a.Next(t0)
		a.Observe(t0, Outcome{Class: ServerError, Status: 500})
		d := a.Next(t0)
		require.Equal(t, Decision{Kind: ServeCached, Tier: TierCached}, d)
		if hit {
			a.Observe(t0, Outcome{Class: OK})
			require.Equal(t, Decision{Kind: Done, Tier: TierCached}, a.Next(t0))
			continue
		}
		a.Observe(t0, Outcome{Class: CacheMiss})
		d = a.Next(t0)
		require.Equal(t, Fail, d.Kind)
		require.Nil(t, d.Target)
		require.Empty(t, d.Tier)
		require.Equal(t, 503, d.Err.Status)
		require.Equal(t, d, a.Next(t0))
	}
}
