package policy

import "time"

// Watchdog watches one streamed attempt: time to first token, idle gaps
// between tokens, the token-rate floor after its grace period, and the total
// deadline. Feed it token arrivals with Token; ask Deadline when to check
// next and Check for a verdict. It reads no clock. The zero value is not
// usable; use NewWatchdog.
type Watchdog struct {
	start, first, last time.Time
	tokens             int
	t                  Timeouts
}

// NewWatchdog starts watching an attempt sent at start, with the timeouts of
// its Send decision (Decision.Timeouts). Zero timeouts are off.
func NewWatchdog(start time.Time, t Timeouts) *Watchdog {
	return &Watchdog{start: start, t: t}
}

// Token records n output tokens arriving at now.
func (w *Watchdog) Token(now time.Time, n int) {
	if n <= 0 {
		return
	}
	if w.tokens == 0 {
		w.first = now
	}
	w.tokens += n
	if now.After(w.last) {
		w.last = now
	}
}

// Tokens returns the tokens seen so far.
func (w *Watchdog) Tokens() int { return w.tokens }

// TTFT returns the time to the first token, 0 before it.
func (w *Watchdog) TTFT() time.Duration {
	if w.tokens == 0 {
		return 0
	}
	return w.first.Sub(w.start)
}

// Deadline returns the earliest time at which Check could fire if no more
// tokens arrive, or the zero time when every timeout is off.
func (w *Watchdog) Deadline() time.Time {
	var d time.Time
	take := func(x time.Time) {
		if d.IsZero() || x.Before(d) {
			d = x
		}
	}
	if w.t.Total > 0 {
		take(w.start.Add(w.t.Total.D()))
	}
	if w.tokens == 0 {
		if w.t.FirstToken > 0 {
			take(w.start.Add(w.t.FirstToken.D()))
		}
		return d
	}
	if w.t.Idle > 0 {
		take(w.last.Add(w.t.Idle.D()))
	}
	if at := w.rateDeadline(); !at.IsZero() {
		take(at)
	}
	return d
}

// Check returns the verdict at now: the class of the timeout that fired,
// and true, or "", false while the stream is within bounds.
func (w *Watchdog) Check(now time.Time) (Class, bool) {
	if w.t.Total > 0 && !now.Before(w.start.Add(w.t.Total.D())) {
		return TimeoutTotal, true
	}
	if w.tokens == 0 {
		if w.t.FirstToken > 0 && !now.Before(w.start.Add(w.t.FirstToken.D())) {
			return TimeoutTTFT, true
		}
		return "", false
	}
	if w.t.Idle > 0 && !now.Before(w.last.Add(w.t.Idle.D())) {
		return Stall, true
	}
	if at := w.rateDeadline(); !at.IsZero() && !now.Before(at) {
		return TokenRateFloor, true
	}
	return "", false
}

// rateDeadline is when the rate since the first token falls to the floor
// if no more tokens arrive (never before the grace period ends), or zero.
func (w *Watchdog) rateDeadline() time.Time {
	f := w.t.TokenRateFloor
	if f <= 0 || w.tokens == 0 {
		return time.Time{}
	}
	// tokens/(t-first) <= f  <=>  t >= first + tokens/f
	at := w.first.Add(time.Duration(float64(w.tokens) / f * float64(time.Second)))
	if g := w.first.Add(w.t.Grace.D()); at.Before(g) {
		at = g
	}
	return at
}
