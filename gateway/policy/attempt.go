package policy

import (
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/llm"
)

// Request describes one user request to the core.
type Request struct {
	// ID is carried on every event of the request.
	ID string
	// Route is the logical name the client asked for.
	Route string
	// PromptTokens is the estimated prompt size; targets whose context
	// window is smaller are skipped. 0: unknown.
	PromptTokens int
	// Stream, Structured and Tools say which capabilities the request needs.
	Stream, Structured, Tools bool
	// Hint is the client's preferred target ("provider:model" or a model
	// name), honoured only on routes with AllowHints.
	Hint string
	// NonRetryable forbids replaying the request once bytes reached a
	// provider (Outcome.BytesSent).
	NonRetryable bool
	// Client is the caller's client ID, carried on the request's and its
	// attempts' events. Empty: an open gateway.
	Client string
}

// Kind is the kind of a Decision.
type Kind uint8

// Decision kinds. See the package documentation for what the caller does
// with each.
const (
	// Send: make one upstream attempt to Decision.Target, within
	// Decision.Deadlines, then call Observe.
	Send Kind = iota + 1
	// Wait: call Next again at Decision.Until (a backoff before a retry).
	Wait
	// ServeCached: answer from the cache (labelled stale), then Observe
	// OK on a hit or CacheMiss on a miss.
	ServeCached
	// Fail: return Decision.Err to the client at once. Final.
	Fail
	// Done: the last attempt's answer was served. Final.
	Done
)

