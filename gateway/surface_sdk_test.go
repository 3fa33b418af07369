package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	osdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/brownout-dev/brownout/gateway"
)

func responsesParams(input string) responses.ResponseNewParams {
	return responses.ResponseNewParams{Model: "chat", Input: responses.ResponseNewParamsInputUnion{OfString: osdk.String(input)}}
}

// TestResponsesSDK: openai-go's Responses client talks to the gateway
// (POST /v1/responses): text, tool calls and structured output, healthy and
// with the primary failing over to the Anthropic-format equivalent.
func TestResponsesSDK(t *testing.T) {
	ctx := context.Background()
	healthyAndFailedOver(t, func(t *testing.T, g *gw, want string) {
		c := openaiClient(g)

		var raw *http.Response
		resp, err := c.Responses.New(ctx, responsesParams("hello"), option.WithResponseInto(&raw))
		require.NoError(t, err)
		assert.Equal(t, "chat", resp.Model, "the model the client asked for")
		assert.Contains(t, raw.Header.Get(gateway.HeaderTarget), want, "the target that served")
		assert.Equal(t, responses.ResponseStatusCompleted, resp.Status)
		assert.NotEmpty(t, resp.OutputText())
		assert.Positive(t, resp.Usage.OutputTokens)

		p := responsesParams("What is the weather in Paris?")
		p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather",
			map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}, false)}
		p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: osdk.Opt(responses.ToolChoiceOptionsRequired)}
		resp, err = c.Responses.New(ctx, p)
		require.NoError(t, err)
		var call *responses.ResponseFunctionToolCall
		for _, it := range resp.Output {
			if it.Type == "function_call" {
				fc := it.AsFunctionCall()
				call = &fc
			}
		}
		require.NotNil(t, call, "a function_call output item")
		assert.Equal(t, "get_weather", call.Name)
		assert.True(t, json.Valid([]byte(call.Arguments)), call.Arguments)

		p = responsesParams("An invoice, please.")
		p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigParamOfJSONSchema("invoice",
			map[string]any{"type": "object", "properties": map[string]any{"total": map[string]any{"type": "number"}}, "required": []string{"total"}})}
		resp, err = c.Responses.New(ctx, p)
		require.NoError(t, err)
		assert.True(t, json.Valid([]byte(resp.OutputText())), resp.OutputText())
	})
}

// healthyAndFailedOver runs test on a healthy gateway, then on one whose
// primary answers 429 (served by the Anthropic-format equivalent); want is
// the model that should serve.
func healthyAndFailedOver(t *testing.T, test func(t *testing.T, g *gw, want string)) {
	for _, faulted := range []bool{false, true} {
		name := map[bool]string{false: "healthy", true: "primary 429"}[faulted]
		t.Run(name, func(t *testing.T) {
			m := startMocks(t)
			g := startGateway(t, m.config(t, ""), gateway.Options{})
			if faulted {
				addFault(t, m.alpha, `{kind: http_error, status: 429}`)
			}
			test(t, g, map[bool]string{false: "gpt-4o", true: "claude-sonnet"}[faulted])
		})
	}
}

// streamResponses reads a Responses stream: the event types in order and
// the text of the deltas.
func streamResponses(t *testing.T, g *gw) (types []string, text string, completed *responses.Response, err error) {
	c := openaiClient(g)
	st := c.Responses.NewStreaming(context.Background(), responsesParams("hello"))
	for st.Next() {
		ev := st.Current()
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			text += ev.Delta
		case "response.completed":
			r := ev.Response
			completed = &r
		}
	}
	return types, text, completed, st.Err()
}

// TestResponsesSDKStreamFailover: the primary's stream is cut mid-answer and
// continued on the prefill-capable equivalent; the SDK sees one stream, its
// semantic events in order, ending with response.completed.
func TestResponsesSDKStreamFailover(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	addFault(t, m.alpha, `{kind: cut, after: 5}`)
	types, text, completed, err := streamResponses(t, g)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(types), 8)
	assert.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added", "response.output_text.delta"}, types[:5])
	assert.Equal(t, []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}, types[len(types)-4:])
	assert.Greater(t, len(text), 20, "the partial answer plus its continuation")
	require.NotNil(t, completed)
	assert.Equal(t, text, completed.OutputText(), "response.completed carries the whole answer")
	assert.Len(t, m.beta.Model().Journal(), 1, "the stream was continued on the equivalent")
}

// TestResponsesSDKMidStreamError: a cut stream that cannot be continued ends
// with the Responses API's error event, never response.completed.
func TestResponsesSDKMidStreamError(t *testing.T) {
	m := startMocks(t)
	cfg := m.config(t, "")
	cfg.Routes[0].Targets[1].Capabilities.Prefill = false
	g := startGateway(t, cfg, gateway.Options{})
	addFault(t, m.alpha, `{kind: cut, after: 4}`)
	types, text, completed, err := streamResponses(t, g)
	require.NoError(t, err)
	assert.NotEmpty(t, text, "deltas reached the client before the cut")
	assert.Nil(t, completed)
	assert.Equal(t, "error", types[len(types)-1])
}

func geminiClient(t *testing.T, g *gw) *genai.Client {
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "client-key", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: g.url}})
	require.NoError(t, err)
	return c
}

// TestGeminiSDK: the genai client talks to the gateway (generateContent and
// streamGenerateContent, the route as the model), with the primary cut
// mid-stream and continued on the equivalent.
func TestGeminiSDK(t *testing.T) {
	ctx := context.Background()
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	c := geminiClient(t, g)
	resp, err := c.Models.GenerateContent(ctx, "chat", genai.Text("hello"), nil)
	require.NoError(t, err)
	assert.NotEmpty(t, resp.Text())
	assert.Equal(t, genai.FinishReasonStop, resp.Candidates[0].FinishReason)

	addFault(t, m.alpha, `{kind: cut, after: 5}`)
	text, chunks := "", 0
	var last *genai.GenerateContentResponse
	for chunk, err := range c.Models.GenerateContentStream(ctx, "chat", genai.Text("hello"), nil) {
		require.NoError(t, err)
		chunks++
		text += chunk.Text()
		last = chunk
	}
	assert.Greater(t, chunks, 5)
	assert.Greater(t, len(text), 20, "the partial answer plus its continuation")
	require.NotNil(t, last)
	assert.Equal(t, genai.FinishReasonStop, last.Candidates[0].FinishReason)
	assert.Len(t, m.beta.Model().Journal(), 1, "the stream was continued on the equivalent")
}
