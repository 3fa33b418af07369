package scenarios

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/fleet"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// simReplica is one gateway replica of a simulated game day: its own
// decision core and detectors. With state: redis it is also its engine's
// policy.FleetSink and drives a fleet.Syncer over the simulated store as
// fleet.Fleet drives one over Redis: the syncer decides, the simulator
// performs the store calls in virtual time with the store's delays and
// faults. Proposals and trial results go to the store, the store's answers
// and published changes come back after the propagation delay, half-open
// trials are claimed from the store, and a failed or timed-out call falls
// back to local breakers (state.degraded) until a retry finds the store
// again and resyncs. Every share interval it also shares its retry budgets
// and health demotions (see share).
type simReplica struct {
	m   *sim
	n   int // 1..N in a fleet of N > 1 (stamped on its events); 0 alone
	idx int32
	eng *policy.Engine
	det *evals.Detectors
	// sy decides what it shares (shared state only): whether it follows
	// the store, the half-open trials it claimed, the fleet demotions it
	// applied.
	sy *fleet.Syncer
}

// Emit stamps the replica on its engine's events (events.Sink).
// With a shared store, a demotion it makes is written for the fleet, as
// the gateway's server tells its fleet.Fleet (Demoted).
func (rp *simReplica) Emit(e events.Event) {
	e.Replica = rp.n
	rp.m.Emit(e)
	if rp.m.store == nil {
		return
	}
	if d, ok := fleet.ShareDemotion(e); ok {
		rp.m.fleetTimer(0, fleetItem{kind: fPutHealth, rep: rp.idx, prop: policy.Proposal{Key: d.Key, Reason: d.Reason, Time: d.At}})
	}
}

// Propose implements policy.FleetSink: the call leaves at once (a timer,
// so the engine is never re-entered from its own sink).
func (rp *simReplica) Propose(p policy.Proposal) {
	rp.m.fleetTimer(0, fleetItem{kind: fCall, rep: rp.idx, prop: p})
}

// TrialResult implements policy.FleetSink.
func (rp *simReplica) TrialResult(key string, version uint64, ok bool) {
	if ok {
		rp.m.fleetTimer(0, fleetItem{kind: fCall, rep: rp.idx, prop: policy.Proposal{Key: key, Base: version}, trial: true})
	}
}

// simStore is the fleet's shared store in the simulator: fleet.Memory
// holds the states (the same atomic rules the Redis store keeps), and the
// simulator adds the delays and the faults of store steps.
type simStore struct {
	mem  fleet.Memory
	down bool
	slow time.Duration
	// prop is the propagation delay; timeout the gateway's state.timeout;
	// share the syncer's interval for budgets and health (fleet.Options.Share).
	prop, timeout, share time.Duration
	items                []fleetItem
	free                 []int32
}

// fleetItem is a delayed step of a replica's syncer.
type fleetItem struct {
	kind  uint8
	rep   int32
	trial bool
	prop  policy.Proposal // a proposal; for fPutHealth, the demotion
	u     policy.BreakerUpdate
	// bud and dem are a share's answer (fShared).
	bud []policy.RouteBudget
	dem []fleet.Demotion
}

// fleetItem kinds.
const (
	fCall      uint8 = iota + 1 // a proposal or trial result reaches the store
	fApply                      // a store state reaches the replica
	fDegrade                    // a call failed: fall back to local state
	fRetry                      // try the store again
	fShare                      // every replica shares its budgets and health
	fShared                     // a share's answer reaches the replica
	fPutHealth                  // a demotion is written for the fleet
)

// shareEvery is how often a replica shares its retry budgets and health
// demotions: fleet.Options.Share's default, which the live fleet uses.
const shareEvery = fleet.DefaultShare

// newReplicas builds the gateway's replicas (one engine each).
func (m *sim) newReplicas(seed uint64) error {
	s := m.s
	n := max(s.Gateway.Replicas, 1)
	if s.Gateway.shared() {
		m.store = &simStore{prop: s.Gateway.Propagation.D(), timeout: s.env.storeTimeout, share: shareEvery}
		// Records and reports live in virtual time.
		m.store.mem.Clock = func() time.Time { return m.nowT }
	}
	for i := range n {
		member := "replica-" + strconv.Itoa(i+1)
		rp := &simReplica{m: m, idx: int32(i), sy: fleet.NewSyncer(member)}
		if n > 1 {
			rp.n = i + 1
		}
		eng, err := policy.New(s.env.policy, m.replicaOptions(rp, seed, "policy"))
		if err != nil {
			return err
		}
		rp.eng = eng
		m.reps = append(m.reps, rp)
	}
	m.eng = m.reps[0].eng
	if m.store != nil {
		m.fleetTimer(m.store.share, fleetItem{kind: fShare})
	}
	return nil
}

