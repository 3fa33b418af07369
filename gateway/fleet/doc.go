// Package fleet shares a gateway's circuit breakers across a fleet of
// replicas through a store: Redis (Redis 7 protocol, so Valkey works too)
// or, for one process and for tests, Memory.
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
// The hot path never waits for the store: while a target is calm the core
// reads only local state, and a transition made locally stands until the
// store answers. When a store call fails or times out the replica follows
// its local breakers (a state.degraded event, OK false) and resyncs when
// the store answers again: the store's newer states win, local changes made
// meanwhile are proposed (state.degraded, OK true).
//
// Client library: github.com/redis/go-redis/v9. rueidis' client-side
// caching would serve reads without a round trip, but the core never reads
// the store on the request path at all — it is told of changes by pub/sub
// — so that advantage does not apply here, and go-redis is the more widely
// used client with the simpler script API.
package fleet
