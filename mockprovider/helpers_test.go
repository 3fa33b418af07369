package mockprovider_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"testing"

	anth "github.com/anthropics/anthropic-sdk-go/v2"
	aopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// spec returns a zero-latency provider with one model and a rule.
func spec(name string, f llm.Format, model string) mockprovider.ProviderSpec {
	return mockprovider.ProviderSpec{
		Name: name, Format: f, Seed: 7,
		Models: []mockprovider.ModelSpec{{Name: model, OutputTokens: mockprovider.Length{Fixed: 40}}},
		Rules: []mockprovider.Rule{
			{Contains: "capital of France", Answer: "The capital of France is Paris."},
			{Contains: "weather", ToolCall: &mockprovider.RuleToolCall{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}},
		},
	}
}

func startOpenAI(t *testing.T, fs ...faults.Spec) (*mockprovider.Provider, oai.Client) {
	t.Helper()
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.Faults = fs
	p := mockprovider.StartTest(t, s)
	return p, oai.NewClient(option.WithBaseURL(p.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

func startAnthropic(t *testing.T, fs ...faults.Spec) (*mockprovider.Provider, anth.Client) {
	t.Helper()
	s := spec("anthropic", llm.FormatAnthropic, "claude-sonnet-4-5")
	s.Faults = fs
	p := mockprovider.StartTest(t, s)
	return p, anth.NewClient(aopt.WithBaseURL(p.URL), aopt.WithAPIKey("test-key"), aopt.WithMaxRetries(0))
}

func startGemini(t *testing.T, fs ...faults.Spec) (*mockprovider.Provider, *genai.Client) {
	t.Helper()
	s := spec("gemini", llm.FormatGemini, "gemini-2.5-flash")
	s.Faults = fs
	return startGeminiSpec(t, s)
}

func startGeminiSpec(t *testing.T, s mockprovider.ProviderSpec) (*mockprovider.Provider, *genai.Client) {
	t.Helper()
	p := mockprovider.StartTest(t, s)
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "test-key", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: p.URL},
		HTTPClient:  &http.Client{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

func chatParams(prompt string) oai.ChatCompletionNewParams {
	return oai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage(prompt)},
	}
}

func messageParams(prompt string) anth.MessageNewParams {
	return anth.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Messages:  []anth.MessageParam{anth.NewUserMessage(anth.NewTextBlock(prompt))},
	}
}

func intp(v int) *int { return &v }

func newRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }
