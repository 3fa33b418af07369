package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// A gateway in front of a mock provider: the client asks for the route
// "chat"; the response names the model and target that served it.
func Example() {
	mock, err := mockprovider.Start(mockprovider.ProviderSpec{Name: "openai", Format: llm.FormatOpenAI,
		Models: []mockprovider.ModelSpec{{Name: "gpt-4o"}}}, mockprovider.Options{})
	if err != nil {
		panic(err)
	}
	defer mock.Close()

	cfg, err := gateway.ParseConfig("gateway.yaml", []byte(`version: 1
providers:
  - name: openai
    kind: openai
    base_url: `+mock.URL+`/v1
routes:
  - name: chat
    targets:
      - {provider: openai, model: gpt-4o}
`), gateway.LoadOptions{})
	if err != nil {
		panic(err)
	}
	srv, err := gateway.New(cfg, gateway.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	resp, err := http.Post(hs.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"chat","messages":[{"role":"user","content":"hello"}]}`))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get(gateway.HeaderTarget), resp.Header.Get(gateway.HeaderTier))
	fmt.Println(strings.Contains(string(body), `"model":"chat"`)) // the model the client asked for
	// Output:
	// 200 openai:gpt-4o primary
	// true
}

// Configuration errors name the file, line, column and field, every problem
// in one pass; secrets come from the environment and never appear in errors.
func ExampleParseConfig() {
	_, err := gateway.ParseConfig("gateway.yaml", []byte(`version: 1
providers:
  - name: openai
    kind: openai
    api_key: ${OPENAI_API_KEY}
routes:
  - name: chat
    targets:
      - {provider: openai, model: gpt-4o, timeouts: {first_token: 5}}
`), gateway.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
	fmt.Println(err)
	// Output:
	// gateway.yaml:5:14: providers.0.api_key: environment variable OPENAI_API_KEY is not set
	// gateway.yaml:9:67: routes.0.targets.0.timeouts.first_token: invalid duration "5" (use a unit, e.g. "30s", "2m", "250ms")
}

// The gateway's event-fed metrics without a gateway: feed events, gather
// the exact series its /metrics endpoint serves.
func ExampleNewEventMetrics() {
	m := gateway.NewEventMetrics()
	m.Emit(&events.Event{Kind: events.RequestEnd, Route: "chat", Outcome: "degraded", Tier: "equivalent"})
	mfs, _ := m.Gatherer().Gather()
	for _, mf := range mfs {
		if mf.GetName() == "brownout_requests_total" {
			for _, lp := range mf.GetMetric()[0].GetLabel() {
				fmt.Printf("%s=%s ", lp.GetName(), lp.GetValue())
			}
			fmt.Println(mf.GetMetric()[0].GetCounter().GetValue())
		}
	}
	// Output: outcome=degraded route=chat tier=equivalent 1
}
