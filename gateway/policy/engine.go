package policy

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brownout-dev/brownout/events"
)

// ErrUnknownTarget is returned by Signal and ProbeResult for a key that no
// route uses.
var ErrUnknownTarget = errors.New("policy: unknown target")

// ErrUnknownRoute is returned by SetFleetBudget for a route not configured.
var ErrUnknownRoute = errors.New("policy: unknown route")

// Options are an engine's collaborators.
type Options struct {
	// Rand is the source of every random choice (weighted routing, jitter,
	// ramp draws). The engine seeds one generator per route from it at New,
	// so it is not used afterwards. Default: a PCG seeded with (0, 0), so
	// two engines are identical unless told otherwise.
	Rand *rand.Rand
	// Events receives every decision and state change. Default: events.Discard.
	Events events.Sink
	// Fleet, when set, shares the breakers with a fleet of replicas through
	// a store (see FleetSink and Apply). Default: local breakers.
	Fleet FleetSink
}

// Engine is the shared state of the decision core: breakers, health, budgets.
// It is safe for concurrent use: each provider:model and each route has its
// own lock, and the route and target tables never change after New.
type Engine struct {
	cfg     Config
	set     Settings // resolved
	sink    events.Sink
	routes  map[string]*route
	targets map[string]*targetState
	keys    []string       // sorted target keys
	order   []*targetState // targets[keys[i]]
	rlist   []*route       // routes in configuration order
	// restless counts the targets that are not calm: while it is 0, Tick
	// and NextTick have nothing to look at.
	restless atomic.Int64
	fleet    FleetSink
	shared   atomic.Bool
}

// route returns the named route, nil if none. A few routes are compared by
// name (cheaper than hashing it); route names are unique.
func (e *Engine) route(name string) *route {
	if len(e.rlist) <= 8 {
		for _, r := range e.rlist {
			if r.name == name {
				return r
			}
		}
		return nil
	}
	return e.routes[name]
}

// route is a route's resolved configuration and its mutable state.
type route struct {
	name    string
	cfg     *Route
	targets []Target // resolved, same order as cfg.Targets
	states  []*targetState
	tierIdx []int // per target: index into tiers
	// order lists the targets by tier index, then priority, then index:
	// the order choose prefers them in when every target is calm.
	order  []uint8
	tiers  []string
	cached int // index of the cached tier in tiers, -1 if none
	last   int // highest tier index that has targets

	// Static eligibility by target bit: targets without streaming, tools,
	// structured output, prefill; targets that are no fallback candidate.
	noStream, noTools, noStructured, noPrefill, noFallback uint64

	mu     sync.Mutex
	rnd    *rand.Rand
	budget window // a: requests, b: retries
	// fleetReq and fleetRet are what the other replicas of a fleet counted
	// on this route's budget window, as of the last SetFleetBudget.
	fleetReq, fleetRet float64
}

// sortOrder sets order from the targets.
func (r *route) sortOrder() {
	r.order = make([]uint8, len(r.targets))
	for i := range r.order {
		r.order[i] = uint8(i)
	}
	slices.SortStableFunc(r.order, func(x, y uint8) int {
		if c := cmp.Compare(r.tierIdx[x], r.tierIdx[y]); c != 0 {
			return c
		}
		return cmp.Compare(r.targets[x].Priority, r.targets[y].Priority)
	})
}

// calmGroup is what choose's scan of the targets finds when every target
// is calm (closed and healthy: usable, its full share) and no hint
// applies: the targets not in skip with the least tier index, then
// priority, in index order (n of them in group), and their tier index.
func (r *route) calmGroup(skip uint64, group *[MaxTargets]uint8) (n, bestKey int) {
	for k, i := range r.order {
		if skip&(1<<i) != 0 {
			continue
		}
		key, prio := r.tierIdx[i], r.targets[i].Priority
		group[0], n = i, 1
		for _, j := range r.order[k+1:] {
			if r.tierIdx[j] != key || r.targets[j].Priority != prio {
				break
			}
			if skip&(1<<j) == 0 {
				group[n] = j
				n++
			}
		}
		return n, key
	}
	return 0, 1 << 30
}

