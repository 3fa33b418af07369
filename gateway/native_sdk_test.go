package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	asdk "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	osdk "github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// What the official SDKs see through the gateway: agent loops that end,
// structured output served by the primary, answers that look native, and
// JSON errors on every path.

func openaiClientAt(url string) osdk.Client {
	return osdk.NewClient(ooption.WithBaseURL(url+"/v1"), ooption.WithAPIKey("client-key"), ooption.WithMaxRetries(0))
}

func anthropicClientAt(url string) asdk.Client {
	return asdk.NewClient(aoption.WithBaseURL(url), aoption.WithAPIKey("client-key"), aoption.WithMaxRetries(0))
}

func aoptionResponseInto(r **http.Response) aoption.RequestOption { return aoption.WithResponseInto(r) }

func ooptionResponseInto(r **http.Response) ooption.RequestOption { return ooption.WithResponseInto(r) }

var loopTools = []string{"find_city", "get_weather", "get_time"}

// loopSteps script three tool calls, then an answer quoting the last result.
var loopSteps = []mockprovider.Step{
	{ToolCall: &mockprovider.RuleToolCall{Name: "find_city", Arguments: map[string]any{"query": "capital of France"}}},
	{ToolCall: &mockprovider.RuleToolCall{Name: "get_weather"}},
	{ToolCall: &mockprovider.RuleToolCall{Name: "get_time", Arguments: map[string]any{"city": "Paris"}}},
	{Answer: "Done: {{tool_result}}"},
}

// startLoopMocks are the end-to-end mocks, each model scripting the loop.
func startLoopMocks(t *testing.T) *mocks {
	t.Helper()
	model := func(name string, prefill mockprovider.Prefill) []mockprovider.ModelSpec {
		return []mockprovider.ModelSpec{{Name: name, Prefill: prefill, OutputTokens: mockprovider.Length{Fixed: 24}, Steps: loopSteps}}
	}
	return &mocks{
		alpha: mockprovider.StartTest(t, mockprovider.ProviderSpec{Name: "alpha", Format: llm.FormatOpenAI, Seed: 1, Models: model("gpt-4o", mockprovider.PrefillRejected)}),
		beta:  mockprovider.StartTest(t, mockprovider.ProviderSpec{Name: "beta", Format: llm.FormatAnthropic, Seed: 2, Models: model("claude-sonnet", mockprovider.PrefillContinue)}),
		gamma: mockprovider.StartTest(t, mockprovider.ProviderSpec{Name: "gamma", Format: llm.FormatGemini, Seed: 3, Models: model("gemini-flash", mockprovider.PrefillRejected)}),
	}
}

func cityTool() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}
}

func loopResult(tool string, step int) string { return fmt.Sprintf("%s says %d", tool, step) }

// openAILoop runs the loop with openai-go; it returns the tool names called
// and the final text.
func openAILoop(t *testing.T, c osdk.Client) ([]string, string) {
	t.Helper()
	var tools []osdk.ChatCompletionToolUnionParam
	for _, n := range loopTools {
		tools = append(tools, osdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: n, Parameters: cityTool()}))
	}
	msgs := []osdk.ChatCompletionMessageParamUnion{osdk.UserMessage("What time is it in the capital of France?")}
	var calls []string
	for step := 1; step <= 6; step++ {
		resp, err := c.Chat.Completions.New(context.Background(), osdk.ChatCompletionNewParams{Model: "chat", Messages: msgs, Tools: tools})
		require.NoError(t, err)
		assert.Equal(t, "chat", resp.Model, "the model the client asked for")
		assert.True(t, strings.HasPrefix(resp.ID, "chatcmpl-"), resp.ID)
		m := resp.Choices[0].Message
		if len(m.ToolCalls) == 0 {
			return calls, m.Content
		}
		msgs = append(msgs, m.ToParam())
		for _, tc := range m.ToolCalls {
			assert.True(t, strings.HasPrefix(tc.ID, "call_"), tc.ID)
			calls = append(calls, tc.Function.Name)
			msgs = append(msgs, osdk.ToolMessage(loopResult(tc.Function.Name, step), tc.ID))
		}
	}
	t.Fatalf("no answer after 6 steps: %v", calls)
	return nil, ""
}

