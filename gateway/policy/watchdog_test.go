package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWatchdog(t *testing.T) {
	to := Timeouts{FirstToken: dur("2s"), Idle: dur("1s"), Total: dur("30s"), TokenRateFloor: 10, Grace: dur("3s")}
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type tok struct{ at, n int }
	tests := []struct {
		name     string
		to       Timeouts
		tokens   []tok
		deadline time.Time // after the tokens
		at       int       // check at (ms)
		want     Class
	}{
		{"waiting for first token", to, nil, ms(2000), 1999, ""},
		{"ttft", to, nil, ms(2000), 2000, TimeoutTTFT},
		{"streaming", to, []tok{{500, 1}, {1200, 5}}, ms(2200), 2100, ""},
		{"stall", to, []tok{{500, 1}, {1200, 5}}, ms(2200), 2200, Stall},
		{"fast enough after grace", to, []tok{{500, 1}, {1500, 20}, {2500, 20}, {3400, 10}}, ms(4400), 3600, ""},
		// 12 tokens since 0.5s: the rate falls to 10/s at 0.5+1.2 = 1.7s, but grace runs to 3.5s
		{"rate floor waits for grace", Timeouts{TokenRateFloor: 10, Grace: dur("3s")}, []tok{{500, 2}, {1000, 10}}, ms(3500), 3499, ""},
		{"rate floor", Timeouts{TokenRateFloor: 10, Grace: dur("3s")}, []tok{{500, 2}, {1000, 10}}, ms(3500), 3500, TokenRateFloor},
		// 50 tokens: the floor is reached at 0.5+5 = 5.5s
		{"rate floor deadline after grace", Timeouts{TokenRateFloor: 10, Grace: dur("3s")}, []tok{{500, 25}, {1000, 25}}, ms(5500), 5500, TokenRateFloor},
		{"total", Timeouts{Total: dur("30s"), Idle: dur("1m")}, []tok{{100, 1}, {29900, 1}}, ms(30000), 30000, TimeoutTotal},
		{"all off", Timeouts{}, []tok{{100, 1}}, time.Time{}, 1e6, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWatchdog(t0, tt.to)
			for _, tk := range tt.tokens {
				w.Token(ms(tk.at), tk.n)
			}
			require.Equal(t, tt.deadline, w.Deadline())
			c, fired := w.Check(ms(tt.at))
			require.Equal(t, tt.want, c)
			require.Equal(t, tt.want != "", fired)
			if !tt.deadline.IsZero() {
				c, fired := w.Check(tt.deadline)
				require.True(t, fired, "Check fires at Deadline (%s)", c)
			}
		})
	}
	w := NewWatchdog(t0, to)
	require.Zero(t, w.TTFT())
	w.Token(ms(700), 3)
	require.Equal(t, 700*time.Millisecond, w.TTFT())
	require.Equal(t, 3, w.Tokens())
}
