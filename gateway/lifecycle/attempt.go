package lifecycle

import (
	"strconv"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

// Attempt is one Send of a Request between the decision and its outcome:
// the part of the request path that is the same whether the answer comes
// over HTTP (the gateway's relay) or from a mock's plan (the simulator).
// It shapes the request sent (Prepare: the target's parameters, the
// prefill and the continuation budget), tolerates unparseable events
// (Malformed), checks a continuation before a byte is forwarded, and
// keeps what of the answer reached the client: every delta forwarded
// commits the stream (Request.Commit) and joins the Request's answer so
// far, which a later attempt continues.
//
// The engine feeds it the upstream's output in order — Text and ToolCall
// per delta, Finish at the finish reason or the end of the stream — and
// forwards what each call returns (Pieces when the continuation check
// held several deltas). A false ok means the attempt diverged from what
// the client already has: set Observation.Diverged and end the attempt.
// The per-delta calls do not allocate.
//
// An Attempt belongs to its Request (Request.Attempt) and is valid until
// the next one begins.
type Attempt struct {
	r       *Request
	target  string // provider:model
	prefill bool   // the decision sends the answer so far as a prefill
	cont    *Continuation
	err     error // why the continuation could not start, or diverged
	from    string
	before  int
	bad     int // unparseable events seen
	judged  bool
}

// Attempt starts the attempt of the Send decision d on target (its key,
// "provider:model") for the user's request user (the join check reads the
// names its last message uses). When part of the
// answer already reached the client the attempt is a continuation, in
// d's mode (Replay, else Prefill).
func (r *Request) Attempt(d *policy.Decision, target string, user *llm.Request) *Attempt {
	a := &r.cur
	*a = Attempt{r: r, target: target, prefill: d.Prefill, from: r.servedBy, before: r.sent}
	if !r.committed {
		return a
	}
	mode := Prefill
	if d.Replay {
		mode = Replay
	}
	a.cont, a.err = NewContinuation(mode, r.partial.String(), r.tools)
	if a.cont != nil {
		a.cont.Names(user.LastUserText())
	}
	return a
}

// Prepare writes to out the request to send: user as target t takes it
// (policy.Target.Apply: its model, dropped and overridden parameters),
// then, when the decision sends a prefill, the answer so far as an
// assistant message (after Instruction when instruction is set) and the
// continuation budget: max_tokens less the deltas the client already
// received (a replay regenerates the whole answer, so it keeps the whole
// budget). A request the target cannot take is not sent: the outcome to
// observe instead (bad_request_param; another target may take it).
// user's messages are never written.
func (a *Attempt) Prepare(out *llm.Request, user *llm.Request, t *policy.Target, instruction bool) *policy.Outcome {
	*out = *user
	if err := t.Apply(out); err != nil {
		return &policy.Outcome{Class: policy.BadRequestParam, Status: 400, Err: llm.BadRequest("", "%v", err)}
	}
	if prefill := PrefillText(a.r.partial.String()); a.prefill && prefill != "" {
		msgs := make([]llm.Message, len(out.Messages), len(out.Messages)+1)
		copy(msgs, out.Messages)
		out.Messages = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart(prefill)}})
		if instruction {
			out.Messages = WithInstruction(out.Messages)
		}
		if out.MaxTokens > 0 {
			out.MaxTokens = max(1, out.MaxTokens-a.r.sent)
		}
	}
	return nil
}

// Rejects reports whether resp, a complete non-streamed answer, is
// invalid output that is not served (Observation.Invalid; another target
// may produce a valid one): the request is structured (Structured) and the
// answer is text, not tool calls, that does not parse as JSON. valid is
// the JSON check, called only then (json.Valid, or the detectors' scanner,
// which gives the same verdict).
func (a *Attempt) Rejects(resp *llm.Response, valid func(content string) bool) bool {
	return a.r.att.Request().Structured && len(resp.ToolCalls) == 0 && !valid(resp.Content)
}

// Continuing reports whether the attempt continues a partial answer.
func (a *Attempt) Continuing() bool { return a.cont != nil || a.err != nil }

// From returns the target whose output the client received last before
// this attempt ("" if none), and Before the deltas it had received.
func (a *Attempt) From() string { return a.from }

// Before returns the output deltas the client had received before this
// attempt.
func (a *Attempt) Before() int { return a.before }

// Malformed counts an unparseable event of the stream: skip reports
// whether the stream goes on without it (at most limit are skipped:
// policy.Settings.MalformedLimit), n is how many the attempt has seen.
func (a *Attempt) Malformed(limit int) (skip bool, n int) {
	a.bad++
	return a.bad <= limit, a.bad
}

