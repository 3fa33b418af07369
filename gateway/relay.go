package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/inbound"
	"github.com/brownout-dev/brownout/llm/sse"
)

// One attempt against an upstream: its watchdog, the request, and the
// relay of its answer or stream to the client.

// watchdogError is the cancellation cause when an attempt's watchdog fires.
type watchdogError struct{ class policy.Class }

func (e *watchdogError) Error() string { return "watchdog: " + string(e.class) }

// errFinishedNoEnd cancels a stream whose upstream sent its finish reason
// but not its end marker within the grace period.
var errFinishedNoEnd = errors.New("finished without end marker")

// watch runs a lifecycle.Watchdog on real time: one timer per attempt, set
// to the watchdog's next deadline — moved earlier when a token brings one
// ahead (the idle gap and the rate floor count from the first token on),
// and on to the next when it rings early.
type watch struct {
	mu     sync.Mutex
	wd     lifecycle.Watchdog
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

func newWatch(start time.Time, t policy.Timeouts, cancel context.CancelCauseFunc) *watch {
	w := &watch{cancel: cancel}
	w.mu.Lock()
	if d := w.wd.Start(start, t); !d.IsZero() {
		w.timer = time.AfterFunc(time.Until(d), w.fire)
	}
	w.mu.Unlock()
	return w
}

// arm sets the timer to d. The caller holds mu.
func (w *watch) arm(d time.Time) {
	if w.timer == nil {
		w.timer = time.AfterFunc(time.Until(d), w.fire)
		return
	}
	w.timer.Reset(time.Until(d))
}

func (w *watch) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch v, c, next := w.wd.Fire(time.Now()); v {
	case lifecycle.Expired:
		w.cancel(&watchdogError{c})
	case lifecycle.Finished:
		w.cancel(errFinishedNoEnd)
	default:
		if !next.IsZero() {
			w.arm(next)
		}
	}
}

func (w *watch) token(now time.Time) {
	w.mu.Lock()
	if d, ok := w.wd.Token(now, 1); ok {
		w.arm(d)
	}
	w.mu.Unlock()
}

func (w *watch) ttft() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wd.TTFT()
}

// finish arms the short grace for the end marker after a finish reason.
func (w *watch) finish() {
	w.mu.Lock()
	w.arm(w.wd.Finish(time.Now()))
	w.mu.Unlock()
}

func (w *watch) stop() {
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
}

// attemptCtx derives an attempt's context: total deadline, connect timeout
// for the dialer, and a cancel cause for the watchdog.
func attemptCtx(ctx context.Context, d *policy.Decision, now time.Time) (context.Context, context.CancelCauseFunc, context.CancelFunc) {
	ctx, cancelCause := context.WithCancelCause(ctx)
	var cancel context.CancelFunc = func() {}
	if !d.Deadlines.Total.IsZero() {
		ctx, cancel = context.WithDeadlineCause(ctx, d.Deadlines.Total, &watchdogError{policy.TimeoutTotal})
	}
	if !d.Deadlines.Connect.IsZero() {
		ctx = withConnectTimeout(ctx, d.Deadlines.Connect.Sub(now))
	}
	return ctx, cancelCause, cancel
}

// transportEnd tells how an attempt ended from an error sending its
// request or reading its answer: the client left, a deadline or the
// watchdog fired (class), the connection was never made, or it broke.
func transportEnd(parent, ctx context.Context, err error) (lifecycle.End, policy.Class) {
	if parent.Err() != nil {
		return lifecycle.ClientGone, ""
	}
	var we *watchdogError
	if errors.As(context.Cause(ctx), &we) {
		return lifecycle.TimedOut, we.class
	}
	var cte *connectTimeoutError
	var oe *net.OpError
	if errors.As(err, &cte) || (errors.As(err, &oe) && oe.Op == "dial") {
		return lifecycle.Refused, ""
	}
	var pe *protocolError
	if errors.As(err, &pe) {
		return lifecycle.Protocol, ""
	}
	return lifecycle.Broken, ""
}