var kindNames = [...]string{"", "send", "wait", "serve_cached", "fail", "done"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Deadlines are a Send's absolute deadlines. Idle gaps and the token-rate
// floor are relative to the stream's progress: use NewWatchdog with
// Decision.Timeouts for them.
type Deadlines struct {
	Connect    time.Time
	FirstToken time.Time
	Total      time.Time
}

// Decision is what the caller must do next.
type Decision struct {
	Kind Kind
	// Target is the target to send to (Send, and Wait before a retry) or
	// the one that served (Done). The caller applies its OverrideParams and
	// DropParams. It points into the engine's configuration: do not modify.
	Target *Target
	// Try numbers the upstream attempts of the request, from 1 (Send).
	Try int
	// Deadlines of the attempt (Send).
	Deadlines Deadlines
	// Timeouts of the target, defaults applied (Send).
	Timeouts Timeouts
	// Prefill: part of the answer already reached the client; send it as an
	// assistant prefill so the target continues it (Send).
	Prefill bool
	// Replay: part of the answer already reached the client and the target
	// cannot take it as a prefill (Route.Replay): send the original request
	// and forward only what follows an exact repetition of what was sent
	// (Send).
	Replay bool
	// Until is when to call Next again (Wait).
	Until time.Time
	// Tier is the degradation tier of the target or of the cached answer.
	Tier string
	// Err is the provider-neutral error to return (Fail), with RetryAfter.
	Err *llm.Error
}

// Outcome is what the caller observed of one attempt.
type Outcome struct {
	Class Class
	// Status is the HTTP status, 0 when there was none.
	Status int
	// Err is the provider's error, returned as is when the request cannot
	// go elsewhere (content filter, bad parameter, ...). Param names a
	// rejected parameter for bad_request_param.
	Err *llm.Error
	// TTFT is the time to the first token (or to the response).
	TTFT time.Duration
	// OutputTokens is the number of output tokens received.
	OutputTokens int
	// Usage is the metered usage, for cost.
	Usage llm.Usage
	// RetryAfter is the provider's Retry-After, 0 when absent.
	RetryAfter time.Duration
	// BytesSent: the request body reached the provider.
	BytesSent bool
	// Partial: output tokens already reached the client.
	Partial bool
	// Diverged: the attempt was to continue a partial answer and its output
	// did not (a prefill the target ignored, restarting its answer). With
	// Route.Replay a diverged prefill is replayed on the same target.
	Diverged bool
}

type phase uint8

const (
	phasePick phase = iota
	phaseSending
	phaseWaiting
	phaseCaching
	phaseFinal
)

// Attempt drives one user request. It is used by one goroutine at a time.
type Attempt struct {
	e     *Engine
	r     *route
	req   Request
	start time.Time
	end   time.Time // request deadline, zero if none

	d step // the current decision

	excluded uint64 // targets that may not be sent to any more
	unfit    uint64 // targets the request's needs rule out (see eligible)
	cur      int    // current target, -1 none
	curGen   uint64
	curStart time.Time
	attempts int
	curTries int32 // tries on cur
	// failStatus (an HTTP status), with failRetryAfter and a.last, builds
	// lastError.
	failStatus int32
	phase      phase
	curTrial   bool
	partial    bool
	// noPrefill are the targets that rejected a prefill: they replay.
	noPrefill uint64
	bytesSent bool
	failed    bool // some attempt failed (StrictFallbacks)
	cacheDone bool
	hasFail   bool  // an attempt failed: lastError is its error
	last      Class // class of the last attempt
	// The last failed attempt: the provider's error (copied when it came
	// with one, else built by lastError on first use) or what builds it.
	lastErr        *llm.Error
	failRetryAfter time.Duration
}

// step is the current Decision as the Attempt keeps it. A Send's deadlines,
// timeouts and try number follow from the Attempt (curStart, end,
// attempts) and the target, so decision computes them; a smaller Attempt
// with fewer pointers is less to allocate and to write per request. Fields
// a kind does not use may hold stale values.
type step struct {
	kind    Kind
	prefill bool       // Send
	replay  bool       // Send
	target  *Target    // Send, Wait, Done (nil: served from the cache)
	err     *llm.Error // Fail
	until   time.Time  // Wait
}

// set makes kind the current decision.
func (s *step) set(kind Kind, target *Target, err *llm.Error) {
	s.kind, s.target, s.err = kind, target, err
}

// tier is the decision's Tier: its target's, or the cached tier for an
// answer from the cache.
func (s *step) tier() string {
	switch {
	case s.target != nil:
		return s.target.Tier
	case s.kind == ServeCached || s.kind == Done:
		return TierCached
	}
	return ""
}

// decision fills d, a zero Decision, with the current decision.
func (a *Attempt) decision(d *Decision) {
	s := &a.d
	d.Kind = s.kind
	switch s.kind {
	case Send:
		now, to := a.curStart, &s.target.Timeouts
		d.Target, d.Tier, d.Prefill, d.Replay = s.target, s.target.Tier, s.prefill, s.replay
		d.Try = a.attempts // counts the sends: this one is the last
		d.Deadlines = deadlines(now, to, a.end)
		d.Timeouts = *to
	case Wait:
		d.Target, d.Tier, d.Until = s.target, s.target.Tier, s.until
	case ServeCached:
		d.Tier = TierCached
	case Done:
		d.Target, d.Tier = s.target, s.tier()
	case Fail:
		d.Err = s.err
	}
}

// setFailure records the outcome of a failed attempt for lastError. The
// error the request would end with is only built when it does.
func (a *Attempt) setFailure(o Outcome) {
	a.hasFail = true
	a.lastErr = nil
	if o.Err != nil {
		a.lastErr = providerError(o) // copy it now: the caller owns o.Err
		return
	}
	// Its class stays in a.last: only another attempt's outcome changes it,
	// and that calls setFailure again or ends the request.
	a.failStatus, a.failRetryAfter = int32(o.Status), o.RetryAfter
}

// lastError is the error to return when the request stops after the last
// failed attempt (providerError of its outcome), nil when none failed.
func (a *Attempt) lastError() *llm.Error {
	if a.hasFail && a.lastErr == nil {
		a.lastErr = providerError(Outcome{Status: int(a.failStatus), Class: a.last, RetryAfter: a.failRetryAfter})
	}
	return a.lastErr
}

// Begin starts a request and emits request.start. An unknown route gives
// an Attempt whose first decision is Fail (404).
func (e *Engine) Begin(now time.Time, req Request) *Attempt {
	a := new(Attempt)
	e.BeginInto(a, now, req)
	return a
}

// BeginInto is Begin into an Attempt the caller owns, sparing an allocation
// per request (the simulator keeps one in each request record it reuses).
// a is reset first; the engine keeps no reference to it, so it may be
// reused once its request is over.
func (e *Engine) BeginInto(a *Attempt, now time.Time, req Request) {
	*a = Attempt{}
	a.e, a.req, a.start, a.cur = e, req, now, -1
	// The events of every request are built field by field in a zeroed
	// variable: a composite literal of the 328-byte Event is copied from a
	// static template first, once more per event.
	var ev events.Event
	ev.Time, ev.Kind, ev.RequestID, ev.Route, ev.Stream = now, events.RequestStart, req.ID, req.Route, req.Stream
	ev.Client = req.Client
	e.sink.Emit(ev)
	a.r = e.route(req.Route)
	if a.r == nil {
		a.fail(now, &llm.Error{Status: 404, Type: llm.ErrNotFound, Code: "model_not_found",
			Message: fmt.Sprintf("no route named %q", req.Route), Param: "model"})
		return
	}
	if d := e.set.RequestTimeout.D(); d > 0 {
		a.end = now.Add(d)
	}
	if a.r.cfg.Structured {
		a.req.Structured = true
	}
	a.unfit = a.r.unfit(&a.req)
	a.r.mu.Lock()
	a.r.budget.add(now, 1, 0)
	a.r.mu.Unlock()
}

// Request returns the request being driven.
func (a *Attempt) Request() Request { return a.req }

// Attempts returns the number of upstream attempts so far.
func (a *Attempt) Attempts() int { return a.attempts }

// Next returns what to do at now. It returns the same decision until the
// caller observes the outcome (Send, ServeCached) or until Wait's Until.
func (a *Attempt) Next(now time.Time) (d Decision) {
	switch a.phase {
	case phaseWaiting:
		if now.Before(a.d.until) {
			break
		}
		if a.send(now, a.cur) {
			break
		}
		a.exclude(a.cur) // its breaker opened meanwhile
		a.phase = phasePick
		a.pick(now)
	case phasePick:
		a.pick(now)
	}
	a.decision(&d) // in place: a Decision is 200 bytes
	return d
}

func (a *Attempt) exclude(i int) { a.excluded |= 1 << uint(i) }

func (a *Attempt) excludedAt(i int) bool { return a.excluded&(1<<uint(i)) != 0 }

// pick chooses the next step (a.d): a target, the cached tier, or the honest
// error.
func (a *Attempt) pick(now time.Time) {
	if !a.end.IsZero() && !now.Before(a.end) {
		a.fail(now, a.honest(now, "request timeout"))
		return
	}
	for {
		i, key, soonest := -1, 0, time.Time{}
		if a.attempts < a.e.set.MaxAttempts {
			i, key, soonest = a.choose(now)
		}
		if a.r.cached >= 0 && !a.cacheDone && !a.partial {
			ck := a.r.cached
			if ck > a.r.last {
				ck = 4 * MaxTargets // trailing: after every target
			}
			if i < 0 || ck < key {
				a.phase = phaseCaching
				a.d.set(ServeCached, nil, nil)
				return
			}
		}
		if i < 0 {
			reason := "no target available"
			if a.attempts >= a.e.set.MaxAttempts {
				reason = "attempt cap reached"
			}
			// A request the providers reject (bad parameter, context length,
			// content filter) gets the provider's error; a request the
			// targets failed gets the honest 503.
			var err *llm.Error
			if a.hasFail && a.last.info().ignore && a.attempts < a.e.set.MaxAttempts {
				err = a.lastError()
			} else {
				err = a.honest(now, reason)
				if !soonest.IsZero() && soonest.After(now) {
					err.RetryAfter = ceilSecond(soonest.Sub(now))
				}
			}
			a.fail(now, err)
			return
		}
		if a.send(now, i) {
			return
		}
		a.exclude(i)
	}
}

func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1) / time.Second * time.Second
}

