package mockprovider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	anth "github.com/anthropics/anthropic-sdk-go/v2"
	aopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// An agent's tool loop, as the official SDKs run it: call tools while the
// model asks for them, feed back their results, stop at a text answer.

// agentTools are the tools every loop offers.
var agentTools = []string{"find_city", "get_weather", "get_time"}

// toolResult is what the test's tools return.
func toolResult(name string, step int) string { return fmt.Sprintf("%s result %d", name, step) }

// agentSteps script three tool calls and an answer quoting the last result.
var agentSteps = []mockprovider.Step{
	{ToolCall: &mockprovider.RuleToolCall{Name: "find_city", Arguments: map[string]any{"query": "capital of France"}}},
	{ToolCall: &mockprovider.RuleToolCall{Name: "get_weather"}}, // arguments from the schema
	{ToolCall: &mockprovider.RuleToolCall{Name: "get_time", Arguments: map[string]any{"city": "Paris"}}},
	{Answer: "Done. The last tool said: {{tool_result}}"},
}

// loopResult is what one loop saw.
type loopResult struct {
	calls []string // tool names, in order
	args  []string // their arguments
	final string
}

func wantLoop(t *testing.T, got loopResult) {
	t.Helper()
	assert.Equal(t, agentTools, got.calls)
	require.Len(t, got.args, 3)
	assert.JSONEq(t, `{"query":"capital of France"}`, got.args[0])
	assert.Contains(t, got.args[1], `"city"`, "generated from get_weather's schema")
	assert.Equal(t, "Done. The last tool said: "+toolResult("get_time", 3)+"", got.final)
}

func cityParams() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}
}

// agentSpec is a provider whose model runs the scripted loop.
func agentSpec(f llm.Format, model string) mockprovider.ProviderSpec {
	s := spec(string(f), f, model)
	s.Rules = nil
	s.Models[0].Steps = agentSteps
	return s
}

func runOpenAILoop(t *testing.T, c oai.Client, model string, maxSteps int) loopResult {
	t.Helper()
	var tools []oai.ChatCompletionToolUnionParam
	for _, n := range agentTools {
		tools = append(tools, oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: n, Parameters: cityParams()}))
	}
	msgs := []oai.ChatCompletionMessageParamUnion{oai.UserMessage("What is the weather in the capital of France?")}
	var got loopResult
	for step := 1; step <= maxSteps; step++ {
		resp, err := c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{Model: model, Messages: msgs, Tools: tools})
		require.NoError(t, err)
		m := resp.Choices[0].Message
		if len(m.ToolCalls) == 0 {
			assert.Equal(t, "stop", resp.Choices[0].FinishReason)
			got.final = m.Content
			return got
		}
		assert.Equal(t, "tool_calls", resp.Choices[0].FinishReason)
		msgs = append(msgs, m.ToParam())
		for _, tc := range m.ToolCalls {
			got.calls, got.args = append(got.calls, tc.Function.Name), append(got.args, tc.Function.Arguments)
			msgs = append(msgs, oai.ToolMessage(toolResult(tc.Function.Name, step), tc.ID))
		}
	}
	t.Fatalf("no answer after %d steps: %v", maxSteps, got.calls)
	return got
}

func runAnthropicLoop(t *testing.T, c anth.Client, model string, maxSteps int) loopResult {
	t.Helper()
	var tools []anth.ToolUnionParam
	for _, n := range agentTools {
		tools = append(tools, anth.ToolUnionParam{OfTool: &anth.ToolParam{Name: n,
			InputSchema: anth.ToolInputSchemaParam{Properties: cityParams()["properties"], Required: []string{"city"}}}})
	}
	msgs := []anth.MessageParam{anth.NewUserMessage(anth.NewTextBlock("What is the weather in the capital of France?"))}
	var got loopResult
	for step := 1; step <= maxSteps; step++ {
		msg, err := c.Messages.New(context.Background(), anth.MessageNewParams{Model: anth.Model(model), MaxTokens: 1024, Messages: msgs, Tools: tools})
		require.NoError(t, err)
		if msg.StopReason != anth.StopReasonToolUse {
			assert.Equal(t, anth.StopReasonEndTurn, msg.StopReason)
			require.Len(t, msg.Content, 1)
			got.final = msg.Content[0].Text
			return got
		}
		msgs = append(msgs, msg.ToParam())
		var results []anth.ContentBlockParamUnion
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				got.calls, got.args = append(got.calls, b.Name), append(got.args, string(b.Input))
				results = append(results, anth.NewToolResultBlock(b.ID, toolResult(b.Name, step), false))
			}
		}
		msgs = append(msgs, anth.NewUserMessage(results...))
	}
	t.Fatalf("no answer after %d steps: %v", maxSteps, got.calls)
	return got
}

