package fleet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/clients"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/yamlfile"
)

// clock is a settable clock shared by a test's replicas.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// replica is one gateway's decision core and its fleet.
type replica struct {
	e   *policy.Engine
	f   *Fleet
	log *events.Log
	up  atomic.Bool
	// clients is the replica's client table (nil: none).
	clients *clients.Table
	// transitions receives the engine's breaker transitions, when there is
	// room (benchmarks wait on it).
	transitions chan events.Event
}

func fleetConfig() policy.Config {
	d := func(s string) yamlfile.Duration { v, _ := time.ParseDuration(s); return yamlfile.Duration(v) }
	cfg := policy.Config{Routes: []policy.Route{{Name: "chat", Targets: []policy.Target{
		{Provider: "a", Model: "m", Retry: policy.Retry{Attempts: 1}},
		{Provider: "b", Model: "m", Priority: 1, Retry: policy.Retry{Attempts: 1}},
	}}}}
	cfg.Policy.Health.Failures = 1000
	cfg.Policy.Breaker.HalfOpenRequests = 2
	cfg.Policy.Breaker.OpenFor = d("10s")
	cfg.Routes[0].Targets[0].Retry.Attempts = 2
	cfg.Policy.Breaker.MinSamples = 1000
	return cfg
}

// newReplicas starts n replicas on store, following clk.
func newReplicas(t testing.TB, n int, store Store, clk *clock) []*replica {
	t.Helper()
	rs := make([]*replica, n)
	for i := range rs {
		r := &replica{log: &events.Log{}, transitions: make(chan events.Event, 16)}
		r.up.Store(true)
		sink := events.Tee(r.log, events.SinkFunc(func(e events.Event) {
			if d, ok := ShareDemotion(e); ok {
				r.f.Demoted(d.Key, d.Reason, d.At) // as the gateway does
			}
			if e.Kind == events.BreakerTransition {
				select {
				case r.transitions <- e:
				default:
				}
			}
		}))
		r.f = New(store, func() *policy.Engine { return r.e }, Options{Timeout: time.Second, Retry: 20 * time.Millisecond, Events: r.log, Now: clk.Now, Up: r.up.Store,
			Share: time.Hour, Member: fmt.Sprintf("r%d", i), Clients: func() *clients.Table { return r.clients }})
		e, err := policy.New(fleetConfig(), policy.Options{Rand: rand.New(rand.NewPCG(uint64(i), 1)), Events: sink, Fleet: r.f})
		require.NoError(t, err)
		r.e = e
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.f.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		rs[i] = r
	}
	return rs
}

// send runs one request on r at now with outcome o and returns the target.
func send(r *replica, now time.Time, o policy.Outcome) string {
	a := r.e.Begin(now, policy.Request{Route: "chat"})
	d := a.Next(now)
	if d.Kind != policy.Send {
		return ""
	}
	a.Observe(now, o)
	return d.Target.Key()
}

var okOutcome = policy.Outcome{Class: policy.OK, Status: 200}

func breakerState(r *replica, key string) policy.BreakerState {
	u, _ := r.e.Breaker(key)
	return u.State
}

func TestFleetSharesBreakers(t *testing.T) {
	stores(t, func(t *testing.T, store Store) {
		clk := &clock{now: t0}
		rs := newReplicas(t, 3, store, clk)
		a, b, c := rs[0], rs[1], rs[2]

		// Replica A trips a:m; B and C obey.
		start := time.Now()
		require.NoError(t, a.e.Signal(t0, "a:m", "probe_failures", policy.Trip))
		require.Eventually(t, func() bool {
			return breakerState(b, "a:m") == policy.Open && breakerState(c, "a:m") == policy.Open
		}, 5*time.Second, time.Millisecond)
		t.Logf("propagation A → B, C: %v", time.Since(start))
		require.Equal(t, "b:m", send(b, t0, okOutcome), "B sends to the fallback")
		require.Equal(t, "b:m", send(c, t0, okOutcome))

		// Open for 10 s fleet-wide: every replica half-opens at once.
		half := t0.Add(10 * time.Second)
		clk.Set(half)
		for _, r := range rs {
			r.e.Tick(half)
		}
		for _, r := range rs {
			r.f.Sync()
		}
		require.Eventually(t, func() bool {
			for _, r := range rs {
				r.f.Sync()
				if breakerState(r, "a:m") != policy.HalfOpen {
					return false
				}
			}
			return true
		}, 5*time.Second, time.Millisecond)

		// Every replica tries the primary several times while the trials
		// are in flight: two trials in all.
		var trials []*policy.Attempt
		for range 3 {
			for _, r := range rs {
				a := r.e.Begin(half, policy.Request{Route: "chat"})
				if d := a.Next(half); d.Kind == policy.Send && d.Target.Key() == "a:m" {
					trials = append(trials, a)
				}
			}
		}
		require.Len(t, trials, 2, "the fleet admits half_open_requests trials, not one set per replica")
		for _, a := range trials {
			a.Observe(half, okOutcome)
		}

		// Both succeeded: the store closes the breaker for everyone.
		require.Eventually(t, func() bool {
			for _, r := range rs {
				r.f.Sync()
				if breakerState(r, "a:m") != policy.Closed {
					return false
				}
			}
			return true
		}, 5*time.Second, time.Millisecond)
		for _, r := range rs {
			require.Equal(t, "a:m", send(r, half, okOutcome))
		}
	})
}

