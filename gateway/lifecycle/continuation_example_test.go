package lifecycle_test

import (
	"fmt"

	"github.com/brownout-dev/brownout/gateway/lifecycle"
)

// A stream was cut after "The cat sat on". The fall-back, given it as a
// prefill, restarts its answer instead of continuing it: the repeated
// overlap is held, then skipped, and only the new text reaches the client.
func ExampleContinuation() {
	c, err := lifecycle.NewContinuation(lifecycle.Prefill, "The cat sat on", nil)
	if err != nil {
		panic(err)
	}
	for _, delta := range []string{"The cat", " sat on the", " mat."} {
		forward, err := c.Text(delta)
		if err != nil {
			fmt.Println("in-band error:", err)
			return
		}
		fmt.Printf("forward %q\n", forward)
	}
	rest, _ := c.End()
	fmt.Printf("forward %q\n", rest)
	fmt.Println(c.Completion(), "skipped", c.Skipped(), "bytes")
	// Output:
	// forward ""
	// forward " the"
	// forward " mat."
	// forward ""
	// continued skipped 14 bytes
}

// A replay (the original request, sent to a fall-back that cannot take a
// prefill) that writes another answer: the client gets an error, never two
// answers glued together.
func ExampleContinuation_replayDiverges() {
	c, _ := lifecycle.NewContinuation(lifecycle.Replay, "The cat sat on", nil)
	for _, delta := range []string{"The cat", " lay on the mat."} {
		if _, err := c.Text(delta); err != nil {
			fmt.Println(c.Completion()+":", err)
			return
		}
	}
	// Output:
	// failed: replay continuation: text diverges at byte 8 of 14
}

// The continuation probe: a target that continues the cut text passes; one
// that answers from scratch fails, whether its restart opens like the cut
// text or otherwise.
func ExampleJudgeProbe() {
	for _, answer := range []string{"zy dog.", "The quick brown fox jumps over the lazy dog.", "Sure! Here is the pangram."} {
		if ok, reason := lifecycle.JudgeProbe(answer); ok {
			fmt.Println("passed")
		} else {
			fmt.Println("failed:", reason)
		}
	}
	// Output:
	// passed
	// failed: the prefill was ignored: the answer restarted from its start
	// failed: prefill continuation: the output does not join the 37 bytes sent: an answer opener
}

// The join check alone: a fresh answer glued onto a cut word.
func ExampleJudgeJoin() {
	fmt.Println(lifecycle.JudgeJoin("The cat sat on the", " mat."))
	fmt.Println(lifecycle.JudgeJoin("The cat sat on the", "Every cat sits."))
	fmt.Println(lifecycle.JudgeJoin("The capital of ", "France is Paris.", "What is the capital of France?"))
	// Output:
	// joins
	// a new word glued onto the cut text
	// joins
}
