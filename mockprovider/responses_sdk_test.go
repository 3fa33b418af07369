package mockprovider_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/faults"
	rsp "github.com/brownout-dev/brownout/llm/responses"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
)

func startResponses(t *testing.T, fs ...faults.Spec) oai.Client {
	t.Helper()
	s := spec("openai", rsp.Format, "gpt-4o")
	s.Faults = fs
	p := mockprovider.StartTest(t, s)
	return oai.NewClient(option.WithBaseURL(p.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

// responsesOutcome is what openai-go's Responses stream saw: an HTTP
// status, a transport or decoding failure, the in-band error event, a
// stream that stopped without its terminal event, or the terminal status
// with the text.
func responsesOutcome(c oai.Client, p responses.ResponseNewParams) string {
	st := c.Responses.NewStreaming(context.Background(), p)
	last, text := "", ""
	var final responses.Response
	for st.Next() {
		ev := st.Current()
		last = ev.Type
		switch ev.Type {
		case "response.output_text.delta":
			text += ev.Delta
		case "response.function_call_arguments.delta":
			text += ev.Delta
		case "response.completed", "response.incomplete":
			final = ev.Response
		case "error":
			return "error event " + ev.Code
		}
	}
	var ae *oai.Error
	switch err := st.Err(); {
	case errors.As(err, &ae):
		return fmt.Sprintf("status %d", ae.StatusCode)
	case err != nil:
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return "malformed"
		}
		return "transport"
	case last != "response.completed" && last != "response.incomplete":
		return "no terminal event"
	}
	if final.OutputText() != text && final.Output[len(final.Output)-1].Arguments.OfString != text {
		return "terminal event disagrees with the deltas"
	}
	if final.Status == responses.ResponseStatusIncomplete {
		return "incomplete " + final.IncompleteDetails.Reason
	}
	return string(final.Status)
}

// TestResponsesFaults: every fault kind, seen through openai-go's Responses
// streaming client against a mock speaking the Responses API.
func TestResponsesFaults(t *testing.T) {
	two, four := 2, 4
	hi := responses.ResponseNewParams{Model: "gpt-4o", Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("hi")}}
	withTemp := hi
	withTemp.Temperature = oai.Float(0.2)
	tools := responses.ResponseNewParams{Model: "gpt-4o", Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("the weather in Paris?")},
		Tools: []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object"}, false)}}
	short := yamlfile.Duration(50 * time.Millisecond)
	tests := []struct {
		spec   faults.Spec
		params responses.ResponseNewParams
		want   string
	}{
		{faults.Spec{Kind: faults.KindAuthFailure}, hi, "status 401"},
		{faults.Spec{Kind: faults.KindRejectParam}, withTemp, "status 400"},
		{faults.Spec{Kind: faults.KindContextLength}, hi, "status 400"},
		{faults.Spec{Kind: faults.KindHTTPError, Status: 503}, hi, "status 503"},
		{faults.Spec{Kind: faults.KindReset}, hi, "transport"},
		{faults.Spec{Kind: faults.KindNoResponse, For: short}, hi, "transport"},
		{faults.Spec{Kind: faults.KindRefusal}, hi, "completed"},
		{faults.Spec{Kind: faults.KindContentFilter}, hi, "incomplete content_filter"},
		{faults.Spec{Kind: faults.KindQualityDrop}, hi, "completed"},
		{faults.Spec{Kind: faults.KindMalformedJSONContent}, hi, "completed"},
		{faults.Spec{Kind: faults.KindEmptyToolArgs}, tools, "completed"},
		{faults.Spec{Kind: faults.KindTruncate}, hi, "incomplete max_output_tokens"},
		{faults.Spec{Kind: faults.KindTokenRate, Rate: 2000}, hi, "completed"},
		{faults.Spec{Kind: faults.KindTTFT, Delay: &faults.Latency{Fixed: yamlfile.Duration(time.Millisecond)}}, hi, "completed"},
		{faults.Spec{Kind: faults.KindSlowHeaders, Delay: &faults.Latency{Fixed: yamlfile.Duration(time.Millisecond)}}, hi, "completed"},
		{faults.Spec{Kind: faults.KindStall, After: &two, For: short}, hi, "completed"}, // a pause, then the rest,
		{faults.Spec{Kind: faults.KindCut, After: &four}, hi, "transport"},              // the connection is aborted,
		{faults.Spec{Kind: faults.KindMalformedChunk, At: &two}, hi, "malformed"},
		{faults.Spec{Kind: faults.KindMissingDone}, hi, "no terminal event"}, // response.completed is the end marker,
	}
	for _, tt := range tests {
		t.Run(string(tt.spec.Kind), func(t *testing.T) {
			c := startResponses(t, tt.spec)
			require.Equal(t, tt.want, responsesOutcome(c, tt.params))
		})
	}
	t.Run("healthy", func(t *testing.T) {
		require.Equal(t, "completed", responsesOutcome(startResponses(t), hi))
		require.Equal(t, "completed", responsesOutcome(startResponses(t), tools))
	})
}
