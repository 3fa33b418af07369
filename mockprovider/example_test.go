package mockprovider_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

func ExampleModel_Plan() {
	m, err := mockprovider.NewModel(mockprovider.ProviderSpec{
		Name: "openai", Format: llm.FormatOpenAI,
		Models: []mockprovider.ModelSpec{{
			Name: "gpt-4o", TTFT: faults.Fixed(300 * time.Millisecond), TokensPerSecond: 50,
		}},
		Rules: []mockprovider.Rule{{Contains: "capital of France", Answer: "The capital of France is Paris."}},
	}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		panic(err)
	}
	now := time.Unix(1_700_000_000, 0)
	req := &llm.Request{Model: "gpt-4o", Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("What is the capital of France?")}},
	}}
	p := m.Plan(now, req, mockprovider.Meta{RequestID: "req-1"})
	fmt.Println(p.Status, p.Response.Content)
	fmt.Println("tokens:", len(p.Chunks), "first:", p.TTFT, "last:", p.TokenTimes[len(p.TokenTimes)-1])
	fmt.Println("usage:", p.Response.Usage.InputTokens, p.Response.Usage.OutputTokens)
	m.Finish(now.Add(p.End()), p)
	fmt.Println(m.Journal()[0].Outcome)
	// Output:
	// 200 The capital of France is Paris.
	// tokens: 8 first: 300ms last: 440ms
	// usage: 15 8
	// ok
}