// transportOutcome classifies an error from sending a request.
func transportOutcome(parent, ctx context.Context, err error) policy.Outcome {
	var o lifecycle.Observation
	o.End, o.Timeout = transportEnd(parent, ctx, err)
	var pe *protocolError
	if o.End == lifecycle.Protocol && errors.As(err, &pe) {
		o.Status = pe.status
		o.Err = &llm.Error{Status: 502, Type: llm.ErrServer, Code: string(policy.ProtocolError), Message: pe.Error()}
	}
	return lifecycle.Classify(&o)
}

// prepare builds the upstream request of a Send decision. A request the
// target's format cannot express is a skipped outcome (nothing is sent;
// another target may take it), not a gateway error.
func (x *exchange) prepare(ctx context.Context, d *policy.Decision, stream bool) (*http.Request, *upstream, *policy.Outcome) {
	u := x.rt.upstreams[d.Target.Provider]
	if u == nil {
		return nil, nil, &policy.Outcome{Class: policy.Auth, Err: &llm.Error{Status: 500, Type: llm.ErrServer, Message: "no provider named " + d.Target.Provider}}
	}
	req := new(llm.Request)
	if bad := x.at.Prepare(req, x.req, d.Target, x.rt.cfg.Continuation.Instruction); bad != nil {
		return nil, nil, bad
	}
	if skip := x.honour(req, u.codec.Format(), d.Target.Key()); skip != nil {
		return nil, nil, skip
	}
	req.Stream = stream
	req.IncludeUsage = stream && u.streamUsage
	hr, err := u.newRequest(ctx, req, x.id)
	if err != nil {
		var ue *llm.UnsupportedError
		if errors.As(err, &ue) {
			// Not sent: an explicit skip, with the reason, not an attempt.
			return nil, nil, &policy.Outcome{Class: policy.Skipped, Status: 400,
				Err: &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Param: ue.Feature, Message: ue.Error()}}
		}
		return nil, nil, &policy.Outcome{Class: policy.BadRequestParam, Status: 400, Err: llm.BadRequest("", "%v", err)}
	}
	x.tr.Send(d, u.name, string(u.kind), hr) // the client span; traceparent
	return hr, u, nil
}

// errorOutcome reads a non-2xx answer that came ttft after the attempt
// began.
func errorOutcome(u *upstream, resp *http.Response, ttft time.Duration) policy.Outcome {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := u.codec.DecodeError(resp.StatusCode, resp.Header, body)
	return lifecycle.Classify(&lifecycle.Observation{Status: resp.StatusCode, Err: e, TTFT: ttft})
}