// anthropicLoop runs the loop with anthropic-sdk-go.
func anthropicLoop(t *testing.T, c asdk.Client) ([]string, string) {
	t.Helper()
	var tools []asdk.ToolUnionParam
	for _, n := range loopTools {
		tools = append(tools, asdk.ToolUnionParam{OfTool: &asdk.ToolParam{Name: n,
			InputSchema: asdk.ToolInputSchemaParam{Properties: cityTool()["properties"], Required: []string{"city"}}}})
	}
	msgs := []asdk.MessageParam{asdk.NewUserMessage(asdk.NewTextBlock("What time is it in the capital of France?"))}
	var calls []string
	for step := 1; step <= 6; step++ {
		msg, err := c.Messages.New(context.Background(), asdk.MessageNewParams{Model: "chat", MaxTokens: 512, Messages: msgs, Tools: tools})
		require.NoError(t, err)
		assert.Equal(t, asdk.Model("chat"), msg.Model, "the model the client asked for")
		assert.True(t, strings.HasPrefix(msg.ID, "msg_"), msg.ID)
		if msg.StopReason != asdk.StopReasonToolUse {
			require.NotEmpty(t, msg.Content)
			return calls, msg.Content[0].Text
		}
		msgs = append(msgs, msg.ToParam())
		var results []asdk.ContentBlockParamUnion
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				assert.True(t, strings.HasPrefix(b.ID, "toolu_"), b.ID)
				calls = append(calls, b.Name)
				results = append(results, asdk.NewToolResultBlock(b.ID, loopResult(b.Name, step), false))
			}
		}
		msgs = append(msgs, asdk.NewUserMessage(results...))
	}
	t.Fatalf("no answer after 6 steps: %v", calls)
	return nil, ""
}

// TestAgentLoopThroughGateway: three tool steps, then text, through the
// gateway with both inbound APIs, served by each upstream format.
func TestAgentLoopThroughGateway(t *testing.T) {
	for _, c := range []struct {
		name string
		down []string // providers answering 500
	}{
		{"served by the OpenAI-format primary", nil},
		{"served by the Anthropic-format equivalent", []string{"alpha"}},
		{"served by the Gemini-format smaller model", []string{"alpha", "beta"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := startLoopMocks(t)
			g := startGateway(t, m.config(t, ""), gateway.Options{})
			for _, p := range c.down {
				addFault(t, map[string]*mockprovider.Provider{"alpha": m.alpha, "beta": m.beta}[p], `{kind: http_error, status: 500}`)
			}
			calls, final := openAILoop(t, openaiClient(g))
			assert.Equal(t, loopTools, calls)
			assert.Equal(t, "Done: "+loopResult("get_time", 3), final)
			calls, final = anthropicLoop(t, anthropicClient(g))
			assert.Equal(t, loopTools, calls)
			assert.Equal(t, "Done: "+loopResult("get_time", 3), final)
		})
	}
}

// TestNativeStream: an Anthropic stream served by the OpenAI-format
// primary looks like Anthropic's own.
func TestNativeStream(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	c := anthropicClient(g)
	var raw *http.Response
	st := c.Messages.NewStreaming(context.Background(), asdk.MessageNewParams{Model: "chat", MaxTokens: 256,
		Messages: []asdk.MessageParam{asdk.NewUserMessage(asdk.NewTextBlock("hello there, how are you today?"))}},
		aoptionResponseInto(&raw))
	var acc asdk.Message
	var startInput int64
	for st.Next() {
		ev := st.Current()
		if ev.Type == "message_start" {
			startInput = ev.Message.Usage.InputTokens
		}
		require.NoError(t, acc.Accumulate(ev))
	}
	require.NoError(t, st.Err())
	assert.True(t, strings.HasPrefix(acc.ID, "msg_"), acc.ID)
	assert.Equal(t, asdk.Model("chat"), acc.Model)
	assert.Positive(t, startInput, "message_start reports the input tokens")
	assert.Positive(t, acc.Usage.InputTokens)
	require.NotNil(t, raw)
	assert.Equal(t, "alpha:gpt-4o", raw.Header.Get(gateway.HeaderTarget))
	assert.NotEmpty(t, raw.Header.Get("Request-Id"), "the header Anthropic's SDK reads")
}

