package lifecycle

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

var question = &llm.Request{Model: "chat", MaxTokens: 10, Messages: []llm.Message{
	{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("where did the cat sit?")}}}}

// cutRequest begins a streamed request whose first attempt (on a:m) sent
// the client chunks, then was cut; it returns the request and the Send to
// the fall-back (b:m, a prefill).
func cutRequest(t *testing.T, chunks ...string) (*Request, policy.Decision) {
	t.Helper()
	r := new(Request)
	r.Begin(engine(t, &events.Log{}), epoch, policy.Request{ID: "r1", Route: "chat", Stream: true})
	s := r.Next(epoch)
	require.Equal(t, policy.Send, s.Kind)
	a := r.Attempt(&s.Decision, s.Target.Key(), question)
	require.False(t, a.Continuing())
	for _, c := range chunks {
		fwd, ok := a.Text(c)
		require.True(t, ok)
		require.Equal(t, c, fwd, "outside a continuation a delta is forwarded as it came")
	}
	require.True(t, r.Committed())
	r.Observe(epoch, Classify(&Observation{End: Cut, Status: 200, Tokens: len(chunks)}))
	s = r.Next(epoch)
	require.Equal(t, policy.Send, s.Kind)
	require.Equal(t, "b:m", s.Target.Key())
	require.True(t, s.Prefill)
	return r, s.Decision
}

// The attempt runs a continuation's output through the check both engines
// share: a restart's overlap is not forwarded, a divergence stops it at
// the delta that showed it, a replay must repeat what was sent; what it
// forwards joins the answer so far.
func TestAttemptContinuation(t *testing.T) {
	tests := []struct {
		name   string
		replay bool
		chunks []string
		fwd    string
		deltas int
		how    string
		at     int // the delta that diverged, -1 when none (len: at the finish)
	}{
		{name: "continued", chunks: []string{" the", " mat."}, fwd: " the mat.", deltas: 2, how: Continued, at: -1},
		{name: "restart: overlap skipped", chunks: []string{"The cat", " sat on", " the", " mat."}, fwd: " the mat.", deltas: 2, how: Continued, at: -1},
		{name: "restart diverges", chunks: []string{"The cat", " sat under", " it."}, how: Failed, at: 1},
		{name: "a fresh answer glued on: the join check", chunks: []string{"Every", " cat", " sits."}, how: Failed, at: 3},
		{name: "replayed", replay: true, chunks: []string{"The cat sat", " on the mat."}, fwd: " the mat.", deltas: 1, how: Replayed, at: -1},
		{name: "replay diverges", replay: true, chunks: []string{"A cat", " sat on the mat."}, how: Failed, at: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, d := cutRequest(t, "The cat", " sat on")
			d.Prefill, d.Replay = !tt.replay, tt.replay
			a := r.Attempt(&d, "b:m", question)
			require.True(t, a.Continuing())
			require.Equal(t, "a:m", a.From())
			require.Equal(t, 2, a.Before())
			at := -1
			for i, c := range tt.chunks {
				if _, ok := a.Text(c); !ok {
					at = i
					break
				}
			}
			if _, ok := a.Finish(); at < 0 && !ok {
				at = len(tt.chunks)
			}
			require.Equal(t, tt.at, at)
			how, _, ok := a.Judged()
			require.True(t, ok)
			require.Equal(t, tt.how, how)
			_, _, ok = a.Judged()
			require.False(t, ok, "judged once")
			require.Equal(t, "The cat sat on"+tt.fwd, r.Partial())
			require.Equal(t, 2+tt.deltas, r.Sent())
			if tt.fwd != "" {
				require.Equal(t, "b:m", r.ServedBy())
			} else {
				require.Equal(t, "a:m", r.ServedBy())
			}
		})
	}
}

// Prepare: the target's shape, then the prefill and the continuation
// budget (what the client asked for less what it received); a request the
// target cannot take is an outcome, not a send.
func TestAttemptPrepare(t *testing.T) {
	r, d := cutRequest(t, "The cat", " sat on ")
	a := r.Attempt(&d, "b:m", question)
	var out llm.Request
	require.Nil(t, a.Prepare(&out, question, d.Target, false))
	require.Equal(t, "m", out.Model)
	require.Equal(t, 8, out.MaxTokens)
	require.Len(t, out.Messages, 2)
	require.Equal(t, "The cat sat on", out.Messages[1].Text(), "trailing spaces trimmed")
	require.Len(t, question.Messages, 1, "the user's request is not written")

	require.Nil(t, a.Prepare(&out, question, d.Target, true))
	require.Len(t, out.Messages, 3)
	require.Equal(t, Instruction, out.Messages[0].Text())

	d.Prefill, d.Replay = false, true
	a = r.Attempt(&d, "b:m", question)
	require.Nil(t, a.Prepare(&out, question, d.Target, false))
	require.Len(t, out.Messages, 1, "a replay sends the original request")
	require.Equal(t, 10, out.MaxTokens, "with the whole budget")

	bad := *d.Target
	bad.OverrideParams = map[string]any{"temperature": "hot"}
	o := a.Prepare(&out, question, &bad, false)
	require.NotNil(t, o)
	require.Equal(t, policy.BadRequestParam, o.Class)
}