// sendOnce makes one non-streamed attempt.
func (x *exchange) sendOnce(parent context.Context, d *policy.Decision) policy.Outcome {
	start := time.Now()
	ctx, cancelCause, cancel := attemptCtx(parent, d, start)
	defer cancel()
	defer cancelCause(nil)
	hr, u, bad := x.prepare(ctx, d, false)
	if bad != nil {
		return *bad
	}
	w := newWatch(start, policy.Timeouts{FirstToken: d.Timeouts.FirstToken, Total: d.Timeouts.Total}, cancelCause)
	defer w.stop()
	resp, err := u.do(hr)
	if err != nil {
		return transportOutcome(parent, ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return errorOutcome(u, resp, time.Since(start))
	}
	// The first-token deadline runs until the first byte of the body: some
	// servers send a 200 header at once and the answer much later.
	fb := &firstByte{r: resp.Body, w: w}
	limit := responseCap(d.Target)
	body, err := io.ReadAll(io.LimitReader(fb, limit+1))
	x.hold(cap(body)) // held until the request ends (x.raw, the decoded answer)
	obs := lifecycle.Observation{Status: resp.StatusCode, TTFT: fb.at.Sub(start), PromptTokens: x.promptTokens}
	if err == nil && int64(len(body)) > limit {
		obs.End = lifecycle.Malformed // larger than the target's max_response_bytes
		return lifecycle.Classify(&obs)
	}
	if err != nil {
		obs.End, obs.Timeout = transportEnd(parent, ctx, err)
		obs.TTFT = 0
		if obs.End == lifecycle.Broken {
			obs.End = lifecycle.Cut // the body broke off after its headers
		}
		return lifecycle.Classify(&obs)
	}
	r, err := u.codec.DecodeResponse(body)
	if err != nil {
		obs.End = lifecycle.Malformed
		return lifecycle.Classify(&obs)
	}
	if r.Model == "" {
		r.Model = d.Target.Model
	}
	obs.Usage, obs.HaveUsage = r.Usage, true
	if x.at.Rejects(r, jsonValid) {
		// A structured answer that does not parse is not served: another
		// target may produce a valid one.
		x.rejected = r
		obs.Invalid = true
		return lifecycle.Classify(&obs)
	}
	x.resp = r
	x.raw = nil
	if u.codec.Format() == x.in.Format() {
		x.raw = body
	}
	return lifecycle.Classify(&obs)
}

func jsonValid(s string) bool { return json.Valid([]byte(s)) }

// firstByte notes when the first byte of a body arrives.
type firstByte struct {
	r  io.Reader
	w  *watch
	at time.Time
}

func (f *firstByte) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n > 0 && f.at.IsZero() {
		f.at = time.Now()
		f.w.token(f.at)
	}
	return n, err
}

// sendStream makes one streamed attempt, forwarding each event to the client
// as it arrives. Nothing is written before the attempt's first token, so a
// failure before it is invisible to the client.
func (x *exchange) sendStream(parent context.Context, d *policy.Decision) policy.Outcome {
	start := time.Now()
	ctx, cancelCause, cancel := attemptCtx(parent, d, start)
	defer cancel()
	defer cancelCause(nil)
	hr, u, bad := x.prepare(ctx, d, true)
	if bad != nil {
		return *bad
	}
	w := newWatch(start, d.Timeouts, cancelCause)
	defer w.stop()
	resp, err := u.do(hr)
	if err != nil {
		return transportOutcome(parent, ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return errorOutcome(u, resp, time.Since(start))
	}
	o := x.relay(parent, ctx, d, u, resp, w)
	if o.Class == policy.OK {
		drainEnd(resp.Body, cancelCause)
	}
	return o
}

// Reading what follows an answer's end marker (see drainEnd).
const (
	drainWait = 100 * time.Millisecond
	drainMax  = 16 << 10
)

var errDrainTimeout = errors.New("no end of body after the end marker")

// drainEnd reads what follows a stream's end marker (the chunked
// terminator, often in a write of its own) so that the transport pools the
// connection: a body closed before its end closes it. It waits drainWait at
// most, then cancels the attempt's context, and reads drainMax bytes at
// most.
func drainEnd(body io.Reader, cancel context.CancelCauseFunc) {
	t := time.AfterFunc(drainWait, func() { cancel(errDrainTimeout) })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, body, drainMax)
}