// unfit returns the targets a request's needs rule out: capabilities it
// needs, a context window too small for its prompt.
func (r *route) unfit(req *Request) (m uint64) {
	if req.Stream {
		m |= r.noStream
	}
	if req.Tools {
		m |= r.noTools
	}
	if req.Structured {
		m |= r.noStructured
	}
	if req.PromptTokens > 0 {
		for i := range r.targets {
			if w := r.targets[i].ContextWindow; w > 0 && req.PromptTokens > w {
				m |= 1 << uint(i)
			}
		}
	}
	return m
}

// ineligible returns the targets eligible rules out, as a mask: excluded,
// unfit, without prefill after a partial answer, no fallback candidate
// after a failure on a route with strict fall-backs.
func (a *Attempt) ineligible() uint64 {
	m := a.excluded | a.unfit
	if a.partial && !a.r.cfg.Replay {
		m |= a.r.noPrefill | a.r.prefillFailed()
	}
	if a.failed && a.r.cfg.StrictFallbacks {
		m |= a.r.noFallback
	}
	return m
}

// eligible applies the static filters: capabilities, context window,
// prefill after a partial answer, strict fall-backs. choose reads them
// all at once from ineligible; a test holds the two to each other.
func (a *Attempt) eligible(i int) bool {
	if a.excludedAt(i) {
		return false
	}
	t := &a.r.targets[i]
	c := t.Capabilities
	switch {
	case a.req.Stream && !c.Streaming,
		a.req.Tools && !c.Tools,
		a.req.Structured && !c.StructuredOutput,
		a.partial && !a.r.cfg.Replay && (!c.Prefill || a.r.states[i].prefill.Load() == prefillFailed),
		a.req.PromptTokens > 0 && t.ContextWindow > 0 && a.req.PromptTokens > t.ContextWindow,
		a.failed && a.r.cfg.StrictFallbacks && !t.FallbackCandidate:
		return false
	}
	return true
}

