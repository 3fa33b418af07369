package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	asdk "github.com/anthropics/anthropic-sdk-go/v2"
	osdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/mockprovider"
)

func openaiClient(g *gw) osdk.Client { return openaiClientAt(g.url) }

func anthropicClient(g *gw) asdk.Client { return anthropicClientAt(g.url) }

var weatherTool = shared.FunctionDefinitionParam{
	Name:        "get_weather",
	Description: osdk.String("Current weather for a city."),
	Parameters: shared.FunctionParameters{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required":   []string{"city"},
	},
}

// TestOpenAISDK: the official openai-go client talks to the gateway,
// streaming and not, with tools, while the primary fails over to an
// Anthropic-format provider.
func TestOpenAISDK(t *testing.T) {
	ctx := context.Background()
	for _, faulted := range []bool{false, true} {
		name := map[bool]string{false: "healthy", true: "primary 429, served by the Anthropic-format equivalent"}[faulted]
		t.Run(name, func(t *testing.T) {
			m := startMocks(t)
			g := startGateway(t, m.config(t, ""), gateway.Options{})
			if faulted {
				addFault(t, m.alpha, `{kind: http_error, status: 429}`)
			}
			want := map[bool]string{false: "gpt-4o", true: "claude-sonnet"}[faulted]
			c := openaiClient(g)

			var raw *http.Response
			resp, err := c.Chat.Completions.New(ctx, osdk.ChatCompletionNewParams{
				Model:    "chat",
				Messages: []osdk.ChatCompletionMessageParamUnion{osdk.UserMessage("hello")},
			}, ooptionResponseInto(&raw))
			require.NoError(t, err)
			assert.Equal(t, "chat", resp.Model, "the response names the model the client asked for")
			assert.Contains(t, raw.Header.Get(gateway.HeaderTarget), ":"+want, "the header names the model that served")
			assert.NotEmpty(t, resp.Choices[0].Message.Content)

			st := c.Chat.Completions.NewStreaming(ctx, osdk.ChatCompletionNewParams{
				Model:         "chat",
				Messages:      []osdk.ChatCompletionMessageParamUnion{osdk.UserMessage("hello")},
				StreamOptions: osdk.ChatCompletionStreamOptionsParam{IncludeUsage: osdk.Bool(true)},
			})
			var acc osdk.ChatCompletionAccumulator
			for st.Next() {
				acc.AddChunk(st.Current())
			}
			require.NoError(t, st.Err())
			assert.NotEmpty(t, acc.Choices[0].Message.Content)
			assert.Equal(t, "chat", acc.Model)
			assert.Positive(t, acc.Usage.CompletionTokens)

			tools := []osdk.ChatCompletionToolUnionParam{osdk.ChatCompletionFunctionTool(weatherTool)}
			resp, err = c.Chat.Completions.New(ctx, osdk.ChatCompletionNewParams{
				Model:      "chat",
				Messages:   []osdk.ChatCompletionMessageParamUnion{osdk.UserMessage("weather in Paris?")},
				Tools:      tools,
				ToolChoice: osdk.ChatCompletionToolChoiceOptionUnionParam{OfAuto: osdk.String("required")},
			})
			require.NoError(t, err)
			require.Len(t, resp.Choices[0].Message.ToolCalls, 1)
			assert.Equal(t, "get_weather", resp.Choices[0].Message.ToolCalls[0].Function.Name)
			assert.Contains(t, resp.Choices[0].Message.ToolCalls[0].Function.Arguments, "city")

			st = c.Chat.Completions.NewStreaming(ctx, osdk.ChatCompletionNewParams{
				Model:      "chat",
				Messages:   []osdk.ChatCompletionMessageParamUnion{osdk.UserMessage("weather in Paris?")},
				Tools:      tools,
				ToolChoice: osdk.ChatCompletionToolChoiceOptionUnionParam{OfAuto: osdk.String("required")},
			})
			acc = osdk.ChatCompletionAccumulator{}
			for st.Next() {
				acc.AddChunk(st.Current())
			}
			require.NoError(t, st.Err())
			require.Len(t, acc.Choices[0].Message.ToolCalls, 1)
			assert.Equal(t, "get_weather", acc.Choices[0].Message.ToolCalls[0].Function.Name)
		})
	}
}

// TestOpenAISDKErrors: the SDK reads the gateway's honest error.
func TestOpenAISDKErrors(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	for _, p := range []*mockprovider.Provider{m.alpha, m.beta, m.gamma} {
		addFault(t, p, `{kind: http_error, status: 500}`)
	}
	c := openaiClient(g)
	_, err := c.Chat.Completions.New(context.Background(), osdk.ChatCompletionNewParams{
		Model:    "chat",
		Messages: []osdk.ChatCompletionMessageParamUnion{osdk.UserMessage("hello")},
	})
	var apiErr *osdk.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, 503, apiErr.StatusCode)
	assert.NotEmpty(t, apiErr.Response.Header.Get("Retry-After"))

	_, err = c.Chat.Completions.New(context.Background(), osdk.ChatCompletionNewParams{
		Model:    "no-such-route",
		Messages: []osdk.ChatCompletionMessageParamUnion{osdk.UserMessage("hello")},
	})
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, 404, apiErr.StatusCode)
}

