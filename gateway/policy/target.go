package policy

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/brownout-dev/brownout/events"
)

// BreakerState is a circuit breaker's state.
type BreakerState string

// Breaker states.
const (
	Closed   BreakerState = "closed"
	Open     BreakerState = "open"
	HalfOpen BreakerState = "half_open"
)

// HealthState is a target's passive health.
type HealthState string

// Health states.
const (
	Healthy   HealthState = "healthy"
	Unhealthy HealthState = "unhealthy"
	// Recovering: healthy again, its share of traffic ramping back over the
	// cooldown.
	Recovering HealthState = "recovering"
)

// Action is what a Signal asks of the engine.
type Action string

// Signal actions.
const (
	// Demote marks the target unhealthy (end of the line) for Health.Window.
	Demote Action = "demote"
	// Trip opens the target's breaker.
	Trip Action = "open"
)

// targetState is the shared state of one provider:model: breaker, passive
// health and SLA windows. Each has its own lock.
type targetState struct {
	key string
	hs  *Health
	sla SLA // resolved

	// calm is gen<<1, plus 1 when state == Closed && health == Healthy,
	// kept under mu and read without it: a calm target has no timed work
	// and no ramp, so a request choosing among targets (and Tick, NextTick)
	// need not lock it, and a send to it is admitted in the generation read
	// along (see admitCalm). A stale read is a read from just before the
	// change, as with the lock.
	calm atomic.Uint64
	// prefill is the continuation probe's verdict on a target that declares
	// prefill: prefillUnchecked, prefillVerified or prefillFailed. A failed
	// target continues no answer from a prefill (see PrefillVerdict).
	prefill atomic.Int32
	// owners are the restless counts of the engines that use this target
	// (more than one once Reload shares it): each counts it while it is
	// not calm. Guarded by mu.
	owners []*atomic.Int64

	// fleet receives the breaker's proposals and trial results when it is
	// shared (br.shared); set at New.
	fleet FleetSink

	mu sync.Mutex
	br breaker
	// health
	health    HealthState
	reason    string
	fails     []time.Time // ring of the last Failures failure times
	failN     int
	downUntil time.Time
	upAt      time.Time // when it recovered (ramp start)
	// SLA: a: sum, b: count
	ttft, tpot window
}

func newTargetState(key string, s *Settings, sla SLA, owner *atomic.Int64) *targetState {
	ts := &targetState{
		key: key, hs: &s.Health, sla: sla,
		br:     newBreaker(&s.Breaker),
		health: Healthy,
		fails:  make([]time.Time, s.Health.Failures),
		ttft:   newWindow(sla.Window.D()),
		tpot:   newWindow(sla.Window.D()),
	}
	ts.calm.Store(1) // closed, healthy, generation 0: not restless
	ts.owners = []*atomic.Int64{owner}
	return ts
}

// setCalm updates calm after a change of state, health or generation.
// Caller holds mu (or owns t).
func (t *targetState) setCalm() {
	w := t.br.gen << 1
	calm := t.br.state == Closed && t.health == Healthy
	if calm {
		w |= 1
	}
	if was := t.calm.Swap(w)&1 != 0; was != calm {
		d := int64(1)
		if calm {
			d = -1
		}
		for _, c := range t.owners {
			c.Add(d)
		}
	}
}

// addOwner makes t a target of the engine counting restless targets in c
// too (Reload shares it).
func (t *targetState) addOwner(c *atomic.Int64) {
	t.mu.Lock()
	t.owners = append(t.owners, c)
	if !t.isCalm() {
		c.Add(1)
	}
	t.mu.Unlock()
}

// isCalm reports whether t is closed and healthy, without its lock.
func (t *targetState) isCalm() bool { return t.calm.Load()&1 != 0 }

// admitCalm admits a send to a calm target without its lock: what advance,
// usable and admit do under it for a closed, healthy target (nothing, yes,
// the generation and no trial). ok is false when t is not calm; then the
// caller takes the lock.
func (t *targetState) admitCalm() (gen uint64, ok bool) {
	w := t.calm.Load()
	return w >> 1, w&1 != 0
}

// pending events are collected under the lock and emitted after it. One
// lock section makes at most maxPending of them. The buffer is allocated on
// the first event: most sections make none, and a pending is declared on
// every request's path, so it must be cheap to declare.
type pending struct {
	evs []events.Event
	// fleet messages for f, for a shared breaker's transitions and trials.
	f    FleetSink
	msgs []fleetMsg
}

const maxPending = 4

func (p *pending) add(e events.Event) {
	if len(p.evs) < maxPending {
		if p.evs == nil {
			p.evs = make([]events.Event, 0, maxPending)
		}
		p.evs = append(p.evs, e)
	}
}

func (p *pending) flush(s events.Sink) {
	for i := range p.evs {
		s.Emit(p.evs[i])
	}
	p.evs = p.evs[:0]
	for _, m := range p.msgs {
		if m.trial {
			p.f.TrialResult(m.prop.Key, m.prop.Base, true)
		} else {
			p.f.Propose(m.prop)
		}
	}
	p.msgs = p.msgs[:0]
}

// tell queues a message for the fleet sink f.
func (p *pending) tell(f FleetSink, m fleetMsg) {
	p.f = f
	p.msgs = append(p.msgs, m)
}