// prefillFailed returns the targets whose prefill the continuation probe
// failed, as a mask.
func (r *route) prefillFailed() uint64 {
	var m uint64
	for i, ts := range r.states {
		if ts.prefill.Load() == prefillFailed {
			m |= 1 << uint(i)
		}
	}
	return m
}

// masks sets the route's eligibility masks from its targets.
func (r *route) masks() {
	for i := range r.targets {
		t, bit := &r.targets[i], uint64(1)<<uint(i)
		c := &t.Capabilities
		if !c.Streaming {
			r.noStream |= bit
		}
		if !c.Tools {
			r.noTools |= bit
		}
		if !c.StructuredOutput {
			r.noStructured |= bit
		}
		if !c.Prefill {
			r.noPrefill |= bit
		}
		if !t.FallbackCandidate {
			r.noFallback |= bit
		}
	}
}

// New validates cfg and builds an engine.
func New(cfg Config, opts Options) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Events == nil {
		opts.Events = events.Discard
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(0, 0))
	}
	e := &Engine{
		cfg:     cfg,
		set:     cfg.Policy.withDefaults(),
		sink:    opts.Events,
		routes:  make(map[string]*route, len(cfg.Routes)),
		targets: map[string]*targetState{},
		fleet:   opts.Fleet,
	}
	e.shared.Store(opts.Fleet != nil)
	for ri := range cfg.Routes {
		rc := &e.cfg.Routes[ri]
		r := &route{
			name:   rc.Name,
			cfg:    rc,
			tiers:  rc.routeTiers(),
			cached: -1,
			rnd:    rand.New(rand.NewPCG(opts.Rand.Uint64(), opts.Rand.Uint64())),
			budget: newWindow(e.set.RetryBudget.Window.D()),
		}
		r.cached = slices.Index(r.tiers, TierCached)
		for ti := range rc.Targets {
			t := rc.Targets[ti].withDefaults()
			r.targets = append(r.targets, t)
			k := t.Key()
			ts, ok := e.targets[k]
			if !ok {
				ts = newTargetState(k, &e.set, t.SLA, &e.restless)
				ts.fleet = opts.Fleet
				ts.br.shared = opts.Fleet != nil
				e.targets[k] = ts
				e.keys = append(e.keys, k)
			}
			r.states = append(r.states, ts)
			idx := slices.Index(r.tiers, t.Tier)
			r.tierIdx = append(r.tierIdx, idx)
			r.last = max(r.last, idx)
		}
		r.masks()
		r.sortOrder()
		e.routes[rc.Name] = r
		e.rlist = append(e.rlist, r)
	}
	slices.Sort(e.keys)
	e.index()
	return e, nil
}

// index builds order from keys and targets.
func (e *Engine) index() {
	e.order = make([]*targetState, len(e.keys))
	for i, k := range e.keys {
		e.order[i] = e.targets[k]
	}
}

// Config returns the configuration the engine was built with.
func (e *Engine) Config() Config { return e.cfg }

// Settings returns the engine-wide settings with defaults applied.
func (e *Engine) Settings() Settings { return e.set }

// Routes returns the route names in configuration order.
func (e *Engine) Routes() []string {
	names := make([]string, len(e.cfg.Routes))
	for i := range e.cfg.Routes {
		names[i] = e.cfg.Routes[i].Name
	}
	return names
}

// Targets returns a route's targets with defaults applied, or nil for an
// unknown route.
func (e *Engine) Targets(route string) []Target {
	r := e.routes[route]
	if r == nil {
		return nil
	}
	return slices.Clone(r.targets)
}

// Tick performs the timed transitions due at now (open → half-open, health
// recovery and the end of its ramp) and emits their events. Calling it is
// optional for correctness — every transition also happens lazily when a
// request looks at the target — but it makes the events timely.
func (e *Engine) Tick(now time.Time) {
	if e.restless.Load() == 0 {
		return // every target calm: nothing timed
	}
	var p pending
	for _, t := range e.order {
		if t.isCalm() {
			continue // nothing timed
		}
		t.mu.Lock()
		t.advance(now, &p)
		t.mu.Unlock()
		p.flush(e.sink)
	}
}

