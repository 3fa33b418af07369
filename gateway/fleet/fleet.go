package fleet

import (
	"context"
	"sync"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/clients"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// Options configure a Fleet. Every field works at its zero value.
type Options struct {
	// Timeout bounds every store call. Default 100ms: a slow store never
	// holds a request (calls happen off the request path) and is declared
	// unavailable after one slow call.
	Timeout time.Duration
	// Retry is how often an unavailable store is pinged. Default 1s.
	Retry time.Duration
	// Events receives state.degraded events. Default: events.Discard.
	Events events.Sink
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Up, when set, is told whether the store is available (the
	// brownout_state_backend_up gauge).
	Up func(bool)
	// Share is how often retry budgets and client limits are synced with
	// the store (see share.go). Default 100ms.
	Share time.Duration
	// Member names this replica in the store's budget reports. Default: a
	// random name.
	Member string
	// Clients, when set, returns the current client table, whose limits
	// the fleet then shares.
	Clients func() *clients.Table
}

// Fleet keeps one replica's decision core in step with a fleet's store.
// It is the engine's policy.FleetSink: the engine's proposals and trial
// results queue here and a goroutine (Run) sends them to the store, applies
// the store's answers, claims half-open trials, and applies every change
// other replicas publish. The request path never waits for the store: a
// local transition stands until the store answers. What it sends and
// applies, it asks its Syncer (the decisions without I/O, which the
// game-day simulator drives too); the Fleet makes the calls.
//
// When a store call fails or times out the replica falls back to local
// breakers (policy.Engine.SetShared(false)), emits state.degraded (OK
// false), and pings the store every Options.Retry; when it answers again,
// the replica resyncs — for each breaker, the store's state wins when its
// version is newer, otherwise the local state (changed while the store was
// away) is proposed — emits state.degraded (OK true) and follows the store
// again.
type Fleet struct {
	store  Store
	engine func() *policy.Engine
	o      Options

	mu       sync.Mutex
	queue    []item
	wake     chan struct{}
	busy     bool
	idle     *sync.Cond
	sy       *Syncer // the decisions (Run's goroutine; Up from any)
	sharedAt time.Time
	seen     map[string]clientSeen // client counter key → totals at the last sync (Run's goroutine only)
}

type item struct {
	prop   policy.Proposal
	trial  bool
	remote *policy.BreakerUpdate // a change published by a replica
	health *Demotion             // a local demotion to share
}

// DefaultShare is Options.Share's default.
const DefaultShare = 100 * time.Millisecond

// New returns a fleet on store for the engine that engine returns (the
// current one: a reload swaps it). Build the engine with Options.Fleet set
// to the Fleet, and start Run.
func New(store Store, engine func() *policy.Engine, o Options) *Fleet {
	if o.Timeout <= 0 {
		o.Timeout = 100 * time.Millisecond
	}
	if o.Retry <= 0 {
		o.Retry = time.Second
	}
	if o.Events == nil {
		o.Events = events.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Share <= 0 {
		o.Share = DefaultShare
	}
	if o.Member == "" {
		o.Member = newMember()
	}
	f := &Fleet{store: store, engine: engine, o: o, wake: make(chan struct{}, 1), sy: NewSyncer(o.Member), seen: map[string]clientSeen{}}
	f.idle = sync.NewCond(&f.mu)
	return f
}

var _ policy.FleetSink = (*Fleet)(nil)

// Propose implements policy.FleetSink.
func (f *Fleet) Propose(p policy.Proposal) { f.push(item{prop: p}) }

// TrialResult implements policy.FleetSink.
func (f *Fleet) TrialResult(key string, version uint64, ok bool) {
	if ok {
		f.push(item{prop: policy.Proposal{Key: key, Base: version}, trial: true})
	}
}

func (f *Fleet) push(it item) {
	f.mu.Lock()
	f.queue = append(f.queue, it)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Up reports whether the store is available as of the last call.
func (f *Fleet) Up() bool { return f.sy.Up() }

// Sync waits until everything queued so far has been handled (tests).
func (f *Fleet) Sync() {
	f.mu.Lock()
	for len(f.queue) > 0 || f.busy {
		f.idle.Wait()
	}
	f.mu.Unlock()
}

// Run syncs with the store until ctx ends. It subscribes to the changes
// other replicas publish and, once subscribed (so nothing published after
// the read is missed), resyncs; when the subscription breaks it falls back
// to local state and subscribes again every Options.Retry.
func (f *Fleet) Run(ctx context.Context) error {
	for {
		subCtx, stop := context.WithCancel(ctx)
		ready := make(chan struct{})
		errc := make(chan error, 1)
		go func() {
			errc <- f.store.Subscribe(subCtx, func() { close(ready) }, func(u policy.BreakerUpdate) { f.push(item{remote: &u}) })
		}()
		err := f.follow(ctx, ready, errc)
		stop()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		f.degrade(err)
		wait := time.NewTimer(f.o.Retry)
	waiting:
		for {
			select {
			case <-ctx.Done():
				wait.Stop()
				return ctx.Err()
			case <-f.wake:
				f.drain(ctx)
			case <-wait.C:
				break waiting
			}
		}
	}
}

// follow handles the queue and resyncs while the subscription holds.
func (f *Fleet) follow(ctx context.Context, ready <-chan struct{}, errc <-chan error) error {
	retry := time.NewTicker(f.o.Retry)
	defer retry.Stop()
	share := time.NewTicker(f.o.Share)
	defer share.Stop()
	for {
		select {
		case <-share.C:
			if ready == nil {
				f.share(ctx)
			}
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			return err
		case <-ready:
			ready = nil
			f.resync(ctx)
		case <-f.wake:
			f.drain(ctx)
		case <-retry.C:
			if ready == nil && !f.Up() {
				f.resync(ctx) // subscribed, but a call failed since
			}
		}
	}
}

// drain handles the queue.
func (f *Fleet) drain(ctx context.Context) {
	for {
		f.mu.Lock()
		if len(f.queue) == 0 {
			f.busy = false
			f.idle.Broadcast()
			f.mu.Unlock()
			return
		}
		it := f.queue[0]
		f.queue = f.queue[1:]
		f.busy = true
		f.mu.Unlock()
		up := f.sy.Up()
		if it.remote != nil {
			f.apply(ctx, *it.remote)
			continue
		}
		if !up {
			continue // local state rules; resync proposes what matters
		}
		if it.health != nil {
			f.putHealth(ctx, *it.health)
			continue
		}
		f.send(ctx, it)
	}
}

// send sends a proposal or a trial result and applies the answer.
func (f *Fleet) send(ctx context.Context, it item) {
	e := f.engine()
	c, cancel := context.WithTimeout(ctx, f.o.Timeout)
	defer cancel()
	var u policy.BreakerUpdate
	var err error
	if it.trial {
		u, err = f.store.Trial(c, it.prop.Key, it.prop.Base)
	} else {
		u, err = f.store.Propose(c, it.prop, HalfOpen(e))
	}
	if err != nil {
		f.degrade(err)
		return
	}
	f.apply(ctx, u)
}

// apply applies a store state and claims half-open trials for it.
func (f *Fleet) apply(ctx context.Context, u policy.BreakerUpdate) {
	e := f.engine()
	if !f.sy.Apply(e, f.o.Now(), u) {
		return
	}
	c, cancel := context.WithTimeout(ctx, f.o.Timeout)
	defer cancel()
	n, err := f.store.Claim(c, u.Key, u.Version, HalfOpen(e))
	if err != nil {
		f.degrade(err)
		return
	}
	if g, ok := Granted(u, n); ok {
		f.sy.Apply(e, f.o.Now(), g)
	}
}

// degrade falls back to local state after a store error.
func (f *Fleet) degrade(err error) {
	if !f.sy.Up() {
		return
	}
	ev, ok := f.sy.Degrade(f.engine(), f.o.Now(), err.Error())
	if !ok {
		return
	}
	f.o.Events.Emit(ev)
	if f.o.Up != nil {
		f.o.Up(false)
	}
}

// resync brings the engine and the store together and follows the store.
func (f *Fleet) resync(ctx context.Context) {
	e := f.engine()
	c, cancel := context.WithTimeout(ctx, f.o.Timeout)
	defer cancel()
	keys := e.Keys()
	states, err := f.store.Get(c, keys)
	if err != nil {
		f.degrade(err)
		return
	}
	now := f.o.Now()
	props, was := f.sy.Resync(e, now, states)
	for _, st := range states {
		f.apply(ctx, st)
	}
	for _, p := range props {
		f.send(ctx, item{prop: p})
	}
	if !f.Up() {
		return
	}
	if ev, ok := f.sy.Resynced(now, was); ok {
		f.o.Events.Emit(ev)
	}
	if f.o.Up != nil {
		f.o.Up(true)
	}
}
