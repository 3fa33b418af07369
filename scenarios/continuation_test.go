package scenarios

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/scenarios/score"
	"github.com/brownout-dev/brownout/yamlfile"
)

// The simulator runs a continuation's planned output through the attempt
// the gateway feeds delta by delta (lifecycle.Attempt): a restart's overlap
// is not forwarded, a divergence ends the attempt at the chunk that showed
// it, a replay must repeat what was sent.
func TestSimContinuation(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	plan := func(chunks ...string) *faults.Plan {
		p := &faults.Plan{Chunks: chunks}
		for i := range chunks {
			p.TokenTimes = append(p.TokenTimes, time.Duration(i+1)*100*time.Millisecond)
		}
		return p
	}
	user := &llm.Request{Model: "chat", Stream: true, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("where did the cat sit?")}}}}
	tests := []struct {
		name     string
		replay   bool
		plan     *faults.Plan
		fwd      string
		deltas   int
		how      string
		diverged bool
		end      time.Duration // when the attempt ends
	}{
		{name: "continued", plan: plan(" the", " mat."), fwd: " the mat.", deltas: 2, how: lifecycle.Continued, end: time.Second},
		{name: "restart: overlap skipped", plan: plan("The cat", " sat on", " the", " mat."), fwd: " the mat.", deltas: 2, how: lifecycle.Continued, end: time.Second},
		{name: "restart diverges", plan: plan("The cat", " sat under", " it."), how: lifecycle.Failed, diverged: true, end: 200 * time.Millisecond},
		{name: "a fresh answer glued on: the join check", plan: plan("Every", " cat", " sits."), how: lifecycle.Failed, diverged: true, end: 300 * time.Millisecond},
		{name: "replayed", replay: true, plan: plan("The cat sat", " on the mat."), fwd: " the mat.", deltas: 1, how: lifecycle.Replayed, end: time.Second},
		{name: "replay diverges", replay: true, plan: plan("A cat", " sat on the mat."), how: lifecycle.Failed, diverged: true, end: 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng, err := policy.New(policy.Config{Routes: []policy.Route{{Name: "chat", Targets: []policy.Target{
				{Provider: "a", Model: "m"}, {Provider: "b", Model: "m", Priority: 1, Capabilities: policy.Capabilities{Streaming: true, Prefill: true}},
			}}}}, policy.Options{Rand: rand.New(rand.NewPCG(1, 2))})
			require.NoError(t, err)
			var r lifecycle.Request
			r.Begin(eng, start, policy.Request{ID: "r", Route: "chat", Stream: true})
			s := r.Next(start)
			a := r.Attempt(&s.Decision, "a:m", user)
			a.Text("The cat sat on")
			r.Observe(start, lifecycle.Classify(&lifecycle.Observation{End: lifecycle.Cut, Status: 200, Tokens: 1}))
			s = r.Next(start)
			require.Equal(t, policy.Send, s.Kind)
			s.Prefill, s.Replay = !tt.replay, tt.replay
			a = r.Attempt(&s.Decision, "b:m", user)

			obs := lifecycle.Observation{End: lifecycle.Answered, Status: 200, Tokens: len(tt.plan.Chunks), HaveUsage: true,
				Usage: llm.Usage{OutputTokens: len(tt.plan.Chunks)}}
			end := continueAttempt(a, tt.plan, &obs, start, start.Add(time.Second))
			how, _, _ := a.Judged()
			require.Equal(t, tt.how, how)
			require.Equal(t, "The cat sat on"+tt.fwd, r.Partial())
			require.Equal(t, 1+tt.deltas, r.Sent())
			require.Equal(t, tt.diverged, obs.Diverged)
			require.Equal(t, start.Add(tt.end), end)
			o := lifecycle.Classify(&obs)
			if tt.diverged {
				require.Equal(t, policy.InvalidOutput, o.Class)
			} else {
				require.Equal(t, policy.OK, o.Class)
			}
		})
	}
}