// relay forwards the events of an attempt's answer (body) to the client.
// It is apart from sendStream so that the calls sendStream makes before the
// answer (encoding, sending) run on a shallow stack (see run).
//
// When part of the answer already reached the client (a continuation, d
// sets Prefill or Replay), every output of the attempt goes through a
// lifecycle.Continuation first: only what it lets through is forwarded,
// and a divergence ends the attempt (Observation.Diverged).
//
//go:noinline
func (x *exchange) relay(parent, ctx context.Context, d *policy.Decision, u *upstream, resp *http.Response, w *watch) policy.Outcome {
	a := x.at
	continuing := a.Continuing() // a continuation of a partial answer
	// Events are flushed to the client before the attempt waits for more
	// upstream input, not one by one: events that arrived together leave
	// in one write, and nothing that arrived waits on the network.
	// The meter charges the byte budget for the decoder's copies of the
	// event being read, before it is complete (eventMeter).
	lf := &lazyFlush{r: eventMeter{body: capped{r: resp.Body, left: responseCap(d.Target)}, x: x}, rc: x.rc}
	meter := &lf.r
	defer lf.now()
	dec := u.codec.NewStreamDecoder(lf)
	var (
		tokens    int
		usage     llm.Usage
		haveUsage bool
		finish    llm.FinishReason
		upID      string
		upStart   *llm.Usage // the usage the upstream's start reported
		obs       = lifecycle.Observation{Status: resp.StatusCode}
		ended     bool // obs.End is known
		finished  bool
	)
	flush := func() { lf.pending = true }
	emit := func(ev llm.StreamEvent) bool {
		if err := x.enc.Encode(ev); err != nil {
			return false
		}
		flush()
		return true
	}
	// start commits the client stream at the first token of the first attempt.
	begin := func() {
		if x.committed {
			return
		}
		x.setServed(x.w.Header(), d.Target.Key(), d.Try, d.Tier)
		x.commitStream()
		// The client sees the model it asked for and an ID in its
		// format's style (see writeAnswer).
		x.respID = upID
		if x.respID == "" {
			x.respID = x.id
		}
		x.respID = inbound.ResponseID(x.in.Format(), x.respID)
		x.model = x.req.Model
		// The input tokens as the upstream's start reported them, else
		// the gateway's estimate; the final usage has the billed count.
		start := upStart
		if start == nil || start.InputTokens == 0 {
			x.evUsage[0] = llm.Usage{InputTokens: x.promptTokens}
			start = &x.evUsage[0]
		}
		_ = x.enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: x.respID, Model: x.model, Usage: start})
	}
	for {
		ev, err := dec.Next()
		meter.delivered()
		if err != nil {
			switch {
			case err == io.EOF || (finished && errors.Is(context.Cause(ctx), errFinishedNoEnd)):
				obs.End = lifecycle.Answered
				if continuing && !x.continued(a, d, emit, a.Finish) {
					obs.Diverged = true
				}
			case parent.Err() != nil:
				obs.End = lifecycle.ClientGone
			case errors.Is(err, io.ErrUnexpectedEOF):
				obs.End, obs.Timeout = transportEnd(parent, ctx, err)
				if obs.End == lifecycle.Broken {
					obs.End = lifecycle.Cut
				}
			case isEventError(err):
				// An event that does not parse in a stream that goes on:
				// skipped and counted, up to the limit.
				if skip, n := a.Malformed(x.rt.cfg.Policy.MalformedLimit()); skip {
					x.s.emit(events.Event{Time: time.Now(), Kind: events.StreamMalformed, RequestID: x.id, Route: x.req.Model,
						Target: x.lastTarget, Attempt: d.Try, Stream: true, Value: float64(n), Reason: lifecycle.MalformedReason(tokens)})
					continue
				}
				obs.End = lifecycle.Malformed
			case context.Cause(ctx) == nil:
				obs.End = lifecycle.Cut
			default:
				obs.End, obs.Timeout = transportEnd(parent, ctx, err)
			}
			break
		}
		switch ev.Type {
		case llm.EventStart:
			upID, upStart, x.upModel = ev.ID, ev.Usage, ev.Model
			continue
		case llm.EventTextDelta, llm.EventToolCallDelta:
			// A token arrived when the read that completed it returned
			// (lazyFlush.at): the events of one read arrived together,
			// and the clock is read once per read, not once per token.
			w.token(lf.arrived())
			tokens++
			if continuing {
				if !x.continueDelta(a, d, emit, &ev) {
					obs.End, obs.Diverged, ended = lifecycle.Answered, true, true
				}
				break
			}
			begin()
			if ev.Type == llm.EventTextDelta {
				a.Text(ev.Text)
				x.hold(len(ev.Text))
			} else {
				if ev.ToolCall != nil && ev.ToolCall.ID != "" {
					tc := *ev.ToolCall
					tc.ID = inbound.ToolCallID(x.in.Format(), tc.ID)
					ev.ToolCall = &tc
				}
				a.ToolCall(ev.ToolCall)
			}
			if !emit(ev) {
				obs.End, ended = lifecycle.ClientGone, true
			}
		case llm.EventFinish:
			if !continuing {
				a.Finish()
			} else if !x.continued(a, d, emit, a.Finish) {
				obs.End, obs.Diverged, ended = lifecycle.Answered, true, true
				break
			}
			finish = ev.FinishReason
			finished = true
			begin()
			w.finish()
			if !emit(ev) {
				obs.End, ended = lifecycle.ClientGone, true
			}
		case llm.EventUsage:
			if ev.Usage != nil {
				usage, haveUsage = *ev.Usage, true
				if x.wantUsage() && x.committed {
					u := &x.evUsage[1]
					*u = usage
					if continuing {
						// The client is owed the usage of the answer it got:
						// the output it received, and its own prompt (a
						// prefill bills what was sent as input too).
						u.OutputTokens = x.lc.Sent()
						if d.Prefill {
							u.InputTokens = max(0, u.InputTokens-a.Before())
						}
					}
					emit(llm.StreamEvent{Type: llm.EventUsage, Usage: u})
				}
			}
			continue
		case llm.EventError:
			obs.End, obs.Err, ended = lifecycle.ErrorEvent, ev.Err, true
		}
		if ended {
			break
		}
	}
	obs.TTFT = w.ttft()
	obs.Tokens = tokens
	obs.PromptTokens = x.promptTokens
	if haveUsage {
		obs.Usage, obs.HaveUsage = usage, true
	}
	outcome := lifecycle.Classify(&obs)
	if outcome.Class == policy.OK {
		if !x.committed {
			// A clean, empty answer: still an answer.
			begin()
			if finish != "" {
				emit(llm.StreamEvent{Type: llm.EventFinish, FinishReason: finish})
			}
		}
		a.Answered()
		x.finish = finish
		x.usage = outcome.Usage
		if x.rt.cacheable[x.req.Model] && !continuing {
			x.resp = &llm.Response{ID: x.respID, Model: x.model, Content: x.lc.Partial(), ToolCalls: x.lc.Tools(),
				FinishReason: finish, Usage: outcome.Usage}
		}
		return outcome
	}
	return outcome
}