// choose returns the best target to try next, its order key, and the
// soonest time a skipped open breaker half-opens.
func (a *Attempt) choose(now time.Time) (best, bestKey int, soonest time.Time) {
	r := a.r
	var group [MaxTargets]uint8
	var n int
	skip := a.ineligible()
	hint := r.cfg.AllowHints && a.req.Hint != ""
	if !hint && a.e.restless.Load() == 0 {
		// Every target calm: the route's static order decides.
		n, bestKey = r.calmGroup(skip, &group)
	} else {
		n, bestKey, soonest = a.scan(now, skip, hint, &group)
	}
	if n == 0 {
		return -1, 0, soonest
	}
	if n == 1 {
		return int(group[0]), bestKey, soonest
	}
	total := 0
	for _, i := range group[:n] {
		total += r.targets[i].Weight
	}
	if total <= 0 {
		return int(group[0]), bestKey, soonest
	}
	r.mu.Lock()
	x := r.rnd.IntN(total)
	r.mu.Unlock()
	for _, i := range group[:n] {
		x -= r.targets[i].Weight
		if x < 0 {
			return int(i), bestKey, soonest
		}
	}
	return int(group[n-1]), bestKey, soonest
}

// scan looks at every target not in skip for choose: usable ones (locking
// those that are not calm, advancing them) at their tier index, pushed to
// the end of the line when their ramp share says so, first when the hint
// names them. It returns the best of them, n in group in index order,
// their order key and the soonest time a skipped open breaker half-opens.
func (a *Attempt) scan(now time.Time, skip uint64, hint bool, group *[MaxTargets]uint8) (n, bestKey int, soonest time.Time) {
	r := a.r
	bestKey = 1 << 30
	bestPrio := 1 << 30
	var p pending
	for i := range r.targets {
		if skip&(1<<uint(i)) != 0 {
			continue
		}
		ts := r.states[i]
		ok, share := true, 1.0 // a calm target: closed and healthy
		if !ts.isCalm() {
			ts.mu.Lock()
			ts.advance(now, &p)
			ok = ts.usable(now)
			share = ts.share(now)
			if !ok && ts.br.state == Open && (soonest.IsZero() || ts.br.openUntil.Before(soonest)) {
				soonest = ts.br.openUntil
			}
			ts.mu.Unlock()
			p.flush(a.e.sink)
		}
		if !ok {
			continue
		}
		t := &r.targets[i]
		key := r.tierIdx[i]
		if share < 1 && (share <= 0 || a.draw() >= share) {
			key += 2 * MaxTargets // end of the line
		}
		prio := t.Priority
		if hint && (a.req.Hint == ts.key || a.req.Hint == t.Model) {
			key, prio = -1, -1
		}
		switch {
		case key < bestKey || (key == bestKey && prio < bestPrio):
			bestKey, bestPrio = key, prio
			group[0] = uint8(i)
			n = 1
		case key == bestKey && prio == bestPrio:
			group[n] = uint8(i)
			n++
		}
	}
	return n, bestKey, soonest
}

