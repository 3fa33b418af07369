package gateway

import (
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

// ContinuationConfig configures the request that asks a fall-back to
// continue a partial answer from a prefill.
type ContinuationConfig struct {
	// Instruction adds lifecycle.Instruction to every prefill request, as
	// a system message after the request's own: a model that would answer
	// from scratch is told to continue the cut text instead (LiteLLM's
	// approach). It costs a few prompt tokens per continuation and changes
	// the prompt the fall-back sees; the join check runs either way.
	// Default false.
	Instruction bool `yaml:"instruction,omitempty"`
}

// A streamed attempt that continues a partial answer (a lifecycle.Attempt
// that is Continuing) forwards only what the attempt's continuation check
// lets through, and the gateway reports the check's verdict.

// continueDelta passes one output delta of a continuing attempt through
// the check and sends the client what it lets through; false when it
// diverged.
func (x *exchange) continueDelta(a *lifecycle.Attempt, d *policy.Decision, emit func(llm.StreamEvent) bool, ev *llm.StreamEvent) bool {
	if ev.Type == llm.EventTextDelta {
		return x.continued(a, d, emit, func() (string, bool) { return a.Text(ev.Text) })
	}
	text, tc, ok := a.ToolCall(ev.ToolCall)
	x.announce(a, d)
	if !ok {
		return false
	}
	x.forwardText(a, emit, text)
	if tc != nil {
		emit(llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: tc})
	}
	return true
}

// continued runs one step of the check (step returns the text to
// forward), announces the verdict once it is known and forwards the text.
func (x *exchange) continued(a *lifecycle.Attempt, d *policy.Decision, emit func(llm.StreamEvent) bool, step func() (string, bool)) bool {
	text, ok := step()
	x.announce(a, d)
	if !ok {
		return false
	}
	x.forwardText(a, emit, text)
	return true
}

// forwardText sends text to the client in the deltas it was held from.
func (x *exchange) forwardText(a *lifecycle.Attempt, emit func(llm.StreamEvent) bool, text string) {
	if text == "" {
		return
	}
	pieces := a.Pieces() // text held for the join check, as it came
	if pieces == nil {
		emit(llm.StreamEvent{Type: llm.EventTextDelta, Text: text})
		return
	}
	for _, p := range pieces {
		emit(llm.StreamEvent{Type: llm.EventTextDelta, Text: p})
	}
}

// announce emits the stream.continuation event once the check has judged
// the output.
func (x *exchange) announce(a *lifecycle.Attempt, d *policy.Decision) {
	how, reason, ok := a.Judged()
	if !ok {
		return
	}
	to := x.lastTarget
	x.s.emit(events.Event{Time: time.Now(), Kind: events.StreamContinuation, RequestID: x.id, Route: x.req.Model,
		Target: to, Attempt: d.Try, Stream: true, From: a.From(), To: to, Outcome: how, Reason: reason})
	// The stream keeps naming the model the client asked for (an inbound
	// answer always does); the X-Brownout-Target trailer names the target
	// that produced the end.
}
