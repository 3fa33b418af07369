package evals_test

import (
	"context"
	"fmt"
	"strings"
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

func ExampleRun() {
	suite, err := evals.ParseSuite("suite.yaml", []byte(`version: 1
name: demo
route: chat
cases:
  - name: capital
    prompts: ["Capital of France?", "Capital of Italy?"]
    checks:
      - {type: regex, pattern: '^(Paris|Rome)\.$'}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	// A Sender is usually a client.Client; here a model that only knows France.
	send := evals.SenderFunc(func(_ context.Context, _ evals.Target, _ string, req *llm.Request) (*llm.Response, error) {
		if strings.Contains(req.LastUserText(), "France") {
			return &llm.Response{Content: "Paris.", FinishReason: llm.FinishStop}, nil
		}
		return &llm.Response{Content: "I don't know.", FinishReason: llm.FinishStop}, nil
	})
	rep, _ := evals.Run(context.Background(), suite, evals.Target{Provider: "openai", Model: "gpt-4o-mini"}, send, evals.RunOptions{})
	fmt.Printf("%s: %d/%d\n", rep.Target, rep.Passed, rep.Total)
	for _, c := range rep.Cases {
		fmt.Println(c.Case, c.Pass)
	}
	// Output:
	// openai:gpt-4o-mini: 1/2
	// capital#1 true
	// capital#2 false
}

func ExampleQualification_Qualified() {
	q, err := evals.ParseQualification("qualification.json", []byte(`{
  "version": 1, "suite": "support", "threshold": 0.95, "created": "2026-11-29T16:00:00Z",
  "entries": [
    {"primary": "openai:gpt-4o", "fallback": "anthropic:claude-sonnet-4-5", "route": "extract",
     "cases": 40, "passed": 40, "pass_rate": 1, "primary_pass_rate": 1, "verdict": "qualified"},
    {"primary": "openai:gpt-4o", "fallback": "cheapco:cheap-1", "route": "extract",
     "cases": 40, "passed": 31, "pass_rate": 0.775, "primary_pass_rate": 1, "verdict": "unqualified"}
  ]
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	// At startup the gateway checks each fallback in each route's chain.
	for _, t := range []string{"anthropic:claude-sonnet-4-5", "cheapco:cheap-1"} {
		fmt.Println(t, q.Qualified("extract", t))
	}
	// Output:
	// anthropic:claude-sonnet-4-5 true
	// cheapco:cheap-1 false
}
