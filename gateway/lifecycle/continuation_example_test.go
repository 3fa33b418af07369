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
