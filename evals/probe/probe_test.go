package probe

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

func newSched(seed uint64, cfg Config) *Scheduler {
	return NewScheduler(cfg, rand.New(rand.NewPCG(seed, 1)))
}

// step advances virtual time to the next due probe, answers every due
// probe with answer, and returns the time and actions.
func step(t *testing.T, s *Scheduler, answer func(target string) Outcome) (time.Time, []string, []Action) {
	t.Helper()
	now, ok := s.Next()
	require.True(t, ok)
	due := s.Due(now)
	require.NotEmpty(t, due)
	var acts []Action
	for _, target := range due {
		acts = append(acts, s.Report(now, target, answer(target)))
	}
	return now, due, acts
}

func ok(string) Outcome { return Outcome{OK: true} }

func TestHealthyIntervalsAreJitteredWithinBounds(t *testing.T) {
	s := newSched(1, Config{})
	s.Add(t0, "a:m")
	s.Add(t0, "b:m")
	last := map[string]time.Time{}
	gaps := map[time.Duration]bool{}
	for range 200 {
		now, due, acts := step(t, s, ok)
		for i, target := range due {
			require.Equal(t, ActionNone, acts[i].Kind)
			if prev, seen := last[target]; seen {
				gap := now.Sub(prev)
				require.GreaterOrEqual(t, gap, 30*time.Second)
				require.LessOrEqual(t, gap, 60*time.Second)
				gaps[gap.Round(time.Second)] = true
			} else {
				require.LessOrEqual(t, now.Sub(t0), 60*time.Second, "first probe within one interval")
			}
			last[target] = now
		}
	}
	require.Greater(t, len(gaps), 15, "intervals are jittered, not fixed")
}

func TestSameSeedSameSchedule(t *testing.T) {
	run := func(seed uint64) []time.Time {
		s := newSched(seed, Config{})
		s.Add(t0, "a:m")
		s.Add(t0, "b:m")
		var times []time.Time
		for range 50 {
			now, _, _ := step(t, s, ok)
			times = append(times, now)
		}
		return times
	}
	require.Equal(t, run(7), run(7))
	require.NotEqual(t, run(7), run(8))
}

func TestConsecutiveFailuresOpenBreakerThenBackOff(t *testing.T) {
	s := newSched(2, Config{})
	s.Add(t0, "a:m")
	fail := func(string) Outcome { return Outcome{Reason: "says pong: no match"} }
	var times []time.Time
	var kinds []ActionKind
	for range 7 {
		now, _, acts := step(t, s, fail)
		times = append(times, now)
		kinds = append(kinds, acts[0].Kind)
		require.Equal(t, "says pong: no match", acts[0].Reason)
	}
	require.Equal(t, []ActionKind{ActionNone, ActionNone, ActionOpenBreaker, ActionNone, ActionNone, ActionOpenBreaker, ActionNone}, kinds)
	// Normal cadence until the threshold, then doubling gaps, capped.
	for i := 1; i < 3; i++ {
		require.LessOrEqual(t, times[i].Sub(times[i-1]), 60*time.Second)
	}
	g3, g4 := times[3].Sub(times[2]), times[4].Sub(times[3])
	require.GreaterOrEqual(t, g3, 60*time.Second)
	require.LessOrEqual(t, g3, 120*time.Second)
	require.GreaterOrEqual(t, g4, 120*time.Second)
	require.LessOrEqual(t, g4, 240*time.Second)
	for i := 5; i < len(times); i++ {
		require.LessOrEqual(t, times[i].Sub(times[i-1]), 10*time.Minute, "capped at max_backoff")
	}
	st := s.State()
	require.Equal(t, 7, st[0].Failures)
}

func TestSuccessResetsButNeverCloses(t *testing.T) {
	s := newSched(3, Config{Failures: 2})
	s.Add(t0, "a:m")
	outcomes := []bool{false, true, false, false, true, true}
	var kinds []ActionKind
	for _, good := range outcomes {
		_, _, acts := step(t, s, func(string) Outcome { return Outcome{OK: good, Reason: "x"} })
		kinds = append(kinds, acts[0].Kind)
		require.NotEqual(t, "close", acts[0].Kind.String())
	}
	require.Equal(t, []ActionKind{ActionNone, ActionNone, ActionNone, ActionOpenBreaker, ActionNone, ActionNone}, kinds)
	require.Zero(t, s.State()[0].Failures)
}

func TestRateLimitedProbesRespectRetryAfterAndDoNotCount(t *testing.T) {
	s := newSched(4, Config{})
	s.Add(t0, "a:m")
	limited := func(string) Outcome { return Outcome{RateLimited: true, RetryAfter: 5 * time.Minute, Reason: "429"} }
	prev, _, acts := step(t, s, limited)
	for range 4 {
		require.Equal(t, ActionNone, acts[0].Kind, "rate limits are not failures")
		var now time.Time
		now, _, acts = step(t, s, limited)
		require.GreaterOrEqual(t, now.Sub(prev), 5*time.Minute)
		prev = now
	}
	require.Zero(t, s.State()[0].Failures)
	require.Equal(t, 5, s.State()[0].RateLimited)
}

