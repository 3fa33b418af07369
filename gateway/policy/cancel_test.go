package policy

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/stretchr/testify/require"
)

// TestCancel: a client that goes away ends its request as failed /
// client_canceled, wherever the request was, and never counts against the
// target it was talking to.
func TestCancel(t *testing.T) {
	const a, b = "a:m1", "b:m2"
	type step func(e *Engine, at *Attempt) time.Time // returns when to cancel
	cases := []struct {
		name string
		// before runs against the engine before the request begins.
		before   func(e *Engine)
		steps    step
		attempts int  // attempt.end events expected
		canceled bool // the last attempt.end is client_canceled
		breaker  BreakerState
		failures int // breaker failures counted afterwards
		// trialFree: a half-open trial slot is free again afterwards.
		trialFree bool
		wantKinds []events.Kind
	}{
		{
			name:      "before any decision",
			steps:     func(e *Engine, at *Attempt) time.Time { return t0 },
			breaker:   Closed,
			wantKinds: []events.Kind{events.RequestStart, events.RequestEnd},
		},
		{
			name: "mid attempt",
			steps: func(e *Engine, at *Attempt) time.Time {
				require.Equal(t, Send, at.Next(t0).Kind)
				return t0.Add(2 * time.Second)
			},
			attempts: 1, canceled: true, breaker: Closed,
			wantKinds: []events.Kind{events.RequestStart, events.AttemptStart, events.AttemptEnd, events.RequestEnd},
		},
		{
			name: "during a backoff wait",
			steps: func(e *Engine, at *Attempt) time.Time {
				require.Equal(t, Send, at.Next(t0).Kind)
				at.Observe(t0, Outcome{Class: RateLimited, Status: 429, RetryAfter: time.Second})
				d := at.Next(t0)
				require.Equal(t, Wait, d.Kind)
				return t0.Add(500 * time.Millisecond)
			},
			attempts: 1, breaker: Closed, failures: 1, // the 429, not the cancel
			wantKinds: []events.Kind{events.RequestStart, events.AttemptStart, events.AttemptEnd, events.RequestEnd},
		},
		{
			name:   "half-open trial gives its slot back",
			before: func(e *Engine) { require.NoError(t, e.Signal(t0.Add(-30*time.Second), a, "manual", Trip)) },
			steps: func(e *Engine, at *Attempt) time.Time {
				d := at.Next(t0)
				require.Equal(t, a, d.Target.Key(), "the one trial")
				require.Equal(t, b, e.Begin(t0, Request{Route: "chat"}).Next(t0).Target.Key(), "the trial slot is taken")
				return t0.Add(time.Second)
			},
			attempts: 1, canceled: true, breaker: HalfOpen, trialFree: true,
			wantKinds: []events.Kind{events.RequestStart, events.AttemptStart, events.AttemptEnd, events.RequestEnd},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := oneRoute(tgt(a, attempts(3)), tgt(b, prio(1)))
			cfg.Policy.Breaker.MinSamples = 2
			cfg.Policy.Breaker.HalfOpenRequests = 1
			var log events.Log
			e := newEngine(t, cfg, nil)
			if tc.before != nil {
				tc.before(e)
			}
			e.sink = &log
			at := e.Begin(t0, Request{ID: "r1", Route: "chat"})
			when := tc.steps(e, at)
			at.Cancel(when)

			var kinds []events.Kind
			var ends []events.Event
			var end events.Event
			for _, ev := range log.Events() {
				if ev.RequestID != "r1" || ev.Kind == events.BreakerTransition {
					continue
				}
				kinds = append(kinds, ev.Kind)
				switch ev.Kind {
				case events.AttemptEnd:
					ends = append(ends, ev)
				case events.RequestEnd:
					end = ev
				}
			}
			require.Equal(t, tc.wantKinds, kinds)
			require.Len(t, ends, tc.attempts)
			if tc.canceled {
				last := ends[len(ends)-1]
				require.Equal(t, string(ClientCanceled), last.Class)
				require.Equal(t, a, last.Target)
				require.Equal(t, when.Sub(t0), last.Duration)
			}
			require.Equal(t, events.OutcomeFailed, end.Outcome)
			require.Equal(t, string(ClientCanceled), end.Class)
			require.Equal(t, 499, end.Status)
			require.Equal(t, when, end.Time)

			d := at.Next(when.Add(time.Hour))
			require.Equal(t, Fail, d.Kind, "a canceled request is final")
			require.Equal(t, "client_canceled", d.Err.Code)

			st := breakerOf(e, a)
			require.Equal(t, tc.breaker, st.Breaker, "the cancel is not held against the target")
			if tc.breaker == Closed {
				require.Equal(t, tc.failures, st.Failures)
				require.Equal(t, tc.failures, st.Samples, "a cancel is not even a success sample")
			}
			if tc.trialFree {
				require.Equal(t, a, e.Begin(when, Request{Route: "chat"}).Next(when).Target.Key(), "the trial slot is free again")
			}

			// Cancelling twice, or after the end, emits nothing more.
			n := log.Len()
			at.Cancel(when.Add(time.Second))
			at.Observe(when.Add(time.Second), Outcome{Class: OK})
			require.Equal(t, n, log.Len())
		})
	}
}

// TestCancelAfterDone: a request already served is not turned into a failure.
func TestCancelAfterDone(t *testing.T) {
	var log events.Log
	e := newEngine(t, oneRoute(tgt("a:m1")), &log)
	at := e.Begin(t0, Request{Route: "chat"})
	require.Equal(t, Send, at.Next(t0).Kind)
	at.Observe(t0, Outcome{Class: OK})
	n := log.Len()
	at.Cancel(t0)
	require.Equal(t, n, log.Len())
	require.Equal(t, Done, at.Next(t0).Kind)
}
