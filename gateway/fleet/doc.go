// Package fleet shares a gateway's resilience state across a fleet of
// replicas through a store: Redis (Redis 7 protocol, so Valkey works too)
// or, for one process and for tests, Memory. Both implement the same
// contracts (Store for breakers, Tally for counters, Records for records),
// tested by one suite against each.
//
// # Breakers
//
// The decision core (gateway/policy) stays free of I/O: an engine built
// with policy.Options.Fleet hands its local breaker transitions to a Fleet
// as proposals made on the store's version, and a Fleet's goroutine (Run)
// sends them, applies the store's verdicts (policy.Engine.Apply) and every
// change other replicas publish. Transitions are compare-and-set on the
// version in Lua scripts; a half-open breaker admits only the trials the
// store granted this replica, so the whole fleet admits at most
// half_open_requests of them, and the store closes the breaker when all
// succeeded.
//
// # Retry budgets and client limits
//
// Shared without a store call on the request path (see share.go): every
// Options.Share (100ms) the Fleet reports this replica's budget counts per
// route and learns the rest of the fleet's (policy.Engine.SetFleetBudget),
// and adds its clients' requests, tokens and spend to the fleet's totals
// and debits its buckets with the others' use (clients.Account.Merge). A
// replica thus admits by a view of the fleet at most one Share old: the
// fleet may overshoot a limit by what it admits in one interval, never by
// the replica count. Concurrency caps (max_concurrent) stay per replica.
// Spend budgets are the exception that makes a store call on the request
// path: a request of a client with a budget reserves its worst-case cost
// in the store as well (Budgets.Reserve, one round trip at admission and
// one per further attempt), checked atomically against the spend the
// syncs added and the reservations in flight, so the fleet together
// overruns a budget by at most one request's worst case; the sync that
// adds a request's charges takes its reservation out in the same step.
// With the store unavailable a replica admits by its local view.
// Health demotions travel the same way (health.go): a replica that demotes
// a target writes it to the store, the others read it at their next sync
// and demote the target too (reason "fleet:…").
//
// # One syncer, two drivers
//
// What a replica shares and what it takes from the store is decided by a
// Syncer, which does no I/O and reads no clock (like the decision core):
// whether it follows the store, which half-open trials to claim, when to
// fall back and how to resync, which demotions to write and which to
// apply, what budget counts to report. A Fleet drives one over Redis with
// a goroutine and real time; the game-day simulator drives one per
// simulated replica over its in-sim store (Memory) in virtual time, with
// the store's delays and faults. So a simulated fleet shares the way the
// gateway does.
//
// # Records
//
// Idempotency records and cached answers are Records (the gateway's
// idemfleet.go and cachefleet.go): an idempotent request claims its key
// with Create (one round trip) and completes it with Swap (one more, after
// the client has its answer); a duplicate on another replica waits for the
// record and replays it. Cached answers are written off the request path
// and read on a local miss.
//
// # The store down or slow
//
// The hot path never waits for the store: while a target is calm the core
// reads only local state, and a transition made locally stands until the
// store answers. Every store call is bounded by Options.Timeout (100ms).
// When a call fails or times out the replica follows its local state (a
// state.degraded event, OK false) and resyncs when the store answers again:
// the store's newer states win, local changes made meanwhile are proposed
// (state.degraded, OK true), use counted meanwhile is sent. The gateway's
// state.on_store_unavailable says whether it serves meanwhile (local) or
// refuses (fail_closed).
//
// # Figures
//
// Measured on the development machine (2 cores, shared, load average
// 12–15 during the runs, so tails are the machine's as much as ours),
// redis-server 7 on loopback, by BenchmarkPropagation (this package) and
// BenchmarkFleet (package gateway):
//
//   - breaker opened on A, obeyed by B: p50 195–373 µs, p99 0.7–6.8 ms,
//     worst 3.5–31 ms over 3,000 trials in six runs (aim: 50 ms); 1.01–1.03
//     store calls per transition.
//   - success path, state in Redis vs memory: added p50 −11…+11 µs (aim
//     ≤ 20 µs: there is no store call on it), 0.02–0.044 store calls per
//     request (the background syncs, three calls per Share, amortized).
//   - a request with an Idempotency-Key: 2.04–2.07 store calls; added p50
//     0.44–0.55 ms here (each call 65–95 µs p50 alone).
//
// The commands:
//
//	go test -run '^$' -bench Propagation -benchtime 500x -count 3 ./gateway/fleet
//	go test -run '^$' -bench Fleet -benchtime 2000x -count 3 ./gateway
//
// # Client library
//
// github.com/redis/go-redis/v9, chosen over github.com/redis/rueidis by
// BenchmarkClients (internal/clientbench, a module of its own so rueidis
// stays out of go.mod), which runs the operations the fleet makes:
//
//	                    go-redis v9.23        rueidis v1.0.80
//	script (sequential) p50 68–76 µs          p50 110–123 µs
//	get 1 KiB           p50 43–60 µs          p50 91–100 µs
//	script, 16 callers  4.7k–16k calls/s      37k–41k calls/s
//	publish → receive   p50 85–92 µs          p50 54–56 µs, p99 1.7–1.8 ms
//
// The fleet's calls are sequential — one goroutine per replica sends the
// transitions and the syncs; the request path makes none except for
// idempotent requests — and there go-redis is faster at the median.
// rueidis' auto-pipelining wins when many goroutines call at once (2.5–8×),
// which only idempotent traffic in the thousands per second per replica
// would exploit, and its pub/sub median is lower but its tail longer.
// Its client-side caching (server-assisted invalidation) is the feature
// the issue pointed at, but the core never reads the store on the request
// path at all — pub/sub pushes every change — so it saves nothing here.
// Should idempotent traffic dominate, the choice is worth rerunning.
package fleet