// TestSimContinuationBudget: the simulator gives a continuing fallback the client's max_tokens less the deltas the client
// already received (a cut after 3 of 6 leaves 3).
func TestSimContinuationBudget(t *testing.T) {
	c := diffCase{name: "continuation_budget", traffic: "max_tokens: 6", timeline: faultStep("{kind: cut, after: 3}")}
	s, err := c.scenario()
	require.NoError(t, err)
	res, err := Run(context.Background(), s, Options{Mode: score.ModeSim})
	require.NoError(t, err)
	continued := 0
	for _, j := range res.Journal() {
		if j.Target == "b:m2" {
			continued++
			require.Equal(t, 3, j.OutputTokens, "%+v", j)
		}
	}
	require.Positive(t, continued, "no continuation on the fallback")
}

// TestSimMetersPromptEstimate: an attempt that ends without a usage event
// (here continuations that diverged from what the client had: the
// fallback-ignores-prefill game day without its continuation probe, so the
// fallback that ignores prefill is asked to continue) meters the gateway's
// estimate of the prompt, in the simulator as live (it metered no input at
// all).
func TestSimMetersPromptEstimate(t *testing.T) {
	s, err := Load("../examples/gamedays/fallback-ignores-prefill.yaml")
	require.NoError(t, err)
	s.env.probes.Continuation = false
	res, err := Run(context.Background(), s, Options{Mode: ModeSim})
	require.NoError(t, err)
	n := 0
	for _, e := range res.Log() {
		if e.Kind == events.AttemptEnd && e.Class == string(policy.InvalidOutput) && e.Stream {
			n++
			require.Positive(t, e.InputTokens, "%+v", e)
		}
	}
	require.Positive(t, n, "no diverged continuation")
}

// TestSimContinuationProbe: the simulator models the gateway's continuation
// probe. In the fallback-ignores-prefill game day the fallback that ignores
// prefill fails it at start (a prefill.verdict event), so it continues no
// cut stream and no spliced answer is served; without the probe the join
// check turns most of its restarts into in-band errors (diverged
// continuations) and a cut between two sentences is served spliced (bad
// served).
func TestSimContinuationProbe(t *testing.T) {
	s, err := Load("../examples/gamedays/fallback-ignores-prefill.yaml")
	require.NoError(t, err)
	res, err := Run(context.Background(), s, Options{Mode: ModeSim})
	require.NoError(t, err)
	var verdicts []events.Event
	for _, e := range res.Log() {
		switch e.Kind {
		case events.PrefillVerdict:
			verdicts = append(verdicts, e)
		case events.StreamContinuation:
			t.Fatalf("a continuation on a target that failed the probe: %+v", e)
		}
	}
	require.Len(t, verdicts, 1)
	require.Equal(t, "anthropic:claude-sonnet-4", verdicts[0].Target)
	require.False(t, verdicts[0].OK, verdicts[0].Reason)
	require.Zero(t, res.Overall.BadServed)

	// With active probes, the check repeats with each probe of the target.
	s.env.probes.Enabled = true
	res, err = Run(context.Background(), s, Options{Mode: ModeSim})
	require.NoError(t, err)
	n := 0
	for _, e := range res.Log() {
		if e.Kind == events.PrefillVerdict {
			n++
			require.False(t, e.OK)
		}
	}
	require.Greater(t, n, 3, "at start and with the active probes (every 30-60s)")
	s.env.probes.Enabled = false

	// A reload checks every prefill target again, in both engines.
	s.Timeline = append(s.Timeline, Step{Name: "reload", At: yamlfile.Duration(4 * time.Minute), Reload: &Reload{Config: "env/gateway-prefill-probe.yaml"}})
	res, err = Run(context.Background(), s, Options{Mode: ModeSim})
	require.NoError(t, err)
	var at []time.Duration
	for _, e := range res.Log() {
		if e.Kind == events.PrefillVerdict {
			at = append(at, e.Time.Sub(Epoch))
		}
	}
	require.Equal(t, []time.Duration{0, 4 * time.Minute}, at)
	s.Timeline = s.Timeline[:len(s.Timeline)-1]

	s.env.probes.Continuation = false
	res, err = Run(context.Background(), s, Options{Mode: ModeSim})
	require.NoError(t, err)
	failed, continued := 0, 0
	for _, e := range res.Log() {
		if e.Kind == events.StreamContinuation {
			if e.Outcome == events.OutcomeFailed {
				failed++
			} else {
				continued++
			}
		}
	}
	require.Greater(t, failed, continued, "the join check rejects most restarts")
	t.Logf("without the probe: %d continuations failed, %d joined; %d spliced answers served", failed, continued, res.Overall.BadServed)
}
