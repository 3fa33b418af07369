package probe_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/brownout-dev/brownout/evals/probe"
	"github.com/brownout-dev/brownout/llm"
)

// A target that answers 200 OK with the wrong content fails its probes; the
// third consecutive failure asks for its breaker to open.
func ExampleScheduler() {
	s := probe.NewScheduler(probe.Config{}, rand.New(rand.NewPCG(1, 2)))
	def := probe.Default()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Add(start, "openai:gpt-4o")
	for range 3 {
		now, _ := s.Next()
		for _, target := range s.Due(now) {
			// The shell would send def.RequestFor(model) over HTTP here.
			resp := &llm.Response{Content: "As an AI language model, I cannot.", FinishReason: llm.FinishStop}
			a := s.Report(now, target, def.Evaluate(resp, nil))
			fmt.Println(a.Kind, a.Failures, a.Reason)
		}
	}
	// Output:
	// none 1 says pong: content does not match /(?i)\bpong\b/
	// none 2 says pong: content does not match /(?i)\bpong\b/
	// open_breaker 3 says pong: content does not match /(?i)\bpong\b/
}
