package lifecycle_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

// A stream is cut after "The cat sat on"; the fall-back, sent the answer so
// far as a prefill, restarts it. Both engines feed the attempts the same
// way: the gateway delta by delta from the wire, the simulator from a
// mock's plan. The client gets the first answer, then only what the
// continuation adds.
func ExampleAttempt() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	eng, _ := policy.New(policy.Config{Routes: []policy.Route{{Name: "chat", Targets: []policy.Target{
		{Provider: "a", Model: "m"},
		{Provider: "b", Model: "m", Priority: 1, Capabilities: policy.Capabilities{Streaming: true, Prefill: true}},
	}}}}, policy.Options{Rand: rand.New(rand.NewPCG(1, 2))})
	user := &llm.Request{Model: "chat", Stream: true, MaxTokens: 10,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("Where did the cat sit?")}}}}

	var r lifecycle.Request
	r.Begin(eng, now, policy.Request{ID: "r1", Route: "chat", Stream: true})
	output := map[string][]string{"a:m": {"The cat", " sat on"}, "b:m": {"The cat", " sat on", " the", " mat."}}
	for {
		s := r.Next(now)
		if s.Kind != policy.Send {
			fmt.Println(s.Kind, "served by", r.ServedBy())
			break
		}
		key := s.Target.Key()
		a := r.Attempt(&s.Decision, key, user)
		var sent llm.Request
		if o := a.Prepare(&sent, user, s.Target, false); o != nil {
			r.Observe(now, *o)
			continue
		}
		fmt.Printf("%s: %d messages, max_tokens %d\n", key, len(sent.Messages), sent.MaxTokens)
		for _, delta := range output[key] {
			if fwd, ok := a.Text(delta); ok && fwd != "" {
				fmt.Printf("  forward %q\n", fwd)
			}
		}
		if key == "a:m" {
			r.Observe(now, lifecycle.Classify(&lifecycle.Observation{End: lifecycle.Cut, Status: 200, Tokens: 2}))
			continue
		}
		a.Finish()
		how, reason, _ := a.Judged()
		fmt.Println(" ", how+":", reason)
		r.Observe(now, lifecycle.Classify(&lifecycle.Observation{Status: 200, Tokens: 4}))
	}
	fmt.Printf("the client has %q in %d deltas\n", r.Partial(), r.Sent())
	// Output:
	// a:m: 1 messages, max_tokens 10
	//   forward "The cat"
	//   forward " sat on"
	// b:m: 2 messages, max_tokens 8
	//   forward " the"
	//   forward " mat."
	//   continued: restart: 14 bytes of overlap skipped
	// done served by b:m
	// the client has "The cat sat on the mat." in 4 deltas
}