func TestInFlightAndStaleReports(t *testing.T) {
	s := newSched(5, Config{})
	s.Add(t0, "a:m")
	now, _ := s.Next()
	require.Equal(t, []string{"a:m"}, s.Due(now))
	require.Empty(t, s.Due(now.Add(time.Hour)), "in flight: not due again")
	_, pending := s.Next()
	require.False(t, pending)
	require.Equal(t, ActionNone, s.Report(now, "b:m", Outcome{}).Kind, "unknown target ignored")
	s.Report(now, "a:m", Outcome{OK: true})
	require.Equal(t, ActionNone, s.Report(now, "a:m", Outcome{}).Kind, "second report ignored")
	require.Zero(t, s.State()[0].Failures)
	s.Remove("a:m")
	require.Empty(t, s.State())
	s.Add(t0, "a:m")
	s.Add(t0, "a:m") // idempotent
	require.Len(t, s.State(), 1)
}

func TestEvaluateChecksContentNotJustStatus(t *testing.T) {
	d := Default()
	tests := []struct {
		name    string
		resp    *llm.Response
		err     error
		ok      bool
		limited bool
		reason  string
	}{
		{"pong", &llm.Response{Content: "Pong.", FinishReason: llm.FinishStop}, nil, true, false, ""},
		{"200 with wrong content", &llm.Response{Content: "I can't do that.", FinishReason: llm.FinishStop}, nil, false, false, "says pong"},
		{"truncated", &llm.Response{Content: "pong", FinishReason: llm.FinishLength}, nil, false, false, "finish_reason"},
		{"empty", &llm.Response{FinishReason: llm.FinishStop}, nil, false, false, "says pong"},
		{"server error", nil, &llm.Error{Status: 500, Type: llm.ErrServer, Message: "boom"}, false, false, "boom"},
		{"rate limited", nil, &llm.Error{Status: 429, Type: llm.ErrRateLimit, RetryAfter: 7 * time.Second, Message: "slow"}, false, true, "slow"},
		{"transport", nil, errors.New("connection refused"), false, false, "connection refused"},
		{"nil", nil, nil, false, false, "no response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := d.Evaluate(tt.resp, tt.err)
			require.Equal(t, tt.ok, o.OK)
			require.Equal(t, tt.limited, o.RateLimited)
			require.Contains(t, o.Reason, tt.reason)
			if tt.limited {
				require.Equal(t, 7*time.Second, o.RetryAfter)
			}
		})
	}
	r := d.RequestFor("gpt-4o-mini")
	require.Equal(t, "gpt-4o-mini", r.Model)
	require.Empty(t, d.Request.Model, "definition unchanged")
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, Config{}.Validate())
	require.ErrorContains(t, Config{MinInterval: 60e9, MaxInterval: 30e9}.Validate(), "max_interval")
	require.ErrorContains(t, Config{Failures: -1}.Validate(), "failures")
}

func TestSpecDefinition(t *testing.T) {
	type file struct {
		Probe Spec `yaml:"probe"`
	}
	src := "probe:\n  prompt: Say pong.\n  checks:\n    - {type: regex, pattern: '(?i)pong'}\n    - {type: finish_reason, expect: [stop]}\n"
	var f file
	doc, err := yamlfile.Decode("gateway.yaml", []byte(src), &f)
	require.NoError(t, err)
	d, err := f.Probe.Definition(doc, "probe")
	require.NoError(t, err)
	require.Equal(t, "probe", d.Name)
	require.Equal(t, 16, d.Request.MaxTokens)
	require.Equal(t, "Say pong.", d.Request.LastUserText())
	require.True(t, d.Evaluate(&llm.Response{Content: "PONG", FinishReason: llm.FinishStop}, nil).OK)
	require.False(t, d.Evaluate(&llm.Response{Content: "ping", FinishReason: llm.FinishStop}, nil).OK)

	bad := "probe:\n  max_tokens: -1\n  checks:\n    - {type: regex, pattern: '('}\n    - {type: tool_call}\n"
	var g file
	doc, err = yamlfile.Decode("gateway.yaml", []byte(bad), &g)
	require.NoError(t, err)
	_, err = g.Probe.Definition(doc, "probe")
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "gateway.yaml:2:3: probe.prompt: missing")
	require.Contains(t, msg, "gateway.yaml:2:15: probe.max_tokens: -1 is negative")
	require.Contains(t, msg, "gateway.yaml:4:30: probe.checks.0.pattern: regex: error parsing regexp")
	require.Contains(t, msg, "gateway.yaml:5:7: probe.checks.1: a tool_call check needs the case to declare tools")

	var h file
	doc, err = yamlfile.Decode("gateway.yaml", []byte("probe:\n  prompt: hi\n"), &h)
	require.NoError(t, err)
	_, err = h.Probe.Definition(doc, "probe")
	require.ErrorContains(t, err, "probe.checks: a probe needs at least one check on the content")
}

func TestEvent(t *testing.T) {
	ev := Event(t0, "openai:gpt-4o", Outcome{Reason: "says pong: no match"})
	require.Equal(t, events.ProbeResult, ev.Kind)
	require.Equal(t, "openai:gpt-4o", ev.Target)
	require.False(t, ev.OK)
	require.Equal(t, "says pong: no match", ev.Reason)
	require.Equal(t, t0, ev.Time)
}
