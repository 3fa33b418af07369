package fleet

import (
	"slices"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/gateway/policy"
)

// BenchmarkPropagation measures how long a breaker opened on replica A
// takes to be obeyed by replica B, both on one redis-server on loopback
// (A's proposal, the script, the publish, B's subscription and Apply):
//
//	go test -run '^$' -bench Propagation -benchtime 500x ./gateway/fleet
//
// Each iteration opens the breaker on A, waits until B's engine holds it
// open, then closes it through the store and waits until both follow. It
// reports the distribution of the first wait (p50-µs, p99-µs, max-µs) and
// the store calls of a transition (store-calls/op: A's proposal; the
// closing is the benchmark's own and not counted).
func BenchmarkPropagation(b *testing.B) {
	srv := startRedis(b)
	store, err := NewRedis(srv.url(), RedisOptions{Prefix: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	clk := &clock{now: t0}
	rs := newReplicas(b, 2, store, clk)
	a, r := rs[0], rs[1]
	ctx := b.Context()
	// wait waits for the replica's next transition to state.
	wait := func(x *replica, state policy.BreakerState) {
		timeout := time.After(5 * time.Second)
		for {
			select {
			case e := <-x.transitions:
				if e.To == string(state) {
					return
				}
			case <-timeout:
				b.Fatal("no propagation within 5s")
			}
		}
	}
	var lat []time.Duration
	var calls uint64
	b.ResetTimer()
	for b.Loop() {
		before := store.Calls()
		start := time.Now()
		if err := a.e.Signal(clk.Now(), "a:m", "bench", policy.Trip); err != nil {
			b.Fatal(err)
		}
		wait(r, policy.Open)
		lat = append(lat, time.Since(start))
		b.StopTimer()
		a.f.Sync()
		calls += store.Calls() - before
		wait(a, policy.Open)
		u, _ := a.e.Breaker("a:m")
		if _, err := store.Propose(ctx, policy.Proposal{Key: "a:m", Base: u.Version, State: policy.Closed, Reason: "bench"}, 1); err != nil {
			b.Fatal(err)
		}
		wait(a, policy.Closed)
		wait(r, policy.Closed)
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Microsecond) }
	b.ReportMetric(q(.5), "p50-µs")
	b.ReportMetric(q(.99), "p99-µs")
	b.ReportMetric(q(1), "max-µs")
	b.ReportMetric(float64(calls)/float64(len(lat)), "store-calls/op")
}
