package fleet

import (
	"sync/atomic"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// Syncer holds the sharing decisions of one replica of a fleet, with no
// I/O: it calls no store, starts no goroutine and reads no clock. Its
// driver performs the store calls and hands it their results and the
// time: Fleet drives one over a Store (Redis), the game-day simulator one
// per simulated replica over its in-sim store, in virtual time. So both
// engines share breakers the same way.
//
// The driver's contract, for the replica's decision core e:
//
//   - A proposal or trial result of e (policy.FleetSink) is sent to the
//     store only while Up; otherwise local state rules and the resync
//     proposes what matters.
//   - Every store state that reaches the replica (a call's answer, or a
//     change another replica published) goes through Apply; when it
//     answers true, the driver claims the version's half-open trials
//     (Store.Claim with HalfOpen(e)) and hands the answer to Claimed.
//   - A failed or timed-out store call goes to Degrade, which falls back
//     to local breakers; the driver emits the event it returns.
//   - When the store answers again, the driver reads the states of e.Keys()
//     and hands them to Resync, then applies each state (Apply, as above),
//     sends each proposal Resync returned, and emits what Resynced
//     returns.
//
// Up may be called from any goroutine; the other methods from one
// goroutine at a time.
type Syncer struct {
	up      atomic.Bool
	claimed Claims
}

// NewSyncer returns a syncer that follows the store (Up).
func NewSyncer() *Syncer {
	s := &Syncer{claimed: Claims{}}
	s.up.Store(true)
	return s
}

// Up reports whether the replica follows the store: false from Degrade
// until Resync.
func (s *Syncer) Up() bool { return s.up.Load() }

// HalfOpen is the half-open trials e asks the store for when it proposes
// or claims (policy.breaker.half_open_requests; a reload may change it).
func HalfOpen(e *policy.Engine) int { return e.Settings().Breaker.HalfOpenRequests }

// Apply applies a store state u to e at now, unless e follows no store
// (policy.Engine.Shared) or does not use u's key. It reports whether the
// replica should claim its share of u's half-open trials: u is half-open
// at a version it has not claimed yet (each version is claimed once).
func (s *Syncer) Apply(e *policy.Engine, now time.Time, u policy.BreakerUpdate) (claim bool) {
	if !e.Shared() {
		return false
	}
	if _, err := e.Apply(now, u); err != nil {
		return false // a key this replica's routes don't use
	}
	return s.claimed.First(u)
}

// Granted returns u with the n trials a claim of u granted, and whether
// there are any to apply (through Apply, at once or when the answer
// arrives).
func Granted(u policy.BreakerUpdate, n int) (policy.BreakerUpdate, bool) {
	u.Grant = n
	return u, n > 0
}

// Degrade falls back to local breakers after a store call failed for
// reason. It returns the state.degraded event to emit, and false when the
// replica had already fallen back.
func (s *Syncer) Degrade(e *policy.Engine, now time.Time, reason string) (events.Event, bool) {
	if !s.up.Swap(false) {
		return events.Event{}, false
	}
	e.SetShared(now, false)
	return events.Event{Time: now, Kind: events.StateDegraded, Reason: reason}, true
}

// Resync follows the store again, whose states of e's breakers are
// states: it forgets the claims, makes e follow the store, and returns
// what the replica proposes (see the package function Resync). It reports
// whether the replica had fallen back (for Resynced).
func (s *Syncer) Resync(e *policy.Engine, now time.Time, states []policy.BreakerUpdate) (props []policy.Proposal, was bool) {
	props = Resync(e, states, now)
	was = s.up.Swap(true)
	clear(s.claimed)
	e.SetShared(now, true)
	return props, was
}

// Resynced returns the state.degraded event (OK) that ends a fall-back,
// once a resync's states are applied and its proposals sent: none when
// the replica had not fallen back (was, from Resync) or fell back again
// meanwhile.
func (s *Syncer) Resynced(now time.Time, was bool) (events.Event, bool) {
	if was || !s.Up() {
		return events.Event{}, false
	}
	return events.Event{Time: now, Kind: events.StateDegraded, OK: true, Reason: "resynced"}, true
}

// Resync is what a replica coming back to the store proposes, in the
// gateway and the simulator alike: where the store's state of a breaker is
// newer than the replica's it wins (apply it), and where the replica's
// changed while the store was away it is proposed on the store's version.
func Resync(e *policy.Engine, states []policy.BreakerUpdate, now time.Time) []policy.Proposal {
	var props []policy.Proposal
	for _, st := range states {
		local, _ := e.Breaker(st.Key)
		if st.Version <= local.Version && st.State != local.State {
			props = append(props, policy.Proposal{Key: st.Key, Base: st.Version, State: local.State, OpenUntil: local.OpenUntil, Reason: "resync", Time: now})
		}
	}
	return props
}

// Claims remembers, per breaker key, the half-open version a replica
// claimed its share of trials for: each half-open version is claimed once
// (a resync forgets them all).
type Claims map[string]uint64

// First reports whether u, a store state the replica just applied, opens
// trials it has not claimed yet (half-open, a version not claimed), and
// records the claim.
func (c Claims) First(u policy.BreakerUpdate) bool {
	if u.State != policy.HalfOpen || c[u.Key] == u.Version {
		return false
	}
	c[u.Key] = u.Version
	return true
}
