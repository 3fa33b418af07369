package lifecycle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/yamlfile"
)

// runWatchdog plays token arrivals against a Watchdog as a shell does with
// one timer: the timer is set to what Start returns, moved when Token says
// so, and Fire is called whenever it rings before the next token. It
// returns when and why the watchdog ended the attempt (never: zero, "").
func runWatchdog(t policy.Timeouts, tokens []time.Duration, finishAt time.Duration) (time.Duration, Verdict, policy.Class) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var w Watchdog
	timer := w.Start(start, t)
	ring := func(until time.Time) (time.Time, Verdict, policy.Class, bool) {
		for !timer.IsZero() && !timer.After(until) {
			at := timer
			v, c, next := w.Fire(at)
			if v != Within {
				return at, v, c, true
			}
			timer = next
		}
		return time.Time{}, Within, "", false
	}
	for _, tk := range tokens {
		now := start.Add(tk)
		if at, v, c, done := ring(now.Add(-1)); done {
			return at.Sub(start), v, c
		}
		if d, ok := w.Token(now, 1); ok {
			timer = d
		}
	}
	if finishAt > 0 {
		now := start.Add(finishAt)
		if at, v, c, done := ring(now.Add(-1)); done {
			return at.Sub(start), v, c
		}
		timer = w.Finish(now)
	}
	at, v, c, done := ring(start.Add(time.Hour))
	if !done {
		return 0, Within, ""
	}
	return at.Sub(start), v, c
}

func TestWatchdogRearmsFromEveryToken(t *testing.T) {
	ms := time.Millisecond
	d := func(x time.Duration) yamlfile.Duration { return yamlfile.Duration(x) }
	every := func(from, gap time.Duration, n int) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = from + time.Duration(i)*gap
		}
		return out
	}
	tests := []struct {
		name     string
		to       policy.Timeouts
		tokens   []time.Duration
		finishAt time.Duration
		at       time.Duration
		verdict  Verdict
		class    policy.Class
	}{
		{"no first token", policy.Timeouts{FirstToken: d(8 * time.Second), Idle: d(2 * time.Second)}, nil, 0,
			8 * time.Second, Expired, policy.TimeoutTTFT},
		{"stall with idle < first_token is caught 2s after the last token, not at 8s",
			policy.Timeouts{FirstToken: d(8 * time.Second), Idle: d(2 * time.Second)}, every(100*ms, 100*ms, 3), 0,
			2300 * ms, Expired, policy.Stall},
		{"stall after a slow start", policy.Timeouts{FirstToken: d(8 * time.Second), Idle: d(2 * time.Second)},
			every(5*time.Second, 500*ms, 4), 0, 8500 * ms, Expired, policy.Stall},
		{"rate floor due before first_token would be",
			policy.Timeouts{FirstToken: d(8 * time.Second), TokenRateFloor: 10, Grace: d(time.Second)},
			every(100*ms, 100*ms, 5), 0, 1100 * ms, Expired, policy.TokenRateFloor},
		{"tokens slower than the floor fire at the grace's end",
			policy.Timeouts{FirstToken: d(8 * time.Second), TokenRateFloor: 10, Grace: d(time.Second)},
			every(100*ms, 300*ms, 20), 0, 1100 * ms, Expired, policy.TokenRateFloor},
		{"a stream fast enough, then silent, falls to the floor",
			policy.Timeouts{FirstToken: d(8 * time.Second), TokenRateFloor: 2, Grace: d(time.Second)},
			every(100*ms, 300*ms, 10), 0, 5100 * ms, Expired, policy.TokenRateFloor},
		{"total deadline mid-stream", policy.Timeouts{FirstToken: d(time.Second), Idle: d(time.Second), Total: d(3 * time.Second)},
			every(100*ms, 500*ms, 20), 0, 3 * time.Second, Expired, policy.TimeoutTotal},
		{"steady stream then finish: the end marker's grace", policy.Timeouts{FirstToken: d(8 * time.Second), Idle: d(2 * time.Second)},
			every(100*ms, 100*ms, 10), 1100 * ms, 2100 * ms, Finished, ""},
		{"finish grace is the idle gap when shorter", policy.Timeouts{FirstToken: d(8 * time.Second), Idle: d(300 * ms)},
			every(100*ms, 100*ms, 10), 1100 * ms, 1400 * ms, Finished, ""},
		{"no timeouts: never", policy.Timeouts{}, every(100*ms, time.Minute, 3), 0, 0, Within, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, v, c := runWatchdog(tt.to, tt.tokens, tt.finishAt)
			require.Equal(t, tt.verdict, v)
			require.Equal(t, tt.class, c)
			require.Equal(t, tt.at, at)
		})
	}
}

// TestWatchdogTokenMovesTimerOnlyEarlier: Token asks for a new timer only
// when the next deadline is earlier than the one armed.
func TestWatchdogTokenMovesTimerOnlyEarlier(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var w Watchdog
	armed := w.Start(start, policy.Timeouts{FirstToken: yamlfile.Duration(8 * time.Second), Idle: yamlfile.Duration(2 * time.Second)})
	require.Equal(t, start.Add(8*time.Second), armed)
	d, ok := w.Token(start.Add(time.Second), 1)
	require.True(t, ok)
	require.Equal(t, start.Add(3*time.Second), d)
	_, ok = w.Token(start.Add(1500*time.Millisecond), 1)
	require.False(t, ok, "a later idle deadline waits for the timer to ring")
	v, _, next := w.Fire(start.Add(3 * time.Second))
	require.Equal(t, Within, v)
	require.Equal(t, start.Add(3500*time.Millisecond), next)
	require.Equal(t, time.Second, w.TTFT())
	require.Equal(t, 2, w.Tokens())
}