// redisReplicas starts a redis-server and two replicas on it.
func redisReplicas(t *testing.T) (redisServer, *Redis, []*replica) {
	srv := startRedis(t)
	store, err := NewRedis(srv.url(), RedisOptions{Prefix: "t"})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	return srv, store, newReplicas(t, 2, store, &clock{now: t0})
}

func TestFleetStoreDownFallsBackAndResyncs(t *testing.T) {
	srv, _, rs := redisReplicas(t)
	a, b := rs[0], rs[1]

	srv.stop() // the store dies
	// A trips its breaker: the proposal fails, A falls back to local state.
	require.NoError(t, a.e.Signal(t0, "a:m", "probe_failures", policy.Trip))
	require.Eventually(t, func() bool { return !a.up.Load() }, 5*time.Second, time.Millisecond)
	require.False(t, a.e.Shared())
	deg := kindsOf(a.log, events.StateDegraded)
	require.NotEmpty(t, deg)
	require.False(t, deg[0].OK)
	// Requests are still decided, by local state: A avoids a:m, B (which
	// never heard) still uses it.
	require.Equal(t, "b:m", send(a, t0, okOutcome))
	require.Equal(t, "a:m", send(b, t0, okOutcome))

	srv.start() // the store is back (empty: it persisted nothing)
	require.Eventually(t, func() bool { return a.up.Load() && a.e.Shared() }, 10*time.Second, 5*time.Millisecond, "%v %v %v", a.up.Load(), a.e.Shared(), kindsOf(a.log, events.StateDegraded))
	// A's open breaker, newer than the store's (empty) state, is proposed
	// on resync and B obeys.
	require.Eventually(t, func() bool { return breakerState(b, "a:m") == policy.Open }, 10*time.Second, 5*time.Millisecond)
	deg = kindsOf(a.log, events.StateDegraded)
	require.True(t, deg[len(deg)-1].OK, "state.degraded ok: resynced")
}

func kindsOf(l *events.Log, k events.Kind) []events.Event {
	var out []events.Event
	for _, e := range l.Events() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// TestFleetStoreRestartKeepsSharing: a restarted store has lost its
// versions while the replicas keep theirs; the next transition must still
// reach the fleet.
func TestFleetStoreRestartKeepsSharing(t *testing.T) {
	srv, store, rs := redisReplicas(t)
	a, b := rs[0], rs[1]
	bothAt := func(state policy.BreakerState, version uint64) func() bool {
		return func() bool {
			for _, r := range rs {
				r.f.Sync()
				if u, _ := r.e.Breaker("a:m"); u.State != state || u.Version != version {
					return false
				}
			}
			return true
		}
	}
	require.NoError(t, a.e.Signal(t0, "a:m", "probe_failures", policy.Trip))
	require.Eventually(t, bothAt(policy.Open, 1), 5*time.Second, time.Millisecond)
	_, err := store.Propose(t.Context(), policy.Proposal{Key: "a:m", Base: 1, State: policy.Closed, Reason: "test"}, 2)
	require.NoError(t, err)
	require.Eventually(t, bothAt(policy.Closed, 2), 5*time.Second, time.Millisecond)

	srv.stop()
	require.Eventually(t, func() bool { return !a.up.Load() && !b.up.Load() }, 10*time.Second, 5*time.Millisecond)
	srv.start() // empty: version 0
	require.Eventually(t, func() bool { return a.up.Load() && b.up.Load() }, 10*time.Second, 5*time.Millisecond)

	require.NoError(t, a.e.Signal(t0, "a:m", "probe_failures", policy.Trip))
	require.Eventually(t, bothAt(policy.Open, 3), 10*time.Second, 5*time.Millisecond, "B obeys A's breaker after the store's restart")
}
