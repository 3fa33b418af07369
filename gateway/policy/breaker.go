package policy

import "time"

// breaker is one provider:model's circuit breaker, in sony/gobreaker's
// mould: admission (admit) and outcome (outcome) are separate, and every
// transition starts a new generation, so an outcome admitted under an older
// generation is discarded by the caller. It opens on the error rate over a
// rolling window once the window holds a minimum of samples, on consecutive
// probe failures, or when tripped; it half-opens after an open duration that
// doubles on every re-opening that follows closely on the last; half-open,
// it admits a capped number of trials and closes when all of them succeed.
//
// A breaker shared by a fleet (shared) follows the fleet's store: it admits
// only the trials the store granted this replica (grant), never closes by
// itself (the store closes it when the fleet's trials have succeeded), and
// re-opens when a half-open state outlives the trial timeout, whoever holds
// the trials. version is the store's version of the state it follows.
//
// It reads no clock and emits nothing: its methods report the transition
// they decide, and the target holding it (under its lock) applies it with
// to and emits the event.
type breaker struct {
	s          *Breaker // resolved settings (shared)
	state      BreakerState
	gen        uint64
	counts     window // a: failures, b: samples
	openUntil  time.Time
	openings   int // total openings
	streak     int // re-openings counting toward the open duration growth
	closedAt   time.Time
	probeFails int
	halfAt     time.Time // when it half-opened
	trials     int       // half-open requests admitted
	trialOK    int       // half-open successes

	shared  bool
	grant   int    // shared: half-open trials the store granted this replica
	version uint64 // shared: the store's version of this state
}

func newBreaker(s *Breaker) breaker {
	return breaker{s: s, state: Closed, counts: newWindow(s.Window.D())}
}

// due returns the transition due at now by the clock alone: an open
// breaker half-opens when its open duration has elapsed; a half-open one
// re-opens when an admitted trial's outcome (or, shared, the fleet's) has
// not arrived within the trial timeout.
func (b *breaker) due(now time.Time) (to BreakerState, reason string, ok bool) {
	switch b.state {
	case Open:
		if !now.Before(b.openUntil) {
			return HalfOpen, "open_for_elapsed", true
		}
	case HalfOpen:
		if b.waiting() && !now.Before(b.halfAt.Add(b.s.TrialTimeout.D())) {
			return Open, "trial_timeout", true
		}
	}
	return "", "", false
}

// waiting reports whether a half-open breaker waits for trial outcomes that
// the trial timeout bounds: its own admitted trials, or, shared, the
// fleet's.
func (b *breaker) waiting() bool { return b.shared || b.trials > b.trialOK }

// to moves the breaker to state to at now, starting a new generation.
func (b *breaker) to(now time.Time, to BreakerState) {
	from := b.state
	b.state = to
	b.gen++
	b.trials, b.trialOK, b.grant = 0, 0, 0
	switch to {
	case Open:
		if from == HalfOpen || (!b.closedAt.IsZero() && b.openings > 0 && now.Sub(b.closedAt) < b.s.ResetAfter.D()) {
			b.streak++
		} else {
			b.streak = 0
		}
		b.openings++
		b.openUntil = now.Add(b.openFor())
		b.probeFails = 0
	case HalfOpen:
		b.halfAt = now
	case Closed:
		b.closedAt = now
		b.counts.reset()
	}
}

// openFor is OpenFor doubled per re-opening in the streak, capped.
func (b *breaker) openFor() time.Duration {
	d := b.s.OpenFor.D()
	maxD := b.s.MaxOpenFor.D()
	for i := 0; i < b.streak && d < maxD; i++ {
		if d > maxD/2 {
			return maxD
		}
		d *= 2
	}
	return min(d, maxD)
}

// usable reports whether the breaker admits a request now.
func (b *breaker) usable() bool {
	switch b.state {
	case Open:
		return false
	case HalfOpen:
		return b.trials < b.trialCap()
	}
	return true
}

// trialCap is how many trials this breaker may admit while half-open.
func (b *breaker) trialCap() int {
	if b.shared {
		return b.grant
	}
	return b.s.HalfOpenRequests
}

// admit reserves a send; it returns the generation and whether it is a
// half-open trial. The caller has checked usable.
func (b *breaker) admit() (gen uint64, trial bool) {
	if b.state == HalfOpen {
		b.trials++
		return b.gen, true
	}
	return b.gen, false
}

// outcome counts the outcome of an attempt admitted in the current
// generation (the caller has discarded older ones) and returns the
// transition it causes. ok: the attempt succeeded; failure: it failed in a
// way the breaker counts (a hard error or a timeout); ignored: it says
// nothing about the target (a client cancel), so a trial's slot is given
// back.
func (b *breaker) outcome(now time.Time, trial, ok, failure, ignored bool) (to BreakerState, reason string, changed bool) {
	if ignored {
		if trial && b.state == HalfOpen {
			b.trials-- // give the trial slot back
		}
		return "", "", false
	}
	switch b.state {
	case Closed:
		if ok || failure {
			f := 0.0
			if !ok {
				f = 1
			}
			b.counts.add(now, f, 1)
			if !ok {
				fails, samples := b.counts.sums(now)
				if int(samples) >= b.s.MinSamples && fails/samples >= b.s.ErrorRate.F() {
					return Open, "error_rate", true
				}
			}
		}
	case HalfOpen:
		if !trial {
			break
		}
		switch {
		case ok:
			b.trialOK++
			if !b.shared && b.trialOK >= b.s.HalfOpenRequests {
				return Closed, "trials_succeeded", true
			}
		case failure:
			return Open, "trial_failed", true
		default:
			b.trials--
		}
	}
	return "", "", false
}

// probe counts an active probe's result and reports whether it trips a
// closed breaker (Breaker.ProbeFailures consecutive failures).
func (b *breaker) probe(ok bool) (trip bool) {
	if ok {
		b.probeFails = 0
		return false
	}
	b.probeFails++
	return b.state == Closed && b.probeFails >= b.s.ProbeFailures
}

// nextTick is when due next may report a transition, or zero.
func (b *breaker) nextTick() time.Time {
	switch b.state {
	case Open:
		return b.openUntil
	case HalfOpen:
		if b.waiting() {
			return b.halfAt.Add(b.s.TrialTimeout.D())
		}
	}
	return time.Time{}
}
