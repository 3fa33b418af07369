package lifecycle

import (
	"strings"
	"time"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

// Request drives one user request through the decision core: the attempt
// loop around a policy.Attempt, plus what the core does not know of a
// stream — whether the answer reached the client (committed), whether it
// can still be continued, and the in-band error that ends it when it
// cannot. Both engines drive it the same way (see the package
// documentation). A Request is used by one goroutine; its zero value is
// ready for Begin, and Begin may reuse it once its request is over.
type Request struct {
	att       policy.Attempt
	committed bool       // tokens reached the client
	toolsSent bool       // tool-call deltas reached the client
	cut       *llm.Error // the failure that interrupted the committed stream

	// The answer so far, as the client received it (see Attempt).
	partial  strings.Builder
	tools    []llm.ToolCall
	sent     int    // output deltas forwarded
	servedBy string // the target whose output the client received last
	cur      Attempt
}

// Step is what the caller must do next: a policy.Decision, and for a Fail
// of a committed stream the in-band error to end it with.
type Step struct {
	policy.Decision
	// InBand is set on Fail when the stream is committed: end it with this
	// in-band error event (never the end marker, never Err: a fall-back's
	// own rejection must not mask the failure that cut the stream).
	InBand *llm.Error
}

// Begin starts req on e at now (request.start), resetting r.
func (r *Request) Begin(e *policy.Engine, now time.Time, req policy.Request) {
	r.committed, r.toolsSent, r.cut = false, false, nil
	r.partial.Reset()
	r.tools, r.sent, r.servedBy, r.cur = nil, 0, "", Attempt{}
	e.BeginInto(&r.att, now, req)
}

// Next returns what to do at now.
func (r *Request) Next(now time.Time) (s Step) {
	s.Decision = r.att.Next(now)
	if s.Kind == policy.Fail && r.committed {
		s.InBand = r.cut
		if s.InBand == nil {
			s.InBand = CutError(&policy.Outcome{Class: policy.CutMidStream})
		}
	}
	return s
}

// Commit records that the attempt's first token is being forwarded: from
// here on the client sees the answer, and a failure can only be continued
// (on a target that prefills) or ended in band. tool says the token is a
// tool-call delta, which no target can continue.
func (r *Request) Commit(tool bool) {
	r.committed = true
	r.toolsSent = r.toolsSent || tool
}

// Committed reports whether part of the answer reached the client.
func (r *Request) Committed() bool { return r.committed }

// Observe reports the outcome of the last Send (or ServeCached). On a
// committed stream a failure is partial, and the first one is the in-band
// error the stream ends with; with tool-call deltas sent, the request ends
// here (request.end) instead of failing over.
func (r *Request) Observe(now time.Time, o policy.Outcome) {
	if r.committed && o.Class != policy.OK {
		o.Partial = true
		if r.cut == nil {
			r.cut = CutError(&o)
		}
	}
	r.att.Observe(now, o)
	if r.committed && r.toolsSent && o.Class != policy.OK {
		r.att.End(now, r.cut)
	}
}

// Cancel ends the request because the client went away, with an attempt
// outstanding or not (policy.Attempt.Cancel: request.end failed, 499).
func (r *Request) Cancel(now time.Time) { r.att.Cancel(now) }

// Shutdown ends the request because the gateway is stopping
// (policy.Attempt.Shutdown): request.end carries err and class shutdown.
func (r *Request) Shutdown(now time.Time, err *llm.Error) { r.att.Shutdown(now, err) }

// Attempts returns the upstream attempts made so far.
func (r *Request) Attempts() int { return r.att.Attempts() }

// Partial returns the answer's text that reached the client.
func (r *Request) Partial() string { return r.partial.String() }

// Tools returns the tool calls that reached the client, assembled from
// their deltas (the last may be partial).
func (r *Request) Tools() []llm.ToolCall { return r.tools }

// Sent returns how many output deltas reached the client.
func (r *Request) Sent() int { return r.sent }

// ServedBy returns the target whose output the client received last, ""
// if none.
func (r *Request) ServedBy() string { return r.servedBy }

// Request returns the request as the core sees it.
func (r *Request) Request() policy.Request { return r.att.Request() }
