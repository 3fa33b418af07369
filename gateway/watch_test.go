package gateway

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TestWatchRearmsFromEveryToken runs the shell's watch on synctest's fake
// clock: a stream that stalls after three tokens is cut by the idle gap
// 2s after its last token, not at the 8s first-token deadline, and tokens
// slower than the rate floor are cut when the floor is due.
func TestWatchRearmsFromEveryToken(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		to     policy.Timeouts
		tokens []time.Duration // gaps before each token
		class  policy.Class
		at     time.Duration
	}{
		{"stall with idle < first_token", policy.Timeouts{FirstToken: yamlfile.Duration(8 * time.Second), Idle: yamlfile.Duration(2 * time.Second)},
			[]time.Duration{100 * ms, 100 * ms, 100 * ms}, policy.Stall, 2300 * ms},
		{"rate floor before first_token would fire", policy.Timeouts{FirstToken: yamlfile.Duration(8 * time.Second), TokenRateFloor: 10, Grace: yamlfile.Duration(time.Second)},
			[]time.Duration{100 * ms, 300 * ms, 300 * ms, 300 * ms}, policy.TokenRateFloor, 1100 * ms},
		{"no token", policy.Timeouts{FirstToken: yamlfile.Duration(8 * time.Second), Idle: yamlfile.Duration(2 * time.Second)},
			nil, policy.TimeoutTTFT, 8 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				start := time.Now()
				w := newWatch(start, tt.to, cancel)
				defer w.stop()
				for _, gap := range tt.tokens {
					time.Sleep(gap)
					if ctx.Err() != nil {
						break
					}
					w.token(time.Now())
				}
				<-ctx.Done()
				var we *watchdogError
				if !errors.As(context.Cause(ctx), &we) || we.class != tt.class {
					t.Fatalf("cause %v, want %s", context.Cause(ctx), tt.class)
				}
				if got := time.Since(start); got != tt.at {
					t.Fatalf("fired at %v, want %v", got, tt.at)
				}
			})
		})
	}
}