func runGeminiLoop(t *testing.T, c *genai.Client, model string, maxSteps int) loopResult {
	t.Helper()
	var decls []*genai.FunctionDeclaration
	for _, n := range agentTools {
		decls = append(decls, &genai.FunctionDeclaration{Name: n, ParametersJsonSchema: cityParams()})
	}
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: decls}}}
	contents := []*genai.Content{genai.NewContentFromText("What is the weather in the capital of France?", genai.RoleUser)}
	var got loopResult
	for step := 1; step <= maxSteps; step++ {
		resp, err := c.Models.GenerateContent(context.Background(), model, contents, cfg)
		require.NoError(t, err)
		calls := resp.FunctionCalls()
		if len(calls) == 0 {
			got.final = resp.Text()
			return got
		}
		contents = append(contents, resp.Candidates[0].Content)
		var parts []*genai.Part
		for _, fc := range calls {
			args, _ := json.Marshal(fc.Args)
			got.calls, got.args = append(got.calls, fc.Name), append(got.args, string(args))
			parts = append(parts, genai.NewPartFromFunctionResponse(fc.Name, map[string]any{"output": toolResult(fc.Name, step)}))
		}
		contents = append(contents, genai.NewContentFromParts(parts, genai.RoleUser))
	}
	t.Fatalf("no answer after %d steps: %v", maxSteps, got.calls)
	return got
}

// TestAgentLoop: a model's scripted loop of three tool calls ends with a
// text answer that uses the last result, in each format, through its SDK.
func TestAgentLoop(t *testing.T) {
	t.Run("openai", func(t *testing.T) {
		p := mockprovider.StartTest(t, agentSpec(llm.FormatOpenAI, "gpt-4o"))
		c := oai.NewClient(option.WithBaseURL(p.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
		wantLoop(t, runOpenAILoop(t, c, "gpt-4o", 6))
	})
	t.Run("anthropic", func(t *testing.T) {
		p := mockprovider.StartTest(t, agentSpec(llm.FormatAnthropic, "claude-sonnet-4-5"))
		c := anth.NewClient(aopt.WithBaseURL(p.URL), aopt.WithAPIKey("test-key"), aopt.WithMaxRetries(0))
		wantLoop(t, runAnthropicLoop(t, c, "claude-sonnet-4-5", 6))
	})
	t.Run("gemini", func(t *testing.T) {
		_, c := startGeminiSpec(t, agentSpec(llm.FormatGemini, "gemini-2.5-flash"))
		wantLoop(t, runGeminiLoop(t, c, "gemini-2.5-flash", 6))
	})
}

// TestToolResultDefault: without a script, a rule's tool call is made once;
// after its result the model answers in text, quoting the result.
func TestToolResultDefault(t *testing.T) {
	_, c := startOpenAI(t)
	tools := []oai.ChatCompletionToolUnionParam{oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Parameters: cityParams()})}
	msgs := []oai.ChatCompletionMessageParamUnion{oai.UserMessage("weather in Paris?")}
	resp, err := c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{Model: "gpt-4o", Messages: msgs, Tools: tools})
	require.NoError(t, err)
	require.Len(t, resp.Choices[0].Message.ToolCalls, 1)
	tc := resp.Choices[0].Message.ToolCalls[0]
	assert.JSONEq(t, `{"city":"Paris"}`, tc.Function.Arguments)
	msgs = append(msgs, resp.Choices[0].Message.ToParam(), oai.ToolMessage("18°C and sunny", tc.ID))
	resp, err = c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{Model: "gpt-4o", Messages: msgs, Tools: tools})
	require.NoError(t, err)
	assert.Empty(t, resp.Choices[0].Message.ToolCalls)
	assert.Equal(t, "stop", resp.Choices[0].FinishReason)
	assert.True(t, strings.HasPrefix(resp.Choices[0].Message.Content, "The get_weather tool returned: 18°C and sunny. "), resp.Choices[0].Message.Content)
	assert.Equal(t, int64(40), resp.Usage.CompletionTokens, "the answer has the model's length")

	// The same question again, in a new conversation: the call again.
	resp, err = c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{Model: "gpt-4o", Messages: msgs[:1], Tools: tools})
	require.NoError(t, err)
	require.Len(t, resp.Choices[0].Message.ToolCalls, 1)
}
