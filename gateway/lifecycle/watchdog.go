package lifecycle

import (
	"time"

	"github.com/brownout-dev/brownout/gateway/policy"
)

// FinishGraceLimit caps how long a stream that sent its finish reason may
// take to send its end marker.
const FinishGraceLimit = time.Second

// Watchdog runs a policy.Watchdog for one attempt and tells its caller when
// to wake up: the next deadline after every token, so an idle gap or a
// token-rate floor fires on time from the first token on, whatever the
// first-token timeout is. It reads no clock and holds no timer: the caller
// keeps one timer, sets it to what Start returns, moves it earlier when
// Token or Finish says so, and calls Fire when it rings.
//
// The zero value is not usable; call Start.
type Watchdog struct {
	wd       policy.Watchdog
	armed    time.Time // what the caller's timer is set to (zero: unset)
	finished bool
	grace    time.Duration
}

// Verdict is what Fire found.
type Verdict uint8

// Verdicts.
const (
	// Within: no deadline passed; set the timer to the time Fire returned.
	Within Verdict = iota
	// Expired: a deadline passed; Fire names its class. End the attempt.
	Expired
	// Finished: the stream sent its finish reason and its end marker is
	// overdue: the answer is complete (End Answered).
	Finished
)

// Start begins watching an attempt sent at start with its Send decision's
// timeouts, and returns when to wake up (zero: never).
func (w *Watchdog) Start(start time.Time, t policy.Timeouts) time.Time {
	w.wd = *policy.NewWatchdog(start, t)
	w.finished = false
	w.grace = min(t.Idle.D(), FinishGraceLimit)
	if w.grace <= 0 {
		w.grace = FinishGraceLimit
	}
	w.armed = w.wd.Deadline()
	return w.armed
}

// Token records n tokens arriving at now. When the next deadline is now
// earlier than the one armed (the first token makes the idle gap and the
// rate floor count), it returns it and true: move the timer there.
func (w *Watchdog) Token(now time.Time, n int) (time.Time, bool) {
	w.wd.Token(now, n)
	if w.finished {
		return time.Time{}, false
	}
	d := w.wd.Deadline()
	if d.IsZero() || (!w.armed.IsZero() && !d.Before(w.armed)) {
		return time.Time{}, false
	}
	w.armed = d
	return d, true
}

// Finish records the stream's finish reason at now: from here on only the
// short grace for its end marker is watched. It returns when to wake up.
func (w *Watchdog) Finish(now time.Time) time.Time {
	w.finished = true
	w.armed = now.Add(w.grace)
	return w.armed
}

// Fire checks the deadlines at now (the caller's timer rang). Within
// returns the next time to wake up (zero: none).
func (w *Watchdog) Fire(now time.Time) (Verdict, policy.Class, time.Time) {
	if w.finished {
		if now.Before(w.armed) {
			return Within, "", w.armed
		}
		return Finished, "", time.Time{}
	}
	if c, ok := w.wd.Check(now); ok {
		return Expired, c, time.Time{}
	}
	w.armed = w.wd.Deadline()
	return Within, "", w.armed
}

// TTFT returns the time to the first token, 0 before it.
func (w *Watchdog) TTFT() time.Duration { return w.wd.TTFT() }

// Tokens returns the tokens seen.
func (w *Watchdog) Tokens() int { return w.wd.Tokens() }