// advance performs the transitions that are due at now. Caller holds mu.
func (t *targetState) advance(now time.Time, p *pending) {
	for range 2 { // open → half-open, then perhaps half-open → open
		to, reason, ok := t.br.due(now)
		if !ok {
			break
		}
		t.transition(now, to, reason, p)
	}
	switch t.health {
	case Unhealthy:
		if !now.Before(t.downUntil) {
			t.setHealth(now, Recovering, "recovered", p)
			t.upAt = t.downUntil
		}
		fallthrough
	case Recovering:
		if t.health == Recovering && !now.Before(t.upAt.Add(t.hs.Cooldown.D())) {
			t.setHealth(now, Healthy, "cooldown_elapsed", p)
		}
	}
}

func (t *targetState) setHealth(now time.Time, to HealthState, reason string, p *pending) {
	if t.health == to {
		return
	}
	p.add(events.Event{Time: now, Kind: events.HealthChange, Target: t.key, From: string(t.health), To: string(to), Reason: reason})
	t.health = to
	t.reason = reason
	t.setCalm()
}

// transition moves the breaker to state to, starting a new generation,
// and records the event.
func (t *targetState) transition(now time.Time, to BreakerState, reason string, p *pending) {
	from := t.br.state
	t.br.to(now, to)
	t.setCalm()
	p.add(events.Event{Time: now, Kind: events.BreakerTransition, Target: t.key, From: string(from), To: string(to), Reason: reason})
	if t.br.shared {
		prop := Proposal{Key: t.key, Base: t.br.version, State: to, Reason: reason, Time: now}
		if to == Open {
			prop.OpenUntil = t.br.openUntil
		}
		p.tell(t.fleet, fleetMsg{prop: prop})
	}
}

// usable reports whether a request could be sent now. Caller holds mu.
func (t *targetState) usable(now time.Time) bool { return t.br.usable() }

// share is the ramp share of traffic admitted at the usual place in line.
// Caller holds mu.
func (t *targetState) share(now time.Time) float64 {
	switch t.health {
	case Unhealthy:
		return 0
	case Recovering:
		cd := t.hs.Cooldown.D()
		if cd <= 0 {
			return 1
		}
		f := float64(now.Sub(t.upAt)) / float64(cd)
		return max(0, min(1, f))
	}
	return 1
}

// admit reserves a send; it returns the generation and whether it is a
// half-open trial. Caller holds mu and has checked usable.
func (t *targetState) admit() (gen uint64, trial bool) { return t.br.admit() }

// record applies an attempt outcome admitted under generation gen.
// Caller holds mu.
func (t *targetState) record(now time.Time, gen uint64, trial bool, c Class, ttft, dur time.Duration, tokens int, p *pending) {
	t.advance(now, p)
	if gen != t.br.gen {
		return // a result from an older generation is discarded
	}
	ci := c.info()
	if ci.ignore {
		t.br.outcome(now, trial, false, false, true)
		return
	}
	ok := c == OK
	if to, reason, changed := t.br.outcome(now, trial, ok, ci.breaker, false); changed {
		t.transition(now, to, reason, p)
	} else if trial && ok && t.br.shared && t.br.state == HalfOpen {
		p.tell(t.fleet, fleetMsg{prop: Proposal{Key: t.key, Base: t.br.version}, trial: true})
	}
	// passive health
	if ci.health && !ok {
		t.failure(now, string(c), p)
	}
	// SLA
	if ok && (t.sla.FirstToken > 0 || t.sla.TimePerOutputToken > 0) {
		t.slaSample(now, ttft, dur, tokens, p)
	}
}

// failure records a passive-health failure.
func (t *targetState) failure(now time.Time, reason string, p *pending) {
	n := len(t.fails)
	if n == 0 {
		return
	}
	t.fails[t.failN%n] = now
	t.failN++
	if t.failN < n {
		return
	}
	oldest := t.fails[t.failN%n] // the n-th most recent failure
	w := t.hs.Window.D()
	if now.Sub(oldest) <= w {
		until := oldest.Add(w)
		t.demote(now, until, "failures", p)
	}
}

// demote marks the target unhealthy until until.
func (t *targetState) demote(now, until time.Time, reason string, p *pending) {
	if until.After(t.downUntil) || t.health != Unhealthy {
		t.downUntil = until
	}
	if t.health != Unhealthy {
		t.setHealth(now, Unhealthy, reason, p)
	}
}

func (t *targetState) slaSample(now time.Time, ttft, dur time.Duration, tokens int, p *pending) {
	if t.sla.FirstToken > 0 {
		t.ttft.add(now, float64(ttft), 1)
		sum, n := t.ttft.sums(now)
		if int(n) >= t.sla.MinSamples && sum/n > float64(t.sla.FirstToken) {
			t.ttft.reset()
			t.demote(now, now.Add(t.sla.Window.D()), "sla_first_token", p)
			return
		}
	}
	if t.sla.TimePerOutputToken > 0 && tokens > 1 && dur > ttft {
		t.tpot.add(now, float64(dur-ttft)/float64(tokens-1), 1)
		sum, n := t.tpot.sums(now)
		if int(n) >= t.sla.MinSamples && sum/n > float64(t.sla.TimePerOutputToken) {
			t.tpot.reset()
			t.demote(now, now.Add(t.sla.Window.D()), "sla_time_per_output_token", p)
		}
	}
}

// nextTick is when advance next has work, or zero. Caller holds mu.
func (t *targetState) nextTick() time.Time {
	var next time.Time
	take := func(x time.Time) {
		if next.IsZero() || x.Before(next) {
			next = x
		}
	}
	if x := t.br.nextTick(); !x.IsZero() {
		take(x)
	}
	switch t.health {
	case Unhealthy:
		take(t.downUntil)
	case Recovering:
		take(t.upAt.Add(t.hs.Cooldown.D()))
	}
	return next
}