// NextTick returns when Tick next has work, or the zero time when nothing is
// scheduled. A simulator advances its clock to it.
func (e *Engine) NextTick() time.Time {
	if e.restless.Load() == 0 {
		return time.Time{} // every target calm: nothing timed
	}
	var next time.Time
	for _, t := range e.order {
		if t.isCalm() {
			continue // nothing timed
		}
		t.mu.Lock()
		x := t.nextTick()
		t.mu.Unlock()
		if !x.IsZero() && (next.IsZero() || x.Before(next)) {
			next = x
		}
	}
	return next
}

// Signal applies a detector's or prober's verdict on a target
// ("provider:model"): Demote moves it to the end of the line for
// Health.Window; Trip opens its breaker.
func (e *Engine) Signal(now time.Time, target, reason string, action Action) error {
	t := e.targets[target]
	if t == nil {
		return fmt.Errorf("%w %q", ErrUnknownTarget, target)
	}
	var p pending
	t.mu.Lock()
	t.advance(now, &p)
	switch action {
	case Demote:
		t.demote(now, now.Add(t.hs.Window.D()), reason, &p)
	case Trip:
		if t.br.state != Open {
			t.transition(now, Open, reason, &p)
		}
	default:
		t.mu.Unlock()
		return fmt.Errorf("policy: unknown action %q", action)
	}
	t.mu.Unlock()
	p.flush(e.sink)
	return nil
}

// ProbeResult records an active probe of a target. Breaker.ProbeFailures
// consecutive failures open a closed breaker; a success resets the count.
func (e *Engine) ProbeResult(now time.Time, target string, ok bool) error {
	t := e.targets[target]
	if t == nil {
		return fmt.Errorf("%w %q", ErrUnknownTarget, target)
	}
	var p pending
	t.mu.Lock()
	t.advance(now, &p)
	if t.br.probe(ok) {
		t.transition(now, Open, "probe_failures", &p)
	}
	t.mu.Unlock()
	p.flush(e.sink)
	return nil
}

// The continuation probe's verdicts on prefill (targetState.prefill).
const (
	prefillUnchecked int32 = iota
	prefillVerified
	prefillFailed
)

// Prefill verdicts in TargetState.Prefill.
const (
	PrefillVerified = "verified"
	PrefillFailed   = "failed"
)

// PrefillVerdict records the continuation probe's verdict on a target that
// declares prefill (ok: it continued a known cut text rather than
// restarting it). A capability is verified, not trusted: after a failed
// verdict, until one that passes, the target completes no partial answer
// from a prefill; it replays it (Route.Replay) or is not used for it.
func (e *Engine) PrefillVerdict(target string, ok bool) error {
	t := e.targets[target]
	if t == nil {
		return fmt.Errorf("%w %q", ErrUnknownTarget, target)
	}
	v := prefillFailed
	if ok {
		v = prefillVerified
	}
	t.prefill.Store(v)
	return nil
}

// ForgetPrefillVerdicts drops every continuation-probe verdict: each
// target's declared prefill is taken as it is again (the probe was turned
// off).
func (e *Engine) ForgetPrefillVerdicts() {
	for _, t := range e.targets {
		t.prefill.Store(prefillUnchecked)
	}
}

// State is a snapshot of the engine's state as plain data (/admin/state).
type State struct {
	Targets []TargetState `json:"targets"`
	Routes  []RouteState  `json:"routes"`
}

// TargetState is the state of one provider:model.
type TargetState struct {
	Key        string       `json:"key"`
	Breaker    BreakerState `json:"breaker"`
	Generation uint64       `json:"generation"`
	// OpenUntil is when an open breaker half-opens.
	OpenUntil time.Time `json:"open_until,omitzero"`
	// Openings counts every opening so far.
	Openings int `json:"openings"`
	// OpenFor is the duration of the current (or last) opening.
	OpenFor time.Duration `json:"open_for_ns"`
	// Samples and Failures in the breaker window as of the last update.
	Samples  int `json:"samples"`
	Failures int `json:"failures"`
	// HalfOpenTrials admitted and succeeded in the current half-open state.
	HalfOpenTrials    int `json:"half_open_trials,omitempty"`
	HalfOpenSucceeded int `json:"half_open_succeeded,omitempty"`
	ProbeFailures     int `json:"probe_failures,omitempty"`
	// Prefill is the continuation probe's verdict on a target that declares
	// prefill: "verified", "failed" (it restarts a prefill instead of
	// continuing it: no continuation from a prefill), or "" unchecked.
	Prefill string `json:"prefill,omitempty"`

	Health HealthState `json:"health"`
	Reason string      `json:"reason,omitempty"`
	// UnhealthyUntil is when an unhealthy target recovers.
	UnhealthyUntil time.Time `json:"unhealthy_until,omitzero"`
	// RecoveredAt is when a recovering target's ramp started.
	RecoveredAt time.Time `json:"recovered_at,omitzero"`
}

