package faults_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func ExampleSet() {
	var set faults.Set
	start := time.Unix(0, 0)
	at := 8
	if _, err := set.Add(start, faults.Spec{Kind: faults.KindTruncate, At: &at}); err != nil {
		panic(err)
	}
	p := faults.NewPlan()
	p.SetContent("The quick brown fox jumps over the lazy dog and keeps running far away.")
	env := &faults.Env{Provider: "openai", Model: "gpt-4o", Format: llm.FormatOpenAI, Rand: rand.New(rand.NewPCG(1, 2))}
	set.Apply(start.Add(time.Second), p, env)
	fmt.Println(p.Fault, p.Response.FinishReason, p.Response.Usage.OutputTokens)
	fmt.Printf("%q\n", p.Response.Content)
	// Output:
	// truncate length 8
	// "The quick brown fox jumps over t"
}

func ExampleSpec_Validate() {
	s := faults.Spec{Kind: faults.KindHTTPError, Status: 429, Rate: 5}
	fmt.Println(s.Validate())
	// Output:
	// rate: does not apply to http_error (its parameters: status, retry_after, message, error_type, after)
}