// draw returns a uniform float in [0, 1) from the route's source.
func (a *Attempt) draw() float64 {
	a.r.mu.Lock()
	f := a.r.rnd.Float64()
	a.r.mu.Unlock()
	return f
}

// send admits an attempt to target i through its breaker: it makes the
// Send the current decision, or reports false when the breaker refuses.
func (a *Attempt) send(now time.Time, i int) bool {
	ts := a.r.states[i]
	gen, calm := ts.admitCalm()
	trial := false
	if !calm {
		var p pending
		ts.mu.Lock()
		ts.advance(now, &p)
		if !ts.usable(now) {
			ts.mu.Unlock()
			p.flush(a.e.sink)
			return false
		}
		gen, trial = ts.admit()
		ts.mu.Unlock()
		p.flush(a.e.sink)
	}

	if i != a.cur {
		a.cur, a.curTries = i, 0
	}
	a.curTries++
	a.curGen, a.curTrial, a.curStart = gen, trial, now
	a.attempts++
	t := &a.r.targets[i]
	a.phase = phaseSending
	a.d.set(Send, t, nil)
	a.d.prefill = a.partial && t.Capabilities.Prefill && a.noPrefill&(1<<uint(i)) == 0 && ts.prefill.Load() != prefillFailed
	a.d.replay = a.partial && !a.d.prefill
	var ev events.Event // see BeginInto
	ev.Time, ev.Kind, ev.RequestID, ev.Route = now, events.AttemptStart, a.req.ID, a.req.Route
	ev.Client = a.req.Client
	ev.Target, ev.Tier, ev.Attempt, ev.Stream = ts.key, t.Tier, a.attempts, a.req.Stream
	a.e.sink.Emit(ev)
	return true
}

// deadlines are the deadlines of a send at now with timeouts to, within
// the request deadline end (zero: none).
func deadlines(now time.Time, to *Timeouts, end time.Time) (d Deadlines) {
	if end.IsZero() {
		// Each deadline is now plus the shorter of its timeout and the
		// total: the instants minTime of the sums gives (adding is
		// monotonic), with fewer additions.
		// Equal timeouts (connect and first token often are) share one
		// addition.
		tt := to.Total.D()
		c, ft := min(to.Connect.D(), tt), min(to.FirstToken.D(), tt)
		d.Connect = now.Add(c)
		d.FirstToken = d.Connect
		if ft != c {
			d.FirstToken = now.Add(ft)
		}
		d.Total = d.FirstToken
		if tt != ft {
			d.Total = now.Add(tt)
		}
		return d
	}
	total := now.Add(to.Total.D())
	if end.Before(total) {
		total = end
	}
	return Deadlines{
		Connect:    minTime(now.Add(to.Connect.D()), total),
		FirstToken: minTime(now.Add(to.FirstToken.D()), total),
		Total:      total,
	}
}