// A tool-call delta commits the stream with tools: a failure after it ends
// the request in band (no target continues tool calls).
func TestAttemptToolDeltaEndsRequest(t *testing.T) {
	r := new(Request)
	r.Begin(engine(t, &events.Log{}), epoch, policy.Request{ID: "r1", Route: "chat", Stream: true})
	s := r.Next(epoch)
	a := r.Attempt(&s.Decision, s.Target.Key(), question)
	_, tc, ok := a.ToolCall(&llm.ToolCallDelta{Index: 0, ID: "c1", Name: "get", Arguments: `{"ci`})
	require.True(t, ok)
	require.NotNil(t, tc)
	require.Equal(t, []llm.ToolCall{{ID: "c1", Name: "get", Arguments: `{"ci`}}, r.Tools())
	r.Observe(epoch, Classify(&Observation{End: Cut, Status: 200, Tokens: 1}))
	s = r.Next(epoch)
	require.Equal(t, policy.Fail, s.Kind)
	require.NotNil(t, s.InBand)
}

func TestAttemptMalformed(t *testing.T) {
	r := new(Request)
	r.Begin(engine(t, &events.Log{}), epoch, policy.Request{ID: "r1", Route: "chat", Stream: true})
	s := r.Next(epoch)
	a := r.Attempt(&s.Decision, s.Target.Key(), question)
	for i := 1; i <= 2; i++ {
		skip, n := a.Malformed(2)
		require.True(t, skip)
		require.Equal(t, i, n)
	}
	skip, _ := a.Malformed(2)
	require.False(t, skip, "beyond the limit the attempt ends malformed")
	require.Equal(t, "unparseable event after token 7 skipped", MalformedReason(7))
}

// The per-delta calls allocate nothing beyond the answer's own growth.
func TestAttemptDeltaAllocs(t *testing.T) {
	r, d := cutRequest(t, "The cat", " sat on")
	a := r.Attempt(&d, "b:m", question)
	_, ok := a.Text(" the")
	require.True(t, ok)
	_, ok = a.Text(" mat") // decided: forwarded as it comes
	require.True(t, ok)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, ok := a.Text(" and"); !ok {
			t.Fatal("diverged")
		}
	})
	require.Zero(t, allocs, "a continuation's delta")

	r2 := new(Request)
	r2.Begin(engine(t, &events.Log{}), epoch, policy.Request{ID: "r2", Route: "chat", Stream: true})
	s := r2.Next(epoch)
	a = r2.Attempt(&s.Decision, s.Target.Key(), question)
	allocs = testing.AllocsPerRun(1000, func() { a.Text("tok ") })
	require.Zero(t, allocs, "a delta outside a continuation")
}

func BenchmarkAttemptText(b *testing.B) {
	e := engine(b, &events.Log{})
	var r Request
	b.ReportAllocs()
	for b.Loop() {
		r.Begin(e, epoch, policy.Request{ID: "r", Route: "chat", Stream: true})
		s := r.Next(epoch)
		a := r.Attempt(&s.Decision, s.Target.Key(), question)
		for range 256 {
			a.Text("tok ")
		}
	}
}

// A structured request rejects a text answer that does not parse; tool
// calls are not held to JSON content.
func TestAttemptRejects(t *testing.T) {
	valid := func(s string) bool { return s == "{}" }
	for _, structured := range []bool{false, true} {
		r := new(Request)
		r.Begin(engine(t, &events.Log{}), epoch, policy.Request{ID: "r1", Route: "chat", Structured: structured})
		s := r.Next(epoch)
		a := r.Attempt(&s.Decision, s.Target.Key(), question)
		require.Equal(t, structured, a.Rejects(&llm.Response{Content: "Sure! {"}, valid))
		require.False(t, a.Rejects(&llm.Response{Content: "{}"}, valid))
		require.False(t, a.Rejects(&llm.Response{ToolCalls: []llm.ToolCall{{Name: "get"}}}, valid))
	}
}
