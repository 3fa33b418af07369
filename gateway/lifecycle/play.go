package lifecycle

import (
	"math"
	"strconv"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

// Play returns what the gateway observes of an attempt sent at start under
// decision d to a provider that follows plan p, and when the attempt ends:
// the same deadlines and watchdog the HTTP shell runs on real time, applied
// on the plan's virtual time. The simulator classifies the observation with
// Classify, as the shell does.
func Play(p *faults.Plan, d *policy.Decision, start time.Time, stream bool) (time.Time, Observation) {
	return play(p, d, start, stream, true)
}

func play(p *faults.Plan, d *policy.Decision, start time.Time, stream, quiet bool) (time.Time, Observation) {
	ft := d.Deadlines.FirstToken
	total := d.Deadlines.Total
	at := func(off time.Duration) time.Time { return start.Add(off) }
	before := func(x, deadline time.Time) bool { return deadline.IsZero() || !deadline.Before(x) }
	timedOut := func(c policy.Class) Observation { return Observation{End: TimedOut, Timeout: c} }
	usage := p.Response.Usage
	switch {
	case p.Reset:
		t := at(p.HeaderDelay)
		if !before(t, ft) {
			return ft, timedOut(policy.TimeoutTTFT)
		}
		return t, Observation{End: Broken}
	case p.HoldFor > 0:
		t := at(p.HoldFor)
		if !before(t, ft) {
			return ft, timedOut(policy.TimeoutTTFT)
		}
		return t, Observation{End: Broken}
	case p.Status < 200 || p.Status > 299:
		t := at(p.HeaderDelay)
		if !before(t, ft) {
			return ft, timedOut(policy.TimeoutTTFT)
		}
		o := Observation{Status: p.Status, Err: p.Err, TTFT: p.HeaderDelay}
		if v, ok := p.Headers["retry-after"]; ok {
			if secs, err := strconv.ParseFloat(v, 64); err == nil {
				o.RetryAfter = time.Duration(secs * float64(time.Second))
			}
		}
		return t, o
	}
	n := len(p.TokenTimes)
	if !stream {
		// The body arrives whole when generation ends.
		t := at(max(p.End(), p.HeaderDelay))
		if !before(t, ft) {
			return ft, timedOut(policy.TimeoutTTFT)
		}
		if !before(t, total) {
			return total, timedOut(policy.TimeoutTotal)
		}
		o := Observation{Status: 200, TTFT: t.Sub(start)}
		switch {
		case p.CutAfter >= 0 && p.CutAfter < n, p.StallAfter >= 0 && p.StallClose:
			o.End = Cut
		case p.MalformedAt >= 0:
			o.End = Malformed
		default:
			o.Tokens, o.Usage, o.HaveUsage = usage.OutputTokens, usage, true
		}
		return t, o
	}
	w := *policy.NewWatchdog(start, d.Timeouts)
	// The stream stops early at the first of: the in-band error, the cut,
	// the stall that closes (in the mock server's order, which checks
	// them before each token and before the finish).
	limit, stop, stalls := n+1, Answered, false
	if p.InBandErr != nil && p.InBandAfter >= 0 && p.InBandAfter < limit {
		limit, stop = p.InBandAfter, ErrorEvent
	}
	if p.CutAfter >= 0 && p.CutAfter < limit {
		limit, stop = p.CutAfter, Cut
	}
	if p.StallAfter >= 0 && p.StallClose && p.StallAfter < limit {
		limit, stop, stalls = p.StallAfter, Cut, true
	}
	if stop == Answered {
		limit = n
	}
	header := at(p.HeaderDelay)
	partial := func(e End, k int, when time.Time) Observation {
		o := Observation{End: e, TTFT: w.TTFT(), Tokens: k, HaveUsage: true,
			Usage: llm.Usage{InputTokens: usage.InputTokens, CachedInputTokens: usage.CachedInputTokens, OutputTokens: k}}
		if !when.Before(header) {
			o.Status = 200
		}
		return o
	}
	last := header
	k0 := 0
	if fed, maxT, ok := quietTokens(p, limit, d.Timeouts); ok && quiet {
		// No timeout fires before any of the first fed tokens: the
		// watchdog sees them as one batch (same state as token by token).
		if fed > 0 {
			w.Token(at(p.TokenTimes[0]), 1)
			if fed > 1 {
				w.Token(at(maxT), fed-1)
			}
			last = at(p.TokenTimes[fed-1])
		}
		k0 = fed
	}
	for k := k0; k < limit; k++ {
		tk := at(p.TokenTimes[k])
		if dl := w.Deadline(); !dl.IsZero() && dl.Before(tk) {
			if c, fired := w.Check(dl); fired {
				o := partial(TimedOut, k, dl)
				o.Timeout = c
				return dl, o
			}
		}
		if k == p.MalformedAt {
			return tk, partial(Malformed, k, tk)
		}
		w.Token(tk, 1)
		last = tk
	}
	if stop == Answered && p.MalformedAt == n && n > 0 {
		// A malformed event right before the finish.
		return last, partial(Malformed, n, last)
	}
	if stop != Answered {
		// The stream ends early: with the in-band error right after the
		// last token sent, or the connection closes with no finish (after
		// the stall when the stall closes it, right after the last token
		// for a cut).
		endAt := last
		if stalls {
			// The mock holds the stall from the last token due (the
			// first token's time when none was).
			due := p.TTFT
			if limit > 0 {
				due = p.TokenTimes[limit-1]
			}
			endAt = at(due + p.StallFor)
		}
		if dl := w.Deadline(); !dl.IsZero() && dl.Before(endAt) {
			if c, fired := w.Check(dl); fired {
				o := partial(TimedOut, limit, dl)
				o.Timeout = c
				return dl, o
			}
		}
		o := partial(stop, limit, endAt)
		if stop == ErrorEvent {
			o.Err = p.InBandErr
		}
		return endAt, o
	}
	if n == 0 {
		t := at(max(p.TTFT, p.HeaderDelay))
		if !before(t, ft) {
			return ft, timedOut(policy.TimeoutTTFT)
		}
		return t, Observation{Status: 200, TTFT: t.Sub(start), Usage: usage, HaveUsage: true}
	}
	return last, Observation{Status: 200, TTFT: w.TTFT(), Tokens: n, Usage: usage, HaveUsage: true}
}

// quietTokens is the fast path of play's stream loop: when no watchdog
// deadline falls before any token up to the loop's first stop (the
// malformed event or limit) it returns how many tokens the loop would feed
// before that stop and the latest of their times. The token-rate floor is
// left to the loop (ok false).
func quietTokens(p *faults.Plan, limit int, t policy.Timeouts) (fed int, maxT time.Duration, ok bool) {
	if t.TokenRateFloor > 0 {
		return 0, 0, false
	}
	fed = limit
	if p.MalformedAt >= 0 && p.MalformedAt < limit {
		fed = p.MalformedAt
	}
	total, first, idle := t.Total.D(), t.FirstToken.D(), t.Idle.D()
	if total <= 0 {
		total = math.MaxInt64
	}
	if idle <= 0 {
		idle = math.MaxInt64
	}
	// The loop checks the deadline before every token: the first against
	// the first-token timeout, every one against the total and the idle
	// timeout since the latest before it. (The token it stops at, the
	// malformed one, the loop checks itself.)
	if fed == 0 {
		return 0, 0, true
	}
	tt := p.TokenTimes[:fed]
	if tk := tt[0]; tk > total || (first > 0 && first < tk) {
		return 0, 0, false
	}
	maxT = max(0, tt[0])
	for _, tk := range tt[1:] {
		if tk > total || tk-maxT > idle {
			return 0, 0, false
		}
		maxT = max(maxT, tk)
	}
	return fed, maxT, true
}
