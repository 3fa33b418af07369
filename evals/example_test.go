package evals_test

import (
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/llm"
)

func ExampleCheck_Run() {
	schema, _ := evals.JSONSchema([]byte(`{"type": "object", "required": ["city"]}`))
	// A fallback that wraps its JSON in prose fails, with the reason.
	resp := &llm.Response{Content: `Sure! {"city": "Paris"}`, FinishReason: llm.FinishStop}
	for _, c := range []evals.Check{evals.JSONValid(), schema, evals.Contains("Paris"), evals.FinishReason(llm.FinishStop)} {
		if r := c.Run(resp); r.Pass {
			fmt.Println(r.Check, "pass")
		} else {
			fmt.Println(r.Check, "FAIL:", r.Reason)
		}
	}
	// Output:
	// json_valid FAIL: content is not valid JSON: invalid character 'S' looking for beginning of value (starts "Sure! {\"city\": \"Paris\"}")
	// json_schema FAIL: content is not valid JSON: invalid character 'S' looking for beginning of value (starts "Sure! {\"city\": \"Paris\"}")
	// contains pass
	// finish_reason pass
}

func ExampleObserve() {
	resp := &llm.Response{
		Content:      "I’m sorry, but I can’t help with that.",
		FinishReason: llm.FinishStop,
		Usage:        llm.Usage{InputTokens: 120, OutputTokens: 11},
	}
	o := evals.Observe(resp, true, nil) // a structured route, default refusal phrases
	o.Target = "openai:gpt-4o"
	fmt.Printf("refusal=%v json_valid=%v tokens=%d\n", o.Refusal, o.JSONValid, o.OutputTokens)
	// Output:
	// refusal=true json_valid=false tokens=11
}

// A provider starts truncating answers at 256 tokens while still reporting
// finish_reason=stop: the token-wall detector sees the pile-up.
func ExampleDetectors() {
	d := evals.NewDetectors(evals.DetectorConfig{})
	start := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	lengths := []int{180, 240, 310, 275, 420, 350, 205, 390, 330, 295} // a normal spread
	for i := range 3000 {                                              // 10 minutes of baseline at 5 req/s
		o := evals.Observation{Target: "openai:gpt-4o", FinishReason: llm.FinishStop, OutputTokens: lengths[i%10] + i%7}
		d.Observe(start.Add(time.Duration(i)*200*time.Millisecond), o)
	}
	faultAt := start.Add(10 * time.Minute)
	for i := range 600 {
		n := min(lengths[i%10]+i%7, 256) // silently cut at 256
		o := evals.Observation{Target: "openai:gpt-4o", FinishReason: llm.FinishStop, OutputTokens: n}
		now := faultAt.Add(time.Duration(i) * 200 * time.Millisecond)
		for _, s := range d.Observe(now, o) {
			fmt.Printf("after %s: %s\n", now.Sub(faultAt), s)
			return
		}
	}
	// Output:
	// after 15.8s: openai:gpt-4o token_wall: 20% of responses end at exactly 256 output tokens (baseline 0%), a power of two
}