// replicaOptions are the core's options of a replica: its random source
// (replica 1's is the one of a gateway alone), its event sink and, with a
// shared store, itself as the fleet sink.
func (m *sim) replicaOptions(rp *simReplica, seed uint64, name string) policy.Options {
	if rp.idx > 0 {
		name += "/replica" + strconv.Itoa(int(rp.idx)+1)
	}
	o := policy.Options{Rand: rand.New(rand.NewPCG(seed, seedFor(seed, name))), Events: m}
	if rp.n > 0 {
		o.Events = rp
	}
	if m.store != nil {
		o.Fleet = rp
	}
	return o
}

// replicaOf returns the replica that serves user request n (1-based):
// round robin.
func (m *sim) replicaOf(n int32) *simReplica { return m.reps[int(n-1)%len(m.reps)] }

// fleetTimer schedules a syncer step after d.
func (m *sim) fleetTimer(d time.Duration, it fleetItem) {
	st := m.store
	var slot int32
	if k := len(st.free); k > 0 {
		slot, st.free = st.free[k-1], st.free[:k-1]
		st.items[slot] = it
	} else {
		slot = int32(len(st.items))
		st.items = append(st.items, it)
	}
	m.schedule(m.now+int64(d), tFleet, slot, nil)
}

// fleetStep performs a syncer step (a tFleet timer).
func (m *sim) fleetStep(slot int32) {
	st := m.store
	it := st.items[slot]
	st.items[slot] = fleetItem{}
	st.free = append(st.free, slot)
	rp := m.reps[it.rep]
	switch it.kind {
	case fCall:
		m.storeCall(rp, it.prop, it.trial)
	case fApply:
		m.storeApply(rp, it.u)
	case fDegrade:
		m.degrade(rp, "store call timed out")
	case fRetry:
		m.storeRetry(rp)
	case fShare:
		for _, o := range m.reps {
			m.share(o)
		}
		m.fleetTimer(st.share, fleetItem{kind: fShare})
	case fShared:
		m.shared(rp, it)
	case fPutHealth:
		m.putHealth(rp, it.prop)
	}
}

// storeCall sends a proposal or a trial result to the store and delivers
// the answer: to every replica when the store published a change, to the
// caller otherwise.
func (m *sim) storeCall(rp *simReplica, p policy.Proposal, trial bool) {
	st := m.store
	if !rp.sy.Up() {
		return // local state rules; the resync proposes what matters
	}
	if !m.storeReachable(rp) {
		return
	}
	m.callTimeout(rp)
	ctx := context.Background()
	var u policy.BreakerUpdate
	published := false
	if trial {
		u, _ = st.mem.Trial(ctx, p.Key, p.Base)
		published = u.Version == p.Base+1
	} else {
		u, _ = st.mem.Propose(ctx, p, fleet.HalfOpen(rp.eng))
		published = u.Version == p.Base+1
	}
	d := st.prop + st.slow
	if !published {
		m.fleetTimer(d, fleetItem{kind: fApply, rep: rp.idx, u: u})
		return
	}
	for _, o := range m.reps {
		m.fleetTimer(d, fleetItem{kind: fApply, rep: o.idx, u: u})
	}
}

// storeReachable reports whether a call of rp reaches the store now; when
// the store is down it does not, and rp falls back to local state at once.
func (m *sim) storeReachable(rp *simReplica) bool {
	if m.store.down {
		m.degrade(rp, fleet.ErrUnavailable.Error())
		return false
	}
	return true
}

// callTimeout makes rp fall back to local state when the call it makes
// now cannot answer within the timeout: the store is slower than that.
// The call still reaches the store, which applies and publishes it as
// usual (slow delays what the store sends, not what it does).
func (m *sim) callTimeout(rp *simReplica) bool {
	st := m.store
	if st.slow < st.timeout {
		return false
	}
	m.fleetTimer(st.timeout, fleetItem{kind: fDegrade, rep: rp.idx})
	return true
}