var invoiceSchema = map[string]any{
	"type":                 "object",
	"properties":           map[string]any{"total": map[string]any{"type": "number", "minimum": 0}, "currency": map[string]any{"type": "string", "enum": []any{"EUR", "USD"}}},
	"required":             []string{"total", "currency"},
	"additionalProperties": false,
}

// TestStructuredOutputPrimary: structured output from both inbound APIs
// is served by the healthy OpenAI-format primary in one attempt (an
// Anthropic schema has no name: the translation names it).
func TestStructuredOutputPrimary(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	check := func(t *testing.T, h http.Header, text string) {
		t.Helper()
		assert.Equal(t, "alpha:gpt-4o", h.Get(gateway.HeaderTarget))
		assert.Equal(t, "1", h.Get(gateway.HeaderAttempts))
		var v struct {
			Total    *float64 `json:"total"`
			Currency string   `json:"currency"`
		}
		require.NoError(t, json.Unmarshal([]byte(text), &v), text)
		require.NotNil(t, v.Total, text)
		assert.Contains(t, []string{"EUR", "USD"}, v.Currency)
	}
	t.Run("anthropic output_config", func(t *testing.T) {
		var raw *http.Response
		ac := anthropicClient(g)
		msg, err := ac.Messages.New(context.Background(), asdk.MessageNewParams{Model: "chat", MaxTokens: 256,
			Messages:     []asdk.MessageParam{asdk.NewUserMessage(asdk.NewTextBlock("extract the invoice"))},
			OutputConfig: asdk.OutputConfigParam{Format: asdk.JSONOutputFormatParam{Schema: invoiceSchema}}},
			aoptionResponseInto(&raw))
		require.NoError(t, err)
		require.NotEmpty(t, msg.Content)
		check(t, raw.Header, msg.Content[0].Text)
	})
	t.Run("openai response_format", func(t *testing.T) {
		var raw *http.Response
		oc := openaiClient(g)
		resp, err := oc.Chat.Completions.New(context.Background(), osdk.ChatCompletionNewParams{Model: "chat",
			Messages: []osdk.ChatCompletionMessageParamUnion{osdk.UserMessage("extract the invoice")},
			ResponseFormat: osdk.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "invoice", Schema: invoiceSchema, Strict: osdk.Bool(true)}}}},
			ooptionResponseInto(&raw))
		require.NoError(t, err)
		check(t, raw.Header, resp.Choices[0].Message.Content)
	})
	for _, e := range g.log.Events() {
		assert.NotEqual(t, "skipped", e.Class, "%+v", e)
	}
}

