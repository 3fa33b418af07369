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

// continuation is a streamed attempt that continues a partial answer: the
// lifecycle's verifier and what the gateway reports of it.
type continuation struct {
	v         *lifecycle.Continuation
	from      string // the target whose output the client received last
	before    int    // output deltas the client had before it
	announced bool
	err       error
}

// newContinuation starts verifying the attempt d's output against the
// partial answer.
//
//go:noinline
func (x *exchange) newContinuation(d *policy.Decision) *continuation {
	mode := lifecycle.Prefill
	if d.Replay {
		mode = lifecycle.Replay
	}
	c := &continuation{from: x.servedBy, before: x.sentTokens}
	var err error
	c.v, err = lifecycle.NewContinuation(mode, x.partial.String(), x.tools)
	if err != nil {
		c.err = err
		return c
	}
	c.v.Names(x.req.LastUserText())
	return c
}

// forward passes one output delta of the attempt through the verifier and
// sends the client what it lets through; false when it diverged.
func (c *continuation) forward(x *exchange, d *policy.Decision, emit func(llm.StreamEvent) bool, ev *llm.StreamEvent) bool {
	if ev.Type == llm.EventTextDelta {
		return c.check(x, d, emit, func() (string, error) { return c.v.Text(ev.Text) })
	}
	if ev.ToolCall == nil {
		return true
	}
	var tc *llm.ToolCallDelta
	ok := c.check(x, d, emit, func() (text string, err error) {
		text, tc, err = c.v.ToolCall(*ev.ToolCall)
		return text, err
	})
	if ok && tc != nil {
		x.lc.Commit(true)
		x.tools = accumulateTool(x.tools, tc)
		x.sentTokens++
		emit(llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: tc})
	}
	return ok
}

// check runs one step of the verifier (step returns the text to forward),
// announces the continuation once it is judged and forwards the text.
func (c *continuation) check(x *exchange, d *policy.Decision, emit func(llm.StreamEvent) bool, step func() (string, error)) bool {
	if c.err != nil {
		c.announce(x, d)
		return false
	}
	text, err := step()
	if err != nil {
		c.err = err
	}
	c.announce(x, d)
	if err != nil {
		return false
	}
	if text == "" {
		return true
	}
	x.partial.WriteString(text)
	x.servedBy = x.lastTarget
	pieces := c.v.Pieces() // text held for the join check, as it came
	if pieces == nil {
		x.sentTokens++
		emit(llm.StreamEvent{Type: llm.EventTextDelta, Text: text})
		return true
	}
	for _, p := range pieces {
		x.sentTokens++
		emit(llm.StreamEvent{Type: llm.EventTextDelta, Text: p})
	}
	return true
}

// announce emits the stream.continuation event once the verifier has
// judged the output.
func (c *continuation) announce(x *exchange, d *policy.Decision) {
	how := lifecycle.Failed
	if c.err == nil {
		how = c.v.Completion()
	}
	if c.announced || how == "" {
		return
	}
	c.announced = true
	reason := c.v.Reason()
	if c.err != nil {
		reason = c.err.Error()
	}
	to := x.lastTarget
	x.s.emit(events.Event{Time: time.Now(), Kind: events.StreamContinuation, RequestID: x.id, Route: x.req.Model,
		Target: to, Attempt: d.Try, Stream: true, From: c.from, To: to, Outcome: how, Reason: reason})
	// The stream keeps naming the model the client asked for (an inbound
	// answer always does); the X-Brownout-Target trailer names the target
	// that produced the end.
}
