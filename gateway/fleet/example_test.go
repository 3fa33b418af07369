package fleet_test

import (
	"context"
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/gateway/fleet"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// Two replicas share their breakers through one store: a breaker replica A
// opens is open on replica B.
func Example() {
	cfg := policy.Config{Routes: []policy.Route{{Name: "chat", Targets: []policy.Target{
		{Provider: "openai", Model: "gpt-4o"}, {Provider: "anthropic", Model: "claude", Priority: 1},
	}}}}
	store := &fleet.Memory{} // fleet.NewRedis("redis://127.0.0.1:6379/0", ...) for a real fleet
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	replica := func() (*policy.Engine, *fleet.Fleet) {
		var e *policy.Engine
		f := fleet.New(store, func() *policy.Engine { return e }, fleet.Options{})
		e, _ = policy.New(cfg, policy.Options{Fleet: f})
		ready := make(chan struct{})
		go func() { close(ready); _ = f.Run(ctx) }()
		<-ready
		return e, f
	}
	a, fa := replica()
	b, fb := replica()
	time.Sleep(10 * time.Millisecond) // both subscribed

	now := time.Now()
	_ = a.Signal(now, "openai:gpt-4o", "probe_failures", policy.Trip)
	fa.Sync() // A's proposal reached the store...
	fb.Sync() // ...and B applied what the store published
	u, _ := b.Breaker("openai:gpt-4o")
	fmt.Println("on B:", u.State, "version", u.Version)
	// Output: on B: open version 1
}

// Replicas share counters without a store call per request: each reports
// its own counts and learns the sum of the others'.
func ExampleTally() {
	var store fleet.Tally = &fleet.Memory{} // or a *fleet.Redis
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	row := func(requests, retries float64) []fleet.Row {
		return []fleet.Row{{Key: "budget:chat", Vals: []float64{requests, retries}}}
	}
	_, _ = store.Report(ctx, "replica-a", now, 10*time.Second, row(40, 3))
	_, _ = store.Report(ctx, "replica-b", now, 10*time.Second, row(25, 1))
	others, _ := store.Report(ctx, "replica-c", now, 10*time.Second, row(5, 0))
	fmt.Println("the others counted", others[0].Vals)

	totals, _ := store.Add(ctx, []fleet.Row{{Key: "client:team:1", Vals: []float64{1, 420}}})
	totals, _ = store.Add(ctx, []fleet.Row{{Key: "client:team:1", Vals: []float64{2, 80}}})
	fmt.Println("the fleet's totals", totals[0].Vals)
	// Output:
	// the others counted [65 4]
	// the fleet's totals [3 500]
}

// An idempotency record: the first replica to create it leads; the others
// find it and wait for the completed record.
func ExampleRecords() {
	var store fleet.Records = &fleet.Memory{}
	ctx := context.Background()
	_, created, _ := store.Create(ctx, "idem:order-7", []byte("pending:replica-a"), time.Minute)
	fmt.Println("A leads:", created)
	cur, created, _ := store.Create(ctx, "idem:order-7", []byte("pending:replica-b"), time.Minute)
	fmt.Println("B leads:", created, "- it finds", string(cur))
	ok, _ := store.Swap(ctx, "idem:order-7", []byte("pending:replica-a"), []byte("done:200"), 10*time.Minute)
	v, _, _ := store.Load(ctx, "idem:order-7")
	fmt.Println("A completes:", ok, "- B replays", string(v))
	// Output:
	// A leads: true
	// B leads: false - it finds pending:replica-a
	// A completes: true - B replays done:200
}

// outbox is an engine's policy.FleetSink that keeps what the engine
// proposes for the driver to send.
type outbox struct{ props []policy.Proposal }

func (o *outbox) Propose(p policy.Proposal)        { o.props = append(o.props, p) }
func (o *outbox) TrialResult(string, uint64, bool) {}

// A Syncer driven by hand, as the simulator drives one in virtual time:
// the driver makes the store calls and hands the syncer their answers and
// the time; the syncer decides.
func ExampleSyncer() {
	cfg := policy.Config{Routes: []policy.Route{{Name: "chat", Targets: []policy.Target{{Provider: "openai", Model: "gpt-4o"}}}}}
	store := &fleet.Memory{}
	ctx := context.Background()
	out := &outbox{}
	e, _ := policy.New(cfg, policy.Options{Fleet: out})
	sy := fleet.NewSyncer("replica-a")
	now := time.Unix(1_700_000_000, 0)
	send := func() {
		for _, p := range out.props {
			if !sy.Up() {
				continue // local state rules until the resync
			}
			u, _ := store.Propose(ctx, p, fleet.HalfOpen(e))
			sy.Apply(e, now, u)
		}
		out.props = nil
	}

	_ = e.Signal(now, "openai:gpt-4o", "probe_failures", policy.Trip)
	send()
	st, _ := store.Get(ctx, []string{"openai:gpt-4o"})
	fmt.Println("store:", st[0].State, "version", st[0].Version)

	ev, _ := sy.Degrade(e, now, "store call timed out")
	fmt.Println(ev.Kind, ev.OK, ev.Reason)

	// The store answers again: the replica's states meet the store's.
	states, _ := store.Get(ctx, e.Keys())
	props, was := sy.Resync(e, now, states)
	for _, u := range states {
		if sy.Apply(e, now, u) {
			n, _ := store.Claim(ctx, u.Key, u.Version, fleet.HalfOpen(e))
			if g, ok := fleet.Granted(u, n); ok {
				sy.Apply(e, now, g)
			}
		}
	}
	out.props = append(out.props, props...)
	send()
	ev, _ = sy.Resynced(now, was)
	fmt.Println(ev.Kind, ev.OK, ev.Reason, "up:", sy.Up())
	// Output:
	// store: open version 1
	// state.degraded false store call timed out
	// state.degraded true resynced up: true
}