func minTime(x, y time.Time) time.Time {
	if y.Before(x) {
		return y
	}
	return x
}

// Observe reports the outcome of the last Send (or ServeCached).
// Observing when nothing is outstanding does nothing.
func (a *Attempt) Observe(now time.Time, o Outcome) {
	switch a.phase {
	case phaseCaching:
		if o.Class == OK {
			a.done(now, nil, TierCached)
			return
		}
		a.cacheDone = true
		a.phase = phasePick
		return
	case phaseSending:
	default:
		return
	}
	i := a.cur
	t := &a.r.targets[i]
	ts := a.r.states[i]
	dur := sub(now, a.curStart)
	tokens := o.OutputTokens
	if tokens == 0 {
		tokens = o.Usage.OutputTokens
	}
	var ev events.Event // see BeginInto
	ev.Time, ev.Kind, ev.RequestID, ev.Route = now, events.AttemptEnd, a.req.ID, a.req.Route
	ev.Client = a.req.Client
	ev.Target, ev.Tier, ev.Attempt, ev.Stream = ts.key, t.Tier, a.attempts, a.req.Stream
	ev.Status, ev.Class, ev.TTFT, ev.Duration = o.Status, string(o.Class), o.TTFT, dur
	ev.InputTokens, ev.OutputTokens, ev.CachedTokens = o.Usage.InputTokens, tokens, o.Usage.CachedInputTokens
	ev.Cost = cost(t.Price, o.Usage, tokens)
	if o.Class == Skipped && o.Err != nil {
		ev.Reason = o.Err.Message
	}
	a.e.sink.Emit(ev)
	var p pending
	ts.mu.Lock()
	ts.record(now, a.curGen, a.curTrial, o.Class, o.TTFT, dur, tokens, &p)
	ts.mu.Unlock()
	p.flush(a.e.sink)
	if o.Class == Skipped {
		a.skip(i, o)
		return
	}

	a.last = o.Class
	a.bytesSent = a.bytesSent || o.BytesSent
	a.partial = a.partial || o.Partial
	if o.Class == OK {
		a.done(now, t, t.Tier)
		return
	}
	a.setFailure(o)
	a.afterFailure(now, i, o)
}

// skip moves on from target i, which the request was not sent to (see
// Skipped): the send is not counted, and nothing else changes but that i
// is out and the last failure is the skip's (the request's error if no
// target is left).
func (a *Attempt) skip(i int, o Outcome) {
	a.attempts--
	a.last = o.Class
	a.setFailure(o)
	a.exclude(i)
	a.phase = phasePick
}

