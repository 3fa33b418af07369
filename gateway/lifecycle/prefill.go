package lifecycle

import (
	"errors"

	"github.com/brownout-dev/brownout/llm"
)

// The continuation probe verifies a target's prefill capability instead of
// trusting it: the target is sent ProbeQuestion with ProbeCut, a known text
// cut mid-word, as an assistant prefill, and must continue it. A target
// that answers from scratch (a restart, even one the gateway could skip)
// does not take prefill: every continuation on it is a bet on the join
// check.
const (
	ProbeQuestion = "Write the English pangram about a quick brown fox, as one sentence."
	ProbeCut      = "The quick brown fox jumps over the la"
)

// ProbeRequest returns the continuation probe's request for model: the
// question and the cut text as a prefill, a short non-streamed answer.
func ProbeRequest(model string) *llm.Request {
	return &llm.Request{
		Model:     model,
		MaxTokens: 16,
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(ProbeQuestion)}},
			{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart(ProbeCut)}},
		},
	}
}

// JudgeProbe judges a target's answer to the continuation probe (the text
// that follows ProbeCut): it passes when the answer continues the cut text
// (the join check passes and the answer does not repeat the text's start).
// reason says why it failed, "" when it passed.
func JudgeProbe(answer string) (ok bool, reason string) {
	c, err := NewContinuation(Prefill, ProbeCut, nil)
	if err != nil {
		return false, err.Error()
	}
	if _, err := c.Text(answer); err != nil {
		return false, err.Error()
	}
	if _, err := c.End(); err != nil {
		return false, err.Error()
	}
	if answer == "" {
		return false, "an empty continuation"
	}
	if c.Restarted() {
		return false, "the prefill was ignored: the answer restarted from its start"
	}
	return true, ""
}

// ProbeVerdict judges what the continuation probe got, in both engines:
// a 400 (the prefill rejected) fails, an answer is judged by JudgeProbe,
// and any other error gives no verdict (has false).
func ProbeVerdict(resp *llm.Response, err error) (ok bool, reason string, has bool) {
	var le *llm.Error
	switch {
	case errors.As(err, &le) && le.Status == 400:
		return false, "the prefill was rejected: " + le.Message, true
	case err != nil:
		return false, "", false
	}
	ok, reason = JudgeProbe(resp.Content)
	return ok, reason, true
}

// Instruction is the system message a gateway may add to a prefill request
// (gateway continuation.instruction): a model that would answer from
// scratch is told to continue the cut text instead.
const Instruction = "The last assistant message is the beginning of your answer, cut off mid-stream. " +
	"Continue it from exactly where it stops, as if it had never been interrupted: " +
	"do not repeat any of it, do not start over, and do not acknowledge the interruption."

// WithInstruction returns msgs (ending with the prefill) with Instruction
// after their leading system messages. msgs is not modified.
func WithInstruction(msgs []llm.Message) []llm.Message {
	i := 0
	for i < len(msgs) && msgs[i].Role == llm.RoleSystem {
		i++
	}
	out := make([]llm.Message, 0, len(msgs)+1)
	out = append(out, msgs[:i]...)
	out = append(out, llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart(Instruction)}})
	return append(out, msgs[i:]...)
}