// RouteState is the retry budget of one route, as of its last update.
type RouteState struct {
	Name     string `json:"name"`
	Requests int    `json:"requests"`
	Retries  int    `json:"retries"`
	// Allowed is the number of retries the budget allows in the window.
	Allowed int `json:"allowed"`
}

// State returns a snapshot. Windowed counts are as of each item's last update.
func (e *Engine) State() State {
	var s State
	for _, k := range e.keys {
		t := e.targets[k]
		t.mu.Lock()
		b := &t.br
		f, n := b.counts.sums(time.Unix(0, b.counts.cur*b.counts.width))
		ts := TargetState{
			Key: k, Breaker: b.state, Generation: b.gen, Openings: b.openings,
			Samples: int(n), Failures: int(f),
			HalfOpenTrials: b.trials, HalfOpenSucceeded: b.trialOK, ProbeFailures: b.probeFails,
			Health: t.health, Reason: t.reason,
		}
		switch t.prefill.Load() {
		case prefillVerified:
			ts.Prefill = PrefillVerified
		case prefillFailed:
			ts.Prefill = PrefillFailed
		}
		ts.OpenFor = b.openFor()
		if b.state == Open {
			ts.OpenUntil = b.openUntil
		}
		switch t.health {
		case Unhealthy:
			ts.UnhealthyUntil = t.downUntil
		case Recovering:
			ts.RecoveredAt = t.upAt
		}
		t.mu.Unlock()
		s.Targets = append(s.Targets, ts)
	}
	for _, name := range e.Routes() {
		r := e.routes[name]
		r.mu.Lock()
		req, ret := r.budget.sums(time.Unix(0, r.budget.cur*r.budget.width))
		r.mu.Unlock()
		s.Routes = append(s.Routes, RouteState{Name: name, Requests: int(req), Retries: int(ret), Allowed: e.allowed(req)})
	}
	return s
}

// allowed is the number of retries the budget allows for req requests.
func (e *Engine) allowed(req float64) int {
	b := e.set.RetryBudget
	return max(b.MinRetries, int(b.Ratio.F()*req))
}

// Reload builds an engine for a new configuration that keeps the breaker
// and health state of every provider:model both configurations use, so a
// config reload neither closes open breakers nor forgets unhealthy targets.
// When the breaker, health and SLA settings of a target are unchanged, the
// new engine shares its state with the old one, so attempts still in flight
// on the old engine are counted too; otherwise only the breaker and health
// states carry over (not the rolling windows). Retry budgets start afresh.
// The old engine stays valid for its attempts in flight.
func (e *Engine) Reload(cfg Config, opts Options) (*Engine, error) {
	n, err := New(cfg, opts)
	if err != nil {
		return nil, err
	}
	sameSettings := n.set.Breaker == e.set.Breaker && n.set.Health == e.set.Health
	for k, nt := range n.targets {
		old := e.targets[k]
		if old == nil {
			continue
		}
		if sameSettings && old.sla == nt.sla {
			n.targets[k] = old
			old.addOwner(&n.restless)
			continue
		}
		old.mu.Lock()
		nb, ob := &nt.br, &old.br
		nb.state, nb.gen, nb.openUntil, nb.openings, nb.streak, nb.closedAt = ob.state, ob.gen, ob.openUntil, ob.openings, ob.streak, ob.closedAt
		nb.probeFails, nb.halfAt = ob.probeFails, ob.halfAt
		nb.shared, nb.version = ob.shared, ob.version
		nt.health, nt.reason, nt.downUntil, nt.upAt = old.health, old.reason, old.downUntil, old.upAt
		nt.setCalm()
		old.mu.Unlock()
	}
	for _, r := range n.routes {
		for i := range r.states {
			r.states[i] = n.targets[r.states[i].key]
		}
	}
	n.index()
	return n, nil
}
