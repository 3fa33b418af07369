package lifecycle

import (
	"time"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

// End is how an upstream attempt ended, as its engine saw it: the HTTP shell
// from the connection, the response and the stream decoder; the simulator
// from the mock's plan.
type End uint8

// How an attempt ended.
const (
	// Answered: the answer ended as it should — a whole body, or a stream's
	// end marker (or its finish reason, when the marker never came).
	Answered End = iota
	// Refused: no connection was made (refused, unreachable, connect
	// timeout): nothing reached the provider.
	Refused
	// Broken: the connection broke before an answer (reset, closed with no
	// response, a body read that failed). With tokens received it is a cut.
	Broken
	// Cut: a streamed answer stopped without its end marker or finish.
	Cut
	// Malformed: an event or body did not parse.
	Malformed
	// TimedOut: a deadline or the watchdog fired; Observation.Timeout names
	// which.
	TimedOut
	// ClientGone: the client went away.
	ClientGone
	// ErrorEvent: a 2xx stream carried an in-band error event
	// (Observation.Err).
	ErrorEvent
	// Protocol: the answer was not one a client can take — not valid HTTP
	// (a header past the size limit, a flood of 1xx answers, garbage) or a
	// final 1xx (Observation.Status, Observation.Err say which).
	Protocol
)

var endNames = [...]string{"answered", "refused", "broken", "cut", "malformed", "timed_out", "client_gone", "error_event", "protocol"}

func (e End) String() string {
	if int(e) < len(endNames) {
		return endNames[e]
	}
	return "end(?)"
}

// Observation is what the upstream did during one attempt. Classify turns it
// into the policy.Outcome the decision core observes.
type Observation struct {
	End End
	// Status is the HTTP status of the response; 0 when none arrived.
	Status int
	// Err is the provider's error: the decoded body of a non-2xx answer, or
	// the in-band error event (ErrorEvent).
	Err *llm.Error
	// RetryAfter is the Retry-After header, used when Err carries none.
	RetryAfter time.Duration
	// Timeout is the class of the deadline that fired (TimedOut).
	Timeout policy.Class
	// Tokens counts the output tokens (text or tool-call deltas) received.
	Tokens int
	// TTFT is the time to the first token (or to the response).
	TTFT time.Duration
	// Usage is the metered usage the upstream reported (HaveUsage). Without
	// it a 2xx answer is metered as PromptTokens in, Tokens out.
	Usage        llm.Usage
	HaveUsage    bool
	PromptTokens int
	// Invalid: an eval rejected the complete answer (structured output that
	// does not parse): the attempt fails over as invalid_output.
	Invalid bool
	// Diverged: the attempt continued a partial answer and its output did
	// not continue it (Continuation): nothing more of it was forwarded, and
	// it fails over as invalid_output.
	Diverged bool
}

// errInBand is the error of an in-band error event that carried none.
var errInBand = &llm.Error{Status: 500, Type: llm.ErrServer, Message: "in-band stream error"}

// errInvalidOutput is the error of an answer rejected as invalid output.
var errInvalidOutput = &llm.Error{Status: 502, Type: llm.ErrServer, Code: "invalid_output", Message: "the upstream answer is not valid JSON"}

// errDiverged is the error of a continuation whose output diverged from
// the partial answer.
var errDiverged = &llm.Error{Status: 502, Type: llm.ErrServer, Code: "continuation_diverged",
	Message: "the fall-back's answer did not continue the partial answer"}

// Classify returns the outcome of an attempt from what the upstream did. It
// is the one place both engines turn an attempt into an outcome class; the
// caller sets Outcome.Partial (Request.Observe does).
func Classify(o *Observation) policy.Outcome {
	out := policy.Outcome{Status: o.Status, TTFT: o.TTFT, BytesSent: o.End != Refused}
	answer := o.Status >= 200 && o.Status <= 299
	switch {
	case o.End == ClientGone:
		out.Class = policy.ClientCanceled
	case o.End == Refused:
		out.Class, out.Status = policy.ConnectError, 0
	case o.End == TimedOut:
		out.Class = o.Timeout
		if out.Class == "" {
			out.Class = policy.TimeoutTotal
		}
	case o.End == Protocol:
		out.Class, out.Err = policy.ProtocolError, o.Err
		if out.Err == nil {
			out.Err = &llm.Error{Status: 502, Type: llm.ErrServer, Code: string(policy.ProtocolError), Message: "the upstream's answer is not valid HTTP"}
		}
		return out
	case o.Status != 0 && !answer:
		out.Class, out.Err = classifyErr(o.Status, o.Err), o.Err
		out.RetryAfter = retryAfter(o)
		return out // an error answer meters nothing
	case o.End == ErrorEvent:
		e := o.Err
		if e == nil {
			e = errInBand
		}
		st := e.Status
		if st == 0 {
			st = llm.StatusFor(e.Type)
		}
		out.Class, out.Status, out.Err = classifyErr(st, e), st, e
		out.RetryAfter = e.RetryAfter
	case o.End == Broken && o.Tokens == 0:
		out.Class = policy.Reset
	case o.End == Broken, o.End == Cut:
		out.Class = policy.CutMidStream
	case o.End == Malformed:
		out.Class = policy.MalformedStream
	case o.Diverged:
		out.Class, out.Err, out.Diverged = policy.InvalidOutput, errDiverged, true
	case o.Invalid:
		out.Class, out.Err = policy.InvalidOutput, errInvalidOutput
	default:
		out.Class = policy.OK
	}
	if !answer {
		return out
	}
	out.OutputTokens = o.Tokens
	if o.HaveUsage {
		out.Usage = o.Usage
		if o.Usage.OutputTokens > 0 {
			out.OutputTokens = o.Usage.OutputTokens
		}
	} else {
		out.Usage = llm.Usage{InputTokens: o.PromptTokens, OutputTokens: o.Tokens}
	}
	return out
}

// EstimatePromptTokens is the gateway's estimate of a request's input
// tokens (a character count over four): what an attempt meters when the
// upstream reported no usage (a stream cut, stalled or abandoned before its
// usage event), in both engines (Observation.PromptTokens).
func EstimatePromptTokens(req *llm.Request) int {
	n := 0
	for i := range req.Messages {
		m := &req.Messages[i]
		for j := range m.Content {
			n += len(m.Content[j].Text)
		}
		for j := range m.ToolCalls {
			n += len(m.ToolCalls[j].Arguments)
		}
	}
	for i := range req.Tools {
		n += len(req.Tools[i].Parameters) + len(req.Tools[i].Description)
	}
	return n/4 + 1
}

func classifyErr(status int, e *llm.Error) policy.Class {
	t := llm.TypeForStatus(status)
	if e != nil && e.Type != "" {
		t = e.Type
	}
	return policy.Classify(status, t)
}

func retryAfter(o *Observation) time.Duration {
	if o.Err != nil && o.Err.RetryAfter > 0 {
		return o.Err.RetryAfter
	}
	return o.RetryAfter
}

// CutError is the in-band error that ends a committed stream cut by
// outcome o (the provider's own error when it sent one).
func CutError(o *policy.Outcome) *llm.Error {
	if o.Err != nil {
		return o.Err
	}
	e := &llm.Error{Status: 502, Type: llm.ErrServer, Code: string(o.Class)}
	switch o.Class {
	case policy.Stall, policy.TokenRateFloor, policy.TimeoutTotal, policy.TimeoutTTFT:
		e.Status, e.Type = 504, llm.ErrTimeout
		e.Message = "the upstream stream timed out mid-answer (" + string(o.Class) + "); the answer above is incomplete"
	case policy.MalformedStream:
		e.Message = "the upstream sent a malformed event mid-answer; the answer above is incomplete"
	default:
		e.Message = "the upstream stream was cut mid-answer (" + string(o.Class) + "); the answer above is incomplete"
	}
	return e
}