// MalformedReason is the reason of the stream.malformed event for an
// unparseable event skipped after the given count of tokens.
func MalformedReason(after int) string {
	return "unparseable event after token " + strconv.Itoa(after) + " skipped"
}

// Text takes the next text delta of the upstream's answer and returns the
// text to forward to the client now (Pieces: in the deltas it came in);
// ok is false when the continuation diverged. Outside a continuation the
// delta is forwarded as it came.
func (a *Attempt) Text(delta string) (fwd string, ok bool) {
	if !a.Continuing() {
		a.r.Commit(false)
		a.r.sent++
		a.forwarded(delta)
		return delta, true
	}
	if a.err != nil {
		return "", false
	}
	fwd, a.err = a.cont.Text(delta)
	return fwd, a.settle(fwd)
}

// ToolCall takes the next tool-call delta; it returns the text held until
// now to forward first, then the delta to forward (nil when nothing of it
// is new to the client); ok is false when the continuation diverged.
// Outside a continuation d is forwarded as it came (the caller may have
// given it the client's ID first: the answer so far keeps what the
// client received).
func (a *Attempt) ToolCall(d *llm.ToolCallDelta) (text string, tc *llm.ToolCallDelta, ok bool) {
	tc = d
	if d == nil {
		// An empty tool-call event: forwarded as it came, nothing to check.
		if !a.Continuing() {
			a.r.Commit(true)
			a.r.sent++
			a.r.servedBy = a.target
		}
		return "", nil, true
	}
	if a.Continuing() {
		if a.err != nil {
			return "", nil, false
		}
		text, tc, a.err = a.cont.ToolCall(*d)
		if !a.settle(text) {
			return "", nil, false
		}
	}
	if tc != nil {
		a.r.Commit(true)
		a.r.sent++
		a.r.servedBy = a.target
		a.r.tools = accumulateTool(a.r.tools, tc)
	}
	return text, tc, true
}

// Finish is called when the upstream's output is over: its finish reason,
// or the end of its stream. It returns the continuation's held text to
// forward, and ok false when the output stopped before it matched what the
// client has. The stream is committed: the finish reaches the client.
func (a *Attempt) Finish() (fwd string, ok bool) {
	if a.Continuing() {
		if a.err != nil {
			return "", false
		}
		fwd, a.err = a.cont.End()
		if !a.settle(fwd) {
			return "", false
		}
	}
	a.r.Commit(false)
	return fwd, true
}

// Answered records that the attempt's answer is the one served: the
// client's answer ends with its output, even an empty one.
func (a *Attempt) Answered() { a.r.servedBy = a.target }

// settle records the text a continuation step let through (err set when
// it diverged).
func (a *Attempt) settle(fwd string) bool {
	if a.err != nil {
		return false
	}
	if fwd != "" {
		a.r.sent += max(len(a.cont.Pieces()), 1)
		a.forwarded(fwd)
	}
	return true
}

// partialCap is the room the answer so far gets at its first text: the
// text of a short answer, which then costs one allocation, not one per
// doubling of a builder grown from a few bytes.
const partialCap = 256

func (a *Attempt) forwarded(text string) {
	if a.r.partial.Cap() == 0 {
		a.r.partial.Grow(max(partialCap, len(text)))
	}
	a.r.partial.WriteString(text)
	a.r.servedBy = a.target
}

// Pieces returns the deltas the text the last call returned was held from,
// in order, so that the client receives them as they came; nil when it is
// one delta. The slice is valid until the next call.
func (a *Attempt) Pieces() []string {
	if a.cont == nil {
		return nil
	}
	return a.cont.Pieces()
}

// Judged returns the continuation's verdict once it is known (the
// stream.continuation event's outcome and reason), ok true the first time
// only: Continued or Replayed when the output joined, Failed when it
// diverged (or the continuation could not start).
func (a *Attempt) Judged() (how, reason string, ok bool) {
	if a.judged || !a.Continuing() {
		return "", "", false
	}
	switch {
	case a.err != nil:
		how, reason = Failed, a.err.Error()
	default:
		how, reason = a.cont.Completion(), a.cont.Reason()
	}
	if how == "" {
		return "", "", false
	}
	a.judged = true
	return how, reason, true
}

// accumulateTool folds a tool-call delta into the calls assembled so far.
func accumulateTool(tcs []llm.ToolCall, d *llm.ToolCallDelta) []llm.ToolCall {
	if d.Index < 0 || d.Index > 1024 {
		return tcs
	}
	for len(tcs) <= d.Index {
		tcs = append(tcs, llm.ToolCall{})
	}
	tc := &tcs[d.Index]
	if d.ID != "" {
		tc.ID = d.ID
	}
	if d.Name != "" {
		tc.Name = d.Name
	}
	tc.Arguments += d.Arguments
	return tcs
}