// afterFailure decides between a retry on the same target, a fail-over and
// failing the request.
func (a *Attempt) afterFailure(now time.Time, i int, o Outcome) {
	t := &a.r.targets[i]
	ci := o.Class.info()
	if o.Class == ClientCanceled {
		a.fail(now, &llm.Error{Status: 499, Type: llm.ErrInvalidRequest, Code: "client_canceled", Message: "the client canceled the request"})
		return
	}
	if o.Class == Shutdown {
		err := o.Err
		if err == nil {
			err = &llm.Error{Status: 503, Type: llm.ErrOverloaded, Code: "shutting_down", Message: "the gateway is shutting down; retry the request"}
		}
		a.fail(now, err)
		return
	}
	if a.req.NonRetryable && a.bytesSent {
		a.fail(now, a.lastError())
		return
	}
	governed := ci.byStatus || o.Class == Auth
	retry := ci.retrySame && (!ci.byStatus || o.Status == 0 || contains(t.Retry.OnStatusCodes, o.Status))
	if a.partial && !a.r.cfg.Replay && (!t.Capabilities.Prefill || a.r.states[i].prefill.Load() == prefillFailed) {
		retry = false
	}
	if (o.Class == BadRequestParam || o.Diverged) && a.d.prefill && a.r.cfg.Replay && a.attempts < a.e.set.MaxAttempts {
		// The target rejected the prefill, or ignored it: replay the
		// request on it.
		a.noPrefill |= 1 << uint(i)
		if a.send(now, i) {
			return
		}
	}
	if retry && int(a.curTries) < t.Retry.Attempts && a.attempts < a.e.set.MaxAttempts && o.RetryAfter <= t.Retry.RetryAfterCap.D() {
		// One critical section of the route draws the backoff and takes
		// the retry from the budget.
		r := a.r
		r.mu.Lock()
		wait := o.RetryAfter
		if wait == 0 {
			wait = Backoff(int(a.curTries)-1, t.Retry.Base.D(), t.Retry.Cap.D(), r.rnd.Float64())
		}
		until := now.Add(wait)
		inTime := a.end.IsZero() || until.Before(a.end)
		withdrawn := inTime && a.withdrawLocked(now)
		r.mu.Unlock()
		if inTime {
			if withdrawn {
				a.phase = phaseWaiting
				a.d.set(Wait, t, nil)
				a.d.until = until
				return
			}
			a.e.sink.Emit(events.Event{Time: now, Kind: events.BudgetExhausted, RequestID: a.req.ID, Route: a.req.Route, Target: a.r.states[i].key})
			if a.e.set.RetryBudget.OnExhausted == OnExhaustedFailFast {
				a.fail(now, a.lastError())
				return
			}
		}
	}
	failover := ci.failover && (!governed || o.Status == 0 || contains(t.FallbackStatusCodes, o.Status))
	if o.Class == ContentFilter && !a.r.cfg.FallbackOnContentFilter {
		failover = false
	}
	if !failover {
		a.fail(now, a.lastError())
		return
	}
	a.exclude(i)
	a.failed = true
	switch o.Class {
	case ContextLength:
		// Never resend to the same model; only larger windows remain.
		for j := range a.r.targets {
			u := &a.r.targets[j]
			if u.Model == t.Model || (t.ContextWindow > 0 && u.ContextWindow > 0 && u.ContextWindow <= t.ContextWindow) {
				a.exclude(j)
			}
		}
	case BadRequestParam:
		// Another target may accept it: another model, or one that drops the
		// rejected parameter.
		param := ""
		if o.Err != nil {
			param = o.Err.Param
		}
		for j := range a.r.targets {
			u := &a.r.targets[j]
			if u.Model == t.Model && (param == "" || !contains(u.DropParams, param)) {
				a.exclude(j)
			}
		}
	}
	a.phase = phasePick
}

// withdrawLocked takes one retry from the route's budget. Caller holds
// a.r.mu.
func (a *Attempt) withdrawLocked(now time.Time) bool {
	r := a.r
	req, ret := r.budget.sums(now)
	req, ret = req+r.fleetReq, ret+r.fleetRet
	if int(ret)+1 > a.e.allowed(req) {
		return false
	}
	r.budget.add(now, 0, 1)
	return true
}

// Backoff is the full-jitter backoff before retry n (0-based): u scaled to
// [0, min(cap, base*2^n)), where u is a uniform random number in [0, 1).
func Backoff(n int, base, cap time.Duration, u float64) time.Duration {
	d := min(base, cap)
	for i := 0; i < n && d < cap; i++ {
		if d > cap/2 {
			d = cap // also keeps the doubling from overflowing
			break
		}
		d *= 2
	}
	return time.Duration(u * float64(d))
}

func cost(p Price, u llm.Usage, outTokens int) float64 {
	in := u.InputTokens - u.CachedInputTokens
	return (float64(in)*p.InputPerMTok + float64(u.CachedInputTokens)*p.CachedInputPerMTok + float64(outTokens)*p.OutputPerMTok) / 1e6
}

