package policy

import (
	"fmt"
	"slices"
	"time"

	"github.com/brownout-dev/brownout/events"
)

// A fleet of gateways shares its breakers through a store (see the
// gateway/fleet package). The core performs no I/O for that either: a
// shared engine (Options.Fleet set) hands what the store must hear to its
// FleetSink — a local transition proposed on the store's version it was
// made from, a half-open trial's outcome — and takes the store's verdicts
// back with Apply. Until the store answers, the local transition stands,
// so a slow store never holds a request.
//
// The rules a shared breaker adds to the local ones:
//   - a higher store version supersedes the local state (Apply); an update
//     with a version the breaker has already seen changes nothing but the
//     trials granted for it;
//   - half-open, it admits only the trials the store granted this replica
//     (BreakerUpdate.Grant), so the fleet as a whole admits at most
//     Breaker.HalfOpenRequests; it never closes by itself: the store
//     closes it when that many trials succeeded across the fleet;
//   - a half-open state that brings no verdict within Breaker.TrialTimeout
//     re-opens (and proposes so), whoever held the trials;
//   - SetShared(false) falls back to local breakers (the store is down);
//     SetShared(true) follows the store again once the caller has resynced.

// BreakerUpdate is a breaker's state as a fleet's store holds it.
type BreakerUpdate struct {
	Key   string       `json:"key"`
	State BreakerState `json:"state"`
	// Version is the store's version of the state; a higher one supersedes.
	Version uint64 `json:"version"`
	// OpenUntil is when an open breaker half-opens, fleet-wide.
	OpenUntil time.Time `json:"open_until,omitzero"`
	// Grant is the number of half-open trials granted to this replica in
	// this version (set by the caller from its claim, not by the store).
	Grant  int    `json:"grant,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Proposal is a local breaker transition for the store: made on the state
// of version Base, so the store accepts it only if that is still its
// version.
type Proposal struct {
	Key   string
	Base  uint64
	State BreakerState
	// OpenUntil is when the breaker half-opens, for State Open.
	OpenUntil time.Time
	Reason    string
	Time      time.Time
}

// FleetSink receives what a shared engine tells the fleet's store. Its
// methods are called outside every lock of the engine, in the order the
// engine made the changes, and must not block (queue, then send).
type FleetSink interface {
	Propose(p Proposal)
	// TrialResult reports a successful half-open trial admitted under the
	// store's version (a failed one is a Proposal to open).
	TrialResult(key string, version uint64, ok bool)
}

// fleetMsg is a message for the FleetSink collected under a lock.
type fleetMsg struct {
	prop  Proposal
	trial bool // a TrialResult, not a Proposal
}

// Apply brings a shared breaker to the store's state u and reports
// whether anything changed. A state change is a transition of its own
// (a new generation and a breaker.transition event whose reason starts
// with "fleet:"). It returns ErrUnknownTarget for a key no route uses.
func (e *Engine) Apply(now time.Time, u BreakerUpdate) (bool, error) {
	t := e.targets[u.Key]
	if t == nil {
		return false, fmt.Errorf("%w %q", ErrUnknownTarget, u.Key)
	}
	var p pending
	t.mu.Lock()
	t.advance(now, &p)
	b := &t.br
	changed := false
	switch {
	case u.Version > b.version:
		if u.State != b.state {
			from := b.state
			b.to(now, u.State)
			t.setCalm()
			reason := "fleet"
			if u.Reason != "" {
				reason = "fleet:" + u.Reason
			}
			p.add(events.Event{Time: now, Kind: events.BreakerTransition, Target: t.key, From: string(from), To: string(u.State), Reason: reason})
		}
		b.version = u.Version
		if u.State == Open && !u.OpenUntil.IsZero() {
			b.openUntil = u.OpenUntil
		}
		b.grant = max(b.grant, u.Grant)
		changed = true
	case u.Version == b.version && u.State == b.state && u.Grant > b.grant:
		b.grant = u.Grant
		changed = true
	}
	t.mu.Unlock()
	p.flush(e.sink)
	return changed, nil
}

// Breaker returns a target's breaker as the store would hold it: its
// state, the store version it follows and when it half-opens. ok is false
// for a key no route uses.
func (e *Engine) Breaker(key string) (u BreakerUpdate, ok bool) {
	t := e.targets[key]
	if t == nil {
		return u, false
	}
	t.mu.Lock()
	b := &t.br
	u = BreakerUpdate{Key: key, State: b.state, Version: b.version, Grant: b.grant}
	if b.state == Open {
		u.OpenUntil = b.openUntil
	}
	t.mu.Unlock()
	return u, true
}

// Shared reports whether the engine's breakers follow the fleet's store.
func (e *Engine) Shared() bool { return e.fleet != nil && e.shared.Load() }

// SetShared switches the breakers between following the fleet's store
// (true) and local rules (false: the store is unavailable). It does
// nothing on an engine without Options.Fleet.
func (e *Engine) SetShared(now time.Time, shared bool) {
	if e.fleet == nil {
		return
	}
	e.shared.Store(shared)
	if !shared {
		for _, r := range e.rlist {
			r.mu.Lock()
			r.fleetReq, r.fleetRet = 0, 0
			r.mu.Unlock()
		}
	}
	for _, t := range e.order {
		var p pending
		t.mu.Lock()
		t.advance(now, &p)
		t.br.shared = shared
		t.mu.Unlock()
		p.flush(e.sink)
	}
}

// Keys returns the engine's target keys ("provider:model"), sorted.
func (e *Engine) Keys() []string { return slices.Clone(e.keys) }

// A fleet shares its routes' retry budgets too, without a store call on
// the request path: each replica counts its own requests and retries in
// its window, reports them to the store now and then (Budgets), and is
// told what the rest of the fleet counted (SetFleetBudget). A retry is
// allowed when the fleet's retries, plus one, stay within the budget the
// fleet's requests allow — the others' counts as of the last report.

// RouteBudget is one route's retry budget counts over its window.
type RouteBudget struct {
	Route             string
	Requests, Retries float64
}

// Budgets returns this replica's own budget counts per route over the
// window ending at now, in configuration order.
func (e *Engine) Budgets(now time.Time) []RouteBudget {
	out := make([]RouteBudget, len(e.rlist))
	for i, r := range e.rlist {
		r.mu.Lock()
		req, ret := r.budget.sums(now)
		r.mu.Unlock()
		out[i] = RouteBudget{Route: r.name, Requests: req, Retries: ret}
	}
	return out
}

// SetFleetBudget sets what the other replicas of the fleet counted on a
// route's budget window; the route's retries are then allowed by the
// fleet's counts (see Budgets). It does nothing on an engine that does not
// follow a fleet's store right now; SetShared(false) forgets the counts.
func (e *Engine) SetFleetBudget(b RouteBudget) error {
	r := e.route(b.Route)
	if r == nil {
		return fmt.Errorf("%w %q", ErrUnknownRoute, b.Route)
	}
	if !e.Shared() {
		return nil
	}
	r.mu.Lock()
	r.fleetReq, r.fleetRet = max(b.Requests, 0), max(b.Retries, 0)
	r.mu.Unlock()
	return nil
}
