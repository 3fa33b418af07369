package fleet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/clients"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// retried runs one request on r at now whose first attempt on the primary
// fails, and reports whether it was retried there (the budget allowed it).
func retried(r *replica, now time.Time) bool {
	a := r.e.Begin(now, policy.Request{Route: "chat"})
	sends := 0
	for range 10 {
		d := a.Next(now)
		switch d.Kind {
		case policy.Send:
			o := okOutcome
			if d.Target.Key() == "a:m" {
				sends++
				o = policy.Outcome{Class: policy.ServerError, Status: 500}
			}
			a.Observe(now, o)
		case policy.Wait:
			now = d.Until
		default:
			return sends == 2
		}
	}
	panic("request did not end")
}

func TestFleetSharesRetryBudget(t *testing.T) {
	stores(t, func(t *testing.T, store Store) {
		clk := &clock{now: t0}
		rs := newReplicas(t, 3, store, clk)
		a, b, c := rs[0], rs[1], rs[2]
		ctx := t.Context()
		// The budget's floor is 3 retries per window, fleet-wide: A uses two, B one.
		require.True(t, retried(a, t0))
		require.True(t, retried(a, t0))
		require.True(t, retried(b, t0))
		for _, r := range rs {
			r.f.share(ctx)
		}
		for _, r := range rs {
			r.f.share(ctx) // everyone has heard everyone
		}
		require.False(t, retried(c, t0), "C has not retried, but the fleet spent the budget")
		require.False(t, retried(a, t0))
		require.Equal(t, []policy.RouteBudget{{Route: "chat", Requests: 1, Retries: 0}}, c.e.Budgets(t0), "C's own counts")

		// A window later the reports have aged out: retries again.
		later := t0.Add(11 * time.Second)
		clk.Set(later)
		for _, r := range rs {
			r.f.share(ctx)
		}
		require.True(t, retried(c, later))
	})
}

func TestFleetSharesClientLimits(t *testing.T) {
	stores(t, func(t *testing.T, store Store) {
		clk := &clock{now: t0}
		rs := newReplicas(t, 3, store, clk)
		for _, r := range rs {
			tb, err := clients.New([]clients.Client{{ID: "team", Digest: clients.Digest("k"), Limits: clients.Limits{RequestsPerMinute: 6, Budget: 1}}})
			require.NoError(t, err)
			r.clients = tb
		}
		acct := func(r *replica) *clients.Account { return r.clients.Get("team") }
		admit := func(r *replica) clients.Verdict {
			d, _ := acct(r).Admit(clk.Now(), clients.Ask{Route: "chat"})
			return d.Verdict
		}
		ctx := t.Context()
		for range 4 {
			require.Equal(t, clients.Allow, admit(rs[0]))
		}
		acct(rs[1]).Charge(t0, 100, 0.7)
		for _, r := range rs {
			r.f.share(ctx)
		}
		require.Equal(t, clients.Allow, admit(rs[1]))
		require.Equal(t, clients.Allow, admit(rs[1]))
		require.Equal(t, clients.RateLimited, admit(rs[1]), "six a minute across the fleet")
		rs[1].f.share(ctx)
		rs[2].f.share(ctx)
		require.Equal(t, clients.RateLimited, admit(rs[2]), "C admitted none, the fleet six")
		require.InDelta(t, 0.7, acct(rs[2]).Usage(t0).Spent, 1e-9, "C knows B's spend")

		// The spend passes the budget through two replicas' charges.
		acct(rs[2]).Charge(t0, 0, 0.4)
		rs[2].f.share(ctx)
		rs[0].f.share(ctx)
		later := t0.Add(2 * time.Minute) // the minute's requests are back
		clk.Set(later)
		require.Equal(t, clients.OverBudget, admit(rs[0]), "A never spent, the fleet spent 1.1 of 1")
	})
}

func healthOf(r *replica, key string) (policy.HealthState, string) {
	for _, ts := range r.e.State().Targets {
		if ts.Key == key {
			return ts.Health, ts.Reason
		}
	}
	return "", ""
}

func TestFleetSharesHealth(t *testing.T) {
	stores(t, func(t *testing.T, store Store) {
		clk := &clock{now: t0}
		rs := newReplicas(t, 3, store, clk)
		a, b, c := rs[0], rs[1], rs[2]
		ctx := t.Context()
		require.NoError(t, a.e.Signal(t0, "a:m", "detector_truncation", policy.Demote))
		a.f.Sync() // the demotion is written
		b.f.share(ctx)
		h, reason := healthOf(b, "a:m")
		require.Equal(t, policy.Unhealthy, h)
		require.Equal(t, "fleet:detector_truncation", reason)
		require.Equal(t, "b:m", send(b, t0, okOutcome), "B avoids the target A demoted")
		b.f.Sync()
		c.f.share(ctx)
		_, reason = healthOf(c, "a:m")
		require.Equal(t, "fleet:detector_truncation", reason, "C learns A's demotion, not B's echo")

		// Applied once: a later share does not demote again after recovery.
		h, _ = healthOf(rs[1], "b:m")
		require.Equal(t, policy.Healthy, h, "other targets untouched")
		n := len(kindsOf(b.log, events.HealthChange))
		b.f.share(ctx)
		require.Len(t, kindsOf(b.log, events.HealthChange), n)
	})
}