// TestSkippedTarget: a request the primary's format cannot express (a
// tool result flagged as an error, which Chat Completions cannot carry)
// skips it explicitly, with the reason, in the events and the metrics; the
// next target serves it in one attempt.
func TestSkippedTarget(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	var raw *http.Response
	ac := anthropicClient(g)
	_, err := ac.Messages.New(context.Background(), asdk.MessageNewParams{Model: "chat", MaxTokens: 64,
		Tools: []asdk.ToolUnionParam{{OfTool: &asdk.ToolParam{Name: "get_weather", InputSchema: asdk.ToolInputSchemaParam{Properties: cityTool()["properties"]}}}},
		Messages: []asdk.MessageParam{
			asdk.NewUserMessage(asdk.NewTextBlock("weather in Paris?")),
			asdk.NewAssistantMessage(asdk.NewToolUseBlock("toolu_01", map[string]any{"city": "Paris"}, "get_weather")),
			asdk.NewUserMessage(asdk.NewToolResultBlock("toolu_01", "the weather service is down", true)),
		}}, aoptionResponseInto(&raw))
	require.NoError(t, err)
	assert.Equal(t, "beta:claude-sonnet", raw.Header.Get(gateway.HeaderTarget))
	assert.Equal(t, "1", raw.Header.Get(gateway.HeaderAttempts), "a skipped target is not an attempt")
	var skipped []events.Event
	for _, e := range g.log.Events() {
		if e.Kind == events.AttemptEnd && e.Class == "skipped" {
			skipped = append(skipped, e)
		}
	}
	require.Len(t, skipped, 1)
	assert.Equal(t, "alpha:gpt-4o", skipped[0].Target)
	assert.Contains(t, skipped[0].Reason, "is_error")
	assert.Zero(t, m.alpha.Model().JournalLen(), "nothing was sent to the skipped target")

	resp, err := http.Get(g.url + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(body), `brownout_attempts_total{class="skipped",model="gpt-4o",provider="alpha",target="alpha:gpt-4o"} 1`)
}

// TestUnknownPathsSDK: every path answers in the shape of its API, and the
// SDKs report the error with their own error type and the message.
func TestUnknownPathsSDK(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	for _, base := range []struct{ name, url string }{{"gateway", g.url}, {"openai mock", m.alpha.URL}} {
		t.Run(base.name, func(t *testing.T) {
			oc, ac := openaiClientAt(base.url), anthropicClientAt(base.url)
			_, err := oc.Embeddings.New(context.Background(), osdk.EmbeddingNewParams{
				Model: "text-embedding-3-small", Input: osdk.EmbeddingNewParamsInputUnion{OfString: osdk.String("hi")}})
			var oe *osdk.Error
			require.True(t, errors.As(err, &oe), "%v", err)
			assert.Equal(t, 404, oe.StatusCode)
			assert.Equal(t, "invalid_request_error", oe.Type)
			assert.Equal(t, "Invalid URL (POST /v1/embeddings)", oe.Message)
			assert.Empty(t, oe.Code, "an unknown path is not model_not_found")

			_, err = ac.Messages.CountTokens(context.Background(), asdk.MessageCountTokensParams{Model: "chat",
				Messages: []asdk.MessageParam{asdk.NewUserMessage(asdk.NewTextBlock("hi"))}})
			var ae *asdk.Error
			require.True(t, errors.As(err, &ae), "%v", err)
			assert.Equal(t, 404, ae.StatusCode)
			assert.Equal(t, "not_found_error", string(ae.Type()))
			assert.Equal(t, "Not Found: POST /v1/messages/count_tokens", ae.Message)

			gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI,
				HTTPOptions: genai.HTTPOptions{BaseURL: base.url}, HTTPClient: &http.Client{}})
			require.NoError(t, err)
			_, err = gc.Models.EmbedContent(context.Background(), "text-embedding-004", genai.Text("hi"), nil)
			var ge genai.APIError
			require.True(t, errors.As(err, &ge), "%v", err)
			assert.Equal(t, 404, ge.Code)
			assert.Equal(t, "NOT_FOUND", ge.Status)
			assert.Contains(t, ge.Message, "/v1beta/models/text-embedding-004:")
		})
	}
	t.Run("a known path with another method", func(t *testing.T) {
		resp, err := http.Get(g.url + "/v1/messages")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, 405, resp.StatusCode)
		assert.Equal(t, "POST", resp.Header.Get("Allow"))
		assert.JSONEq(t, `{"type":"error","error":{"type":"invalid_request_error","message":"Method GET not allowed for /v1/messages (allowed: POST)"}}`, string(body))
	})
}
