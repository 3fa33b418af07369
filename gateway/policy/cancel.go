package policy

import (
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/llm"
)

// Cancel ends the request because the client went away — during a backoff
// wait, between attempts, or while an attempt is outstanding. An
// outstanding attempt ends with an attempt.end of class client_canceled
// that is never held against its target (a half-open trial slot is given
// back); the request ends with a request.end of outcome failed, status 499
// and class client_canceled. After Cancel, Next returns Fail. Cancelling a
// request that already ended (Done, Fail) does nothing.
func (a *Attempt) Cancel(now time.Time) {
	a.abort(now, ClientCanceled, &llm.Error{Status: 499, Type: llm.ErrInvalidRequest, Code: "client_canceled",
		Message: "the client canceled the request"})
}

// Shutdown ends the request as Cancel does, because the gateway itself is
// stopping (its drain deadline passed): an outstanding attempt ends with
// class shutdown, never held against its target, and the request ends with
// err (a 503 the client may retry elsewhere) and class shutdown.
func (a *Attempt) Shutdown(now time.Time, err *llm.Error) { a.abort(now, Shutdown, err) }

func (a *Attempt) abort(now time.Time, class Class, err *llm.Error) {
	if a.phase == phaseFinal {
		return
	}
	if a.phase == phaseSending {
		i := a.cur
		t := &a.r.targets[i]
		ts := a.r.states[i]
		a.e.sink.Emit(events.Event{Time: now, Kind: events.AttemptEnd, RequestID: a.req.ID, Route: a.req.Route, Client: a.req.Client,
			Target: ts.key, Tier: t.Tier, Attempt: a.attempts, Stream: a.req.Stream,
			Class: string(class), Duration: now.Sub(a.curStart)})
		var p pending
		ts.mu.Lock()
		ts.record(now, a.curGen, a.curTrial, class, 0, now.Sub(a.curStart), 0, &p)
		ts.mu.Unlock()
		p.flush(a.e.sink)
	}
	a.last = class
	a.fail(now, err)
}

// End fails the request with err between attempts, because the caller can
// take it no further: a stream whose answer already reached the client with
// tool-call deltas, which no target can continue. It emits request.end
// (failed, err's status, the last class) and Next returns Fail with err. It
// does nothing while an attempt is outstanding (Observe it first) or once
// the request ended.
func (a *Attempt) End(now time.Time, err *llm.Error) {
	if a.phase == phaseFinal || a.phase == phaseSending {
		return
	}
	a.fail(now, err)
}