// isEventError reports whether err is an *sse.EventError. It is apart
// from relay, which would allocate the target of errors.As at every end
// of a stream.
func isEventError(err error) bool {
	var ee *sse.EventError
	return errors.As(err, &ee)
}

// lazyFlush reads an upstream body and flushes what was written to the
// client (pending) before each read, the one place a stream can wait.
// responseCap is how much of one answer of t is read (max_response_bytes).
func responseCap(t *policy.Target) int64 {
	if t != nil && t.MaxResponseBytes > 0 {
		return t.MaxResponseBytes
	}
	return maxResponseBody
}

// errAnswerTooLarge ends a stream larger than its target's
// max_response_bytes.
var errAnswerTooLarge = errors.New("upstream answer larger than the target's max_response_bytes")

// capped reads at most left bytes of r, then fails with errAnswerTooLarge.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errAnswerTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

type lazyFlush struct {
	r       eventMeter // the body, metered (one allocation with lazyFlush)
	rc      *http.ResponseController
	pending bool
	at      time.Time // when the last read that brought bytes returned
}

func (l *lazyFlush) Read(p []byte) (int, error) {
	l.now()
	n, err := l.r.Read(p)
	if n > 0 {
		l.at = time.Now()
	}
	return n, err
}

// arrived returns when the bytes being decoded arrived: the time of the
// last read that brought any.
func (l *lazyFlush) arrived() time.Time {
	if l.at.IsZero() {
		return time.Now()
	}
	return l.at
}

// now flushes what is pending.
func (l *lazyFlush) now() {
	if l.pending {
		l.pending = false
		_ = l.rc.Flush()
	}
}
