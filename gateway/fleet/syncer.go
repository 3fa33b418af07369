package fleet

import (
	"encoding/json"
	"strings"
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
//   - A demotion e makes (ShareDemotion) is written as the record Demoted
//     returns, while Up.
//   - Every share interval, when Sharing, the driver reports the budgets
//     Budgets returns (Tally.Report), loads the records named HealthNames
//     (Records.LoadMany), and hands the fleet's budget counts (the
//     report's Others) and the demotions Demotions returns to Learn, as
//     the answers arrive.
//
// Up may be called from any goroutine; the other methods from one
// goroutine at a time.
type Syncer struct {
	member   string
	up       atomic.Bool
	claimed  Claims
	healthAt map[string]int64 // target → the newest fleet demotion applied (Unix ms)
}

// NewSyncer returns the syncer of the replica named member in the store's
// reports and records; it follows the store (Up).
func NewSyncer(member string) *Syncer {
	s := &Syncer{member: member, claimed: Claims{}, healthAt: map[string]int64{}}
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

// ShareDemotion reports whether event ev is a demotion the replica made
// itself (a health.change to unhealthy whose reason was not learned from
// the fleet), which the fleet should learn, and returns it.
func ShareDemotion(ev events.Event) (Demotion, bool) {
	if ev.Kind != events.HealthChange || ev.To != string(policy.Unhealthy) || strings.HasPrefix(ev.Reason, FleetReason) {
		return Demotion{}, false
	}
	return Demotion{Key: ev.Target, Reason: ev.Reason, At: ev.Time}, true
}

// Record is a store record to write (Records.Put): its name, value and
// how long the store keeps it.
type Record struct {
	Name  string
	Value []byte
	TTL   time.Duration
}

// Demoted returns the record of the replica's demotion d, kept for e's
// health window; false for a demotion learned from the fleet (reason
// starting with FleetReason), which is not written.
func (s *Syncer) Demoted(e *policy.Engine, d Demotion) (Record, bool) {
	if strings.HasPrefix(d.Reason, FleetReason) {
		return Record{}, false
	}
	b, _ := json.Marshal(healthRecord{Key: d.Key, Member: s.member, Reason: d.Reason, At: d.At.UnixMilli()})
	return Record{Name: "health:" + d.Key, Value: b, TTL: e.Settings().Health.Window.D()}, true
}

// HealthNames returns the names of the demotion records of e's targets,
// read in one round trip every share interval.
func (s *Syncer) HealthNames(e *policy.Engine) []string {
	keys := e.Keys()
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = "health:" + k
	}
	return names
}

// Demotions returns, of the records vals (as read for HealthNames; nil
// for a missing one), the demotions another replica made since the last
// call: each demotion is returned once.
func (s *Syncer) Demotions(vals [][]byte) []Demotion {
	var out []Demotion
	for _, v := range vals {
		var h healthRecord
		if v == nil || json.Unmarshal(v, &h) != nil || h.Member == s.member || h.At <= s.healthAt[h.Key] {
			continue
		}
		s.healthAt[h.Key] = h.At
		out = append(out, Demotion{Key: h.Key, Reason: h.Reason, At: time.UnixMilli(h.At)})
	}
	return out
}

// Sharing reports whether a share interval shares e's counters and health
// now: the replica follows the store and e is in the fleet's mode.
func (s *Syncer) Sharing(e *policy.Engine) bool { return s.Up() && e.Shared() }

// BudgetReport is a share's report of a replica's retry budgets per route,
// for Tally.Report(ctx, Member, now, Window, Rows): its own counts as
// snapshots, not increments, so a lost or repeated report changes nothing.
type BudgetReport struct {
	Member string
	Window time.Duration // the budget window
	Rows   []Row         // "budget:ROUTE": requests, retries
	routes []policy.RouteBudget
}

// Budgets returns the report of e's retry budgets as of now.
func (s *Syncer) Budgets(e *policy.Engine, now time.Time) BudgetReport {
	bs := e.Budgets(now)
	rows := make([]Row, len(bs))
	for i, b := range bs {
		rows[i] = Row{Key: "budget:" + b.Route, Vals: []float64{b.Requests, b.Retries}}
	}
	return BudgetReport{Member: s.member, Window: e.Settings().RetryBudget.Window.D(), Rows: rows, routes: bs}
}

// Others returns the other members' counts per route, from the store's
// answer to the report (one row per row of Rows), for
// policy.Engine.SetFleetBudget.
func (r BudgetReport) Others(answer []Row) []policy.RouteBudget {
	for i, o := range answer {
		r.routes[i].Requests, r.routes[i].Retries = o.Vals[0], o.Vals[1]
	}
	return r.routes
}

// Learn applies what a share learned from the fleet to e at now: the other
// replicas' budget counts per route (policy.Engine.SetFleetBudget) and
// the demotions they made (Demotion.Apply), unless the replica fell back
// to local state since the share.
func (s *Syncer) Learn(e *policy.Engine, now time.Time, budgets []policy.RouteBudget, demotions []Demotion) {
	if !s.Up() {
		return
	}
	for _, b := range budgets {
		_ = e.SetFleetBudget(b)
	}
	for _, d := range demotions {
		_ = d.Apply(e, now)
	}
}