// TestAnthropicSDK: the official anthropic-sdk-go client, streaming and not,
// with tools, served by the OpenAI-format primary or (faulted) the
// Anthropic-format equivalent.
func TestAnthropicSDK(t *testing.T) {
	ctx := context.Background()
	for _, faulted := range []bool{false, true} {
		name := map[bool]string{false: "served by the OpenAI-format primary", true: "primary reset, served by the equivalent"}[faulted]
		t.Run(name, func(t *testing.T) {
			m := startMocks(t)
			g := startGateway(t, m.config(t, ""), gateway.Options{})
			if faulted {
				addFault(t, m.alpha, `{kind: reset}`)
			}
			want := map[bool]string{false: "gpt-4o", true: "claude-sonnet"}[faulted]
			c := anthropicClient(g)
			params := asdk.MessageNewParams{
				Model:     "chat",
				MaxTokens: 256,
				Messages:  []asdk.MessageParam{asdk.NewUserMessage(asdk.NewTextBlock("hello"))},
			}
			var raw *http.Response
			msg, err := c.Messages.New(ctx, params, aoptionResponseInto(&raw))
			require.NoError(t, err)
			assert.Equal(t, "chat", string(msg.Model), "the model the client asked for")
			assert.Contains(t, raw.Header.Get(gateway.HeaderTarget), ":"+want, "the header names the model that served")
			require.NotEmpty(t, msg.Content)
			assert.NotEmpty(t, msg.Content[0].Text)
			assert.Positive(t, msg.Usage.OutputTokens)

			st := c.Messages.NewStreaming(ctx, params)
			var acc asdk.Message
			for st.Next() {
				require.NoError(t, acc.Accumulate(st.Current()))
			}
			require.NoError(t, st.Err())
			assert.Equal(t, "chat", string(acc.Model))
			require.NotEmpty(t, acc.Content)
			assert.NotEmpty(t, acc.Content[0].Text)
			assert.Equal(t, asdk.StopReasonEndTurn, acc.StopReason)

			params.Tools = []asdk.ToolUnionParam{{OfTool: &asdk.ToolParam{
				Name:        "get_weather",
				Description: asdk.String("Current weather for a city."),
				InputSchema: asdk.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}, Required: []string{"city"}},
			}}}
			params.ToolChoice = asdk.ToolChoiceUnionParam{OfAny: &asdk.ToolChoiceAnyParam{}}
			msg, err = c.Messages.New(ctx, params)
			require.NoError(t, err)
			var tu *asdk.ToolUseBlock
			for _, b := range msg.Content {
				if b.Type == "tool_use" {
					v := b.AsToolUse()
					tu = &v
				}
			}
			require.NotNil(t, tu, "a tool_use block")
			assert.Equal(t, "get_weather", tu.Name)
			assert.Equal(t, asdk.StopReasonToolUse, msg.StopReason)

			st = c.Messages.NewStreaming(ctx, params)
			acc = asdk.Message{}
			for st.Next() {
				require.NoError(t, acc.Accumulate(st.Current()))
			}
			require.NoError(t, st.Err())
			found := false
			for _, b := range acc.Content {
				if b.Type == "tool_use" && b.Name == "get_weather" {
					found = true
					assert.Contains(t, string(b.Input), "city")
				}
			}
			assert.True(t, found, "streamed tool_use block")
		})
	}
}

// TestAnthropicSDKMidStreamError: a stream cut with no way to continue
// reaches the Anthropic SDK as an error, not as a clean end.
func TestAnthropicSDKMidStreamError(t *testing.T) {
	m := startMocks(t)
	cfg := m.config(t, "")
	cfg.Routes[0].Targets[1].Capabilities.Prefill = false
	g := startGateway(t, cfg, gateway.Options{})
	addFault(t, m.alpha, `{kind: cut, after: 4}`)
	c := anthropicClient(g)
	st := c.Messages.NewStreaming(context.Background(), asdk.MessageNewParams{
		Model: "chat", MaxTokens: 256,
		Messages: []asdk.MessageParam{asdk.NewUserMessage(asdk.NewTextBlock("hello"))},
	})
	n := 0
	for st.Next() {
		n++
	}
	require.Error(t, st.Err(), "the SDK must see the failure")
	assert.Positive(t, n, "events reached the client before the cut")
}

// TestSDKMidStreamContinuation: a stream cut after a few tokens continues
// on the prefill-capable equivalent; both official SDKs see one clean,
// complete answer.
func TestSDKMidStreamContinuation(t *testing.T) {
	ctx := context.Background()
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	addFault(t, m.alpha, `{kind: cut, after: 5}`)

	oc := openaiClient(g)
	st := oc.Chat.Completions.NewStreaming(ctx, osdk.ChatCompletionNewParams{
		Model:    "chat",
		Messages: []osdk.ChatCompletionMessageParamUnion{osdk.UserMessage("hello")},
	})
	var acc osdk.ChatCompletionAccumulator
	for st.Next() {
		acc.AddChunk(st.Current())
	}
	require.NoError(t, st.Err())
	openaiText := acc.Choices[0].Message.Content
	assert.Greater(t, len(openaiText), 20, "the partial answer plus its continuation")
	assert.Equal(t, osdk.CompletionChoiceFinishReasonStop, osdk.CompletionChoiceFinishReason(acc.Choices[0].FinishReason))

	ac := anthropicClient(g)
	ast := ac.Messages.NewStreaming(ctx, asdk.MessageNewParams{
		Model: "chat", MaxTokens: 256,
		Messages: []asdk.MessageParam{asdk.NewUserMessage(asdk.NewTextBlock("hello"))},
	})
	var msg asdk.Message
	for ast.Next() {
		require.NoError(t, msg.Accumulate(ast.Current()))
	}
	require.NoError(t, ast.Err())
	require.NotEmpty(t, msg.Content)
	assert.Greater(t, len(msg.Content[0].Text), 20)
	assert.Equal(t, asdk.StopReasonEndTurn, msg.StopReason)
	assert.Len(t, m.beta.Model().Journal(), 2, "each stream was continued on the equivalent")
}