// providerError is the error to return when the request stops after o.
func providerError(o Outcome) *llm.Error {
	if o.Err != nil {
		e := *o.Err
		if e.Status == 0 {
			e.Status = o.Status
		}
		if e.RetryAfter == 0 {
			e.RetryAfter = o.RetryAfter
		}
		if gatewayStatus(o.Class) {
			e.Status = 502
		}
		return &e
	}
	status := o.Status
	typ := classType(o.Class)
	if status == 0 {
		status = llm.StatusFor(typ)
	}
	if gatewayStatus(o.Class) {
		status = 502
	}
	return &llm.Error{Status: status, Type: typ, Code: string(o.Class), Message: "upstream attempt failed: " + string(o.Class), RetryAfter: o.RetryAfter}
}

// gatewayStatus reports whether the client's error for class c is a 502
// rather than the upstream's status: a 1xx, 3xx or 499 passed on would mean
// something else to the client (switch protocols, follow a redirect, you
// went away).
func gatewayStatus(c Class) bool { return c == ProtocolError || c == UpstreamCanceled }

func classType(c Class) llm.ErrorType {
	switch c {
	case RateLimited:
		return llm.ErrRateLimit
	case Overloaded:
		return llm.ErrOverloaded
	case Auth:
		return llm.ErrAuthentication
	case BadRequestParam:
		return llm.ErrInvalidRequest
	case ContextLength:
		return llm.ErrContextLength
	case ContentFilter:
		return llm.ErrContentFilter
	case TimeoutTTFT, Stall, TokenRateFloor, TimeoutTotal:
		return llm.ErrTimeout
	default:
		return llm.ErrServer
	}
}

// honest is the error when no tier can serve: 503 with Retry-After.
func (a *Attempt) honest(now time.Time, reason string) *llm.Error {
	msg := fmt.Sprintf("route %q: %s after %d attempts", a.req.Route, reason, a.attempts)
	if a.last != "" {
		msg += "; last outcome " + string(a.last)
	}
	return &llm.Error{Status: 503, Type: llm.ErrOverloaded, Code: "no_target_available", Message: msg,
		RetryAfter: a.e.set.RetryAfter.D()}
}

func (a *Attempt) fail(now time.Time, err *llm.Error) {
	a.phase = phaseFinal
	a.d.set(Fail, nil, err)
	class := string(a.last)
	var ev events.Event // see BeginInto
	ev.Time, ev.Kind, ev.RequestID, ev.Route = now, events.RequestEnd, a.req.ID, a.req.Route
	ev.Client = a.req.Client
	ev.Outcome, ev.Status, ev.Class, ev.Attempt = events.OutcomeFailed, err.Status, class, a.attempts
	ev.Duration, ev.Stream = sub(now, a.start), a.req.Stream
	a.e.sink.Emit(ev)
}

func (a *Attempt) done(now time.Time, t *Target, tier string) {
	a.phase = phaseFinal
	a.d.set(Done, t, nil)
	outcome := events.OutcomeServed
	key := ""
	if t != nil {
		key = a.r.states[a.cur].key
	}
	if len(a.r.tiers) > 0 && tier != a.r.tiers[0] {
		outcome = events.OutcomeDegraded
		a.e.sink.Emit(events.Event{Time: now, Kind: events.TierServed, RequestID: a.req.ID, Route: a.req.Route, Target: key, Tier: tier})
	}
	var ev events.Event // see BeginInto
	ev.Time, ev.Kind, ev.RequestID, ev.Route = now, events.RequestEnd, a.req.ID, a.req.Route
	ev.Client = a.req.Client
	ev.Target, ev.Tier, ev.Outcome, ev.Class, ev.Attempt = key, tier, outcome, string(OK), a.attempts
	ev.Duration, ev.Stream = sub(now, a.start), a.req.Stream
	a.e.sink.Emit(ev)
}