// storeApply applies a store state to a replica and claims its share of
// the half-open trials (fleet.Fleet's apply).
func (m *sim) storeApply(rp *simReplica, u policy.BreakerUpdate) {
	if !rp.sy.Apply(rp.eng, m.nowT, u) || !m.storeReachable(rp) {
		return
	}
	st := m.store
	n, _ := st.mem.Claim(context.Background(), u.Key, u.Version, fleet.HalfOpen(rp.eng))
	if m.callTimeout(rp) {
		return // the trials taken are lost with the answer
	}
	if g, ok := fleet.Granted(u, n); ok {
		if st.slow > 0 {
			m.fleetTimer(st.slow, fleetItem{kind: fApply, rep: rp.idx, u: g})
			return
		}
		rp.sy.Apply(rp.eng, m.nowT, g)
	}
}

// share is one share of a replica's syncer (fleet.Fleet's share): it
// reports the replica's retry budgets and reads the fleet's health
// demotions, both with the functions the syncer calls. The store takes the
// report now; the answer reaches the replica after the propagation delay
// (and a slow store's delay), or is lost when the store is slower than the
// timeout, and the replica then falls back to local state.
func (m *sim) share(rp *simReplica) {
	if !rp.sy.Sharing(rp.eng) || !m.storeReachable(rp) {
		return
	}
	st := m.store
	ctx := context.Background()
	r := rp.sy.Budgets(rp.eng, m.nowT)
	answer, err := st.mem.Report(ctx, r.Member, m.nowT, r.Window, r.Rows)
	if err != nil {
		return
	}
	bud := r.Others(answer)
	vals, err := st.mem.LoadMany(ctx, rp.sy.HealthNames(rp.eng))
	if err != nil {
		return
	}
	dem := rp.sy.Demotions(vals)
	if m.callTimeout(rp) {
		return
	}
	m.fleetTimer(st.prop+st.slow, fleetItem{kind: fShared, rep: rp.idx, bud: bud, dem: dem})
}

// shared applies a share's answer: the other replicas' budget counts and
// their demotions since the last share.
func (m *sim) shared(rp *simReplica, it fleetItem) {
	rp.sy.Learn(rp.eng, m.nowT, it.bud, it.dem)
}

// putHealth writes a replica's demotion for the fleet (fleet.Fleet's
// putHealth), kept for the replica's health window.
func (m *sim) putHealth(rp *simReplica, p policy.Proposal) {
	if !rp.sy.Up() || !m.storeReachable(rp) {
		return
	}
	m.callTimeout(rp)
	if r, ok := rp.sy.Demoted(rp.eng, fleet.Demotion{Key: p.Key, Reason: p.Reason, At: p.Time}); ok {
		_ = m.store.mem.Put(context.Background(), r.Name, r.Value, r.TTL)
	}
}

// degrade falls back to local breakers.
func (m *sim) degrade(rp *simReplica, reason string) {
	ev, ok := rp.sy.Degrade(rp.eng, m.nowT, reason)
	if !ok {
		return
	}
	rp.Emit(ev)
	m.fleetTimer(storeRetry, fleetItem{kind: fRetry, rep: rp.idx})
}

// storeRetry tries the store again and, when it answers, resyncs: the
// store's state wins where its version is newer, the replica's (changed
// while the store was away) is proposed otherwise.
func (m *sim) storeRetry(rp *simReplica) {
	st := m.store
	if rp.sy.Up() {
		return
	}
	if st.down || st.slow >= st.timeout {
		// The subscription fails, or the read of the states times out.
		m.fleetTimer(storeRetry, fleetItem{kind: fRetry, rep: rp.idx})
		return
	}
	now := m.nowT
	states, _ := st.mem.Get(context.Background(), rp.eng.Keys())
	props, was := rp.sy.Resync(rp.eng, now, states)
	for _, s := range states {
		m.storeApply(rp, s)
	}
	for _, p := range props {
		m.storeCall(rp, p, false)
	}
	if ev, ok := rp.sy.Resynced(now, was); ok {
		rp.Emit(ev)
	}
}

// storeStep starts (on) or ends a store step.
func (m *sim) storeStep(st *Step, on bool) {
	s := m.store
	if s == nil {
		return
	}
	switch {
	case st.Store.Down:
		s.down = on
		s.mem.SetDown(on)
		if on {
			// The replicas' subscriptions break: each falls back at once.
			for _, rp := range m.reps {
				m.degrade(rp, fleet.ErrUnavailable.Error())
			}
		}
	case on:
		s.slow = st.Store.Slow.D()
	default:
		s.slow = 0
	}
}

// replica is the number of the replica serving r (0 for a gateway alone).
func (r *simReq) replica() int {
	if r.rep == nil {
		return 0
	}
	return r.rep.n
}
