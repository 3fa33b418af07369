package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	osdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/brownout-dev/brownout/gateway"
)

// What openai-go's strictest reader of Responses streams, its
// ResponseAccumulator, and genai on the v1 API make of the gateway's
// answers, healthy and with the primary cut mid-stream.

// accumulate streams a Responses answer and feeds every event to openai-go's
// ResponseAccumulator, which validates the fields it reads (a message item
// without its content array, an output_text without text, an id of the
// wrong type are errors); it returns the deltas' text and the response the
// accumulator rebuilt.
func accumulate(t *testing.T, c osdk.Client, p responses.ResponseNewParams) (string, *responses.Response) {
	t.Helper()
	st := c.Responses.NewStreaming(context.Background(), p)
	var acc responses.ResponseAccumulator
	text := ""
	for st.Next() {
		ev := st.Current()
		if ev.Type == "response.output_text.delta" {
			text += ev.Delta
		}
		if ev.Type == "response.output_item.added" && ev.Item.Type == "message" {
			assert.True(t, ev.Item.JSON.Content.Valid(), "the added message item has its content array: %s", ev.RawJSON())
		}
		var se responses.ResponsesServerEventUnion
		require.NoError(t, json.Unmarshal([]byte(ev.RawJSON()), &se))
		require.NoError(t, acc.AddEvent(se), "event %s", ev.RawJSON())
	}
	require.NoError(t, st.Err())
	assert.Equal(t, text, acc.Snapshot().OutputText(), "the accumulator's text is the deltas'")
	r, err := acc.ReconstructedResponse()
	require.NoError(t, err)
	return text, r
}

// assertNative checks a Responses answer looks as the API's: native id
// prefixes and output_text parts with their annotations and logprobs.
func assertNative(t *testing.T, r *responses.Response) {
	t.Helper()
	assert.True(t, strings.HasPrefix(r.ID, "resp_") && !strings.Contains(r.ID, "chatcmpl"), r.ID)
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			assert.True(t, strings.HasPrefix(it.ID, "msg_") && !strings.Contains(it.ID, "chatcmpl"), it.ID)
			for _, p := range it.Content {
				if p.Type == "output_text" {
					assert.True(t, p.JSON.Annotations.Valid(), "annotations: %s", it.RawJSON())
					assert.True(t, p.JSON.Logprobs.Valid(), "logprobs: %s", it.RawJSON())
				}
			}
		case "function_call":
			assert.True(t, strings.HasPrefix(it.ID, "fc_"), it.ID)
			assert.True(t, strings.HasPrefix(it.CallID, "call_"), it.CallID)
		}
	}
	assert.True(t, r.Usage.JSON.InputTokensDetails.Valid() && r.Usage.JSON.OutputTokensDetails.Valid(), "usage details: %s", r.Usage.RawJSON())
}

// TestResponsesSDKAccumulator: openai-go's stream accumulator reads every
// event of the gateway's Responses streams without an error and rebuilds
// the answer the deltas carried — healthy, and cut mid-stream on the
// primary then continued on the equivalent.
func TestResponsesSDKAccumulator(t *testing.T) {
	for _, cut := range []bool{false, true} {
		t.Run(map[bool]string{false: "healthy", true: "primary cut"}[cut], func(t *testing.T) {
			m := startMocks(t)
			g := startGateway(t, m.config(t, ""), gateway.Options{})
			if cut {
				addFault(t, m.alpha, `{kind: cut, after: 5}`)
			}
			text, r := accumulate(t, openaiClient(g), responsesParams("hello"))
			assert.Greater(t, len(text), 20)
			assert.Equal(t, responses.ResponseStatusCompleted, r.Status)
			assert.Equal(t, text, r.OutputText())
			assertNative(t, r)
			if cut {
				assert.Len(t, m.beta.Model().Journal(), 1, "the stream was continued on the equivalent")
			}
		})
	}
}

// TestResponsesSDKShapes: a whole Responses answer through the gateway is
// native (ids, annotations, usage details); a tool call's items carry fc_
// and call_ ids; an answer cut by max_output_tokens is incomplete, with its
// message incomplete too, streamed or not; previous_response_id is the
// API's own 400.
func TestResponsesSDKShapes(t *testing.T) {
	ctx := context.Background()
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	c := openaiClient(g)

	r, err := c.Responses.New(ctx, responsesParams("hello"))
	require.NoError(t, err)
	assertNative(t, r)

	p := responsesParams("What is the weather in Paris?")
	p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather",
		map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}, false)}
	p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: osdk.Opt(responses.ToolChoiceOptionsRequired)}
	r, err = c.Responses.New(ctx, p)
	require.NoError(t, err)
	assertNative(t, r)
	require.Equal(t, "function_call", r.Output[len(r.Output)-1].Type)

	p = responsesParams("tell me a long story")
	p.MaxOutputTokens = osdk.Int(16)
	r, err = c.Responses.New(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, responses.ResponseStatusIncomplete, r.Status)
	assert.Equal(t, "max_output_tokens", r.IncompleteDetails.Reason)
	require.NotEmpty(t, r.Output)
	assert.Equal(t, "incomplete", string(r.Output[0].Status), "the message of an incomplete response")
	_, streamed := accumulate(t, c, p)
	assert.Equal(t, responses.ResponseStatusIncomplete, streamed.Status)
	assert.Equal(t, "incomplete", string(streamed.Output[0].Status))

	p = responsesParams("and then?")
	p.PreviousResponseID = osdk.String("resp_unknown")
	var raw *http.Response
	_, err = c.Responses.New(ctx, p, option.WithResponseInto(&raw))
	var oe *osdk.Error
	require.True(t, errors.As(err, &oe), "%v", err)
	assert.Equal(t, 400, oe.StatusCode)
	assert.Equal(t, "invalid_request_error", oe.Type)
	assert.Equal(t, "previous_response_id", oe.Param)
	assert.Equal(t, "previous_response_not_found", oe.Code)
}

// TestGeminiSDKv1: genai with APIVersion "v1" (the path @google/genai and
// Vertex users call) reaches the gateway and the mock alike, and the
// gateway's answers carry Gemini-shaped responseIds whatever served them.
func TestGeminiSDKv1(t *testing.T) {
	ctx := context.Background()
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	for _, base := range []struct{ name, url, model string }{{"gateway", g.url, "chat"}, {"mock", m.gamma.URL, "gemini-flash"}} {
		t.Run(base.name, func(t *testing.T) {
			c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "client-key", Backend: genai.BackendGeminiAPI,
				HTTPOptions: genai.HTTPOptions{BaseURL: base.url, APIVersion: "v1"}})
			require.NoError(t, err)
			resp, err := c.Models.GenerateContent(ctx, base.model, genai.Text("hello"), nil)
			require.NoError(t, err)
			assert.NotEmpty(t, resp.Text())
			assert.Equal(t, genai.FinishReasonStop, resp.Candidates[0].FinishReason)
			assert.Regexp(t, `^[A-Za-z0-9_-]{10,}$`, resp.ResponseID)
			assert.NotContains(t, resp.ResponseID, "chatcmpl")

			text := ""
			for chunk, err := range c.Models.GenerateContentStream(ctx, base.model, genai.Text("hello"), nil) {
				require.NoError(t, err)
				text += chunk.Text()
				assert.NotContains(t, chunk.ResponseID, "chatcmpl")
			}
			assert.Greater(t, len(text), 20)
		})
	}
	assert.Positive(t, m.alpha.Model().JournalLen(), "the gateway's answers came from the OpenAI-format primary")
}
