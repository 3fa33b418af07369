package mockprovider_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
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

// Start a provider on a
// loopback port, break it, send a request, read the journal.
func ExampleStart() {
	p, err := mockprovider.Start(mockprovider.ProviderSpec{
		Name: "openai", Format: llm.FormatOpenAI,
		Models: []mockprovider.ModelSpec{{Name: "gpt-4o"}},
	}, mockprovider.Options{})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	if _, err := p.Model().AddFault(time.Now(), faults.Spec{Kind: faults.KindHTTPError, Status: 429, RetryAfter: yamlfile.Duration(2 * time.Second)}); err != nil {
		panic(err)
	}
	req, _ := http.NewRequest("POST", p.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("X-Request-Id", "req-42")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After"))
	fmt.Println(string(body))
	e := p.Model().Journal()[0]
	fmt.Println(e.RequestID, e.Fault, e.Status, e.Outcome)
	// Output:
	// 429 2
	// {"error":{"message":"Rate limit reached for requests. Please try again later.","type":"requests","param":null,"code":"rate_limit_exceeded"}}
	// req-42 http_error 429 error
}
