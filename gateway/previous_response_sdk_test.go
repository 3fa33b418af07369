package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	osdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/internal/redistest"
)

// TestPreviousResponseID: with responses.store_ttl the gateway keeps each
// Responses conversation and a request naming previous_response_id
// continues it on the Chat Completions primary: a tool loop driven only by
// previous_response_id and function_call_output items (as agent
// frameworks do) walks the mock's scripted steps to the answer, which it
// could not do without the earlier turns; a streamed turn is kept too; an
// unknown id or one stored with store:false is the API's 400.
func TestPreviousResponseID(t *testing.T) {
	ctx := context.Background()
	m := startLoopMocks(t)
	g := startGateway(t, m.config(t, "responses: {store_ttl: 1m}\n"), gateway.Options{})
	c := openaiClient(g)
	var tools []responses.ToolUnionParam
	for _, n := range loopTools {
		tools = append(tools, responses.ToolParamOfFunction(n, cityTool(), false))
	}
	p := responsesParams("What time is it in the capital of France?")
	p.Tools = tools
	r, err := c.Responses.New(ctx, p)
	require.NoError(t, err)
	var called []string
	for step := 1; step <= 6; step++ {
		var call *responses.ResponseFunctionToolCall
		for _, it := range r.Output {
			if it.Type == "function_call" {
				fc := it.AsFunctionCall()
				call = &fc
			}
		}
		if call == nil {
			break
		}
		called = append(called, call.Name)
		next := responses.ResponseNewParams{Model: "chat", Tools: tools, PreviousResponseID: osdk.String(r.ID),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				functionOutput(call.CallID, loopResult(call.Name, step))}}}
		if step == 2 {
			// One turn streamed: its conversation is kept as well.
			_, r = accumulate(t, c, next)
			continue
		}
		r, err = c.Responses.New(ctx, next)
		require.NoError(t, err)
	}
	assert.Equal(t, loopTools, called)
	assert.Equal(t, "Done: "+loopResult("get_time", 3), r.OutputText())

	p = responsesParams("forget this")
	p.Store = osdk.Bool(false)
	r, err = c.Responses.New(ctx, p)
	require.NoError(t, err)
	for _, prev := range []string{r.ID, "resp_unknown"} {
		p = responsesParams("and then?")
		p.PreviousResponseID = osdk.String(prev)
		_, err = c.Responses.New(ctx, p)
		var oe *osdk.Error
		require.True(t, errors.As(err, &oe), "%v", err)
		assert.Equal(t, 400, oe.StatusCode)
		assert.Equal(t, "previous_response_id", oe.Param)
		assert.True(t, strings.Contains(oe.Message, prev), oe.Message)
	}
}

func functionOutput(callID, output string) responses.ResponseInputItemUnionParam {
	item := responses.ResponseInputItemParamOfFunctionCallOutput(output)
	item.OfFunctionCallOutput.CallID = osdk.String(callID)
	return item
}

// TestFleetPreviousResponseID: a fleet shares its Responses conversations:
// a response answered by one replica is continued by another.
func TestFleetPreviousResponseID(t *testing.T) {
	ctx := context.Background()
	m := startMocks(t)
	gs := fleetOf(t, m, redistest.Start(t), 2, "responses: {store_ttl: 1m}\n")
	c0, c1 := openaiClientAt(gs[0].url), openaiClientAt(gs[1].url)
	first, err := c0.Responses.New(ctx, responsesParams(strings.Repeat("My name is Ada. ", 20)))
	require.NoError(t, err)
	fresh, err := c1.Responses.New(ctx, responsesParams("What is my name?"))
	require.NoError(t, err)
	p := responsesParams("What is my name?")
	p.PreviousResponseID = osdk.String(first.ID)
	next, err := c1.Responses.New(ctx, p)
	require.NoError(t, err, "the other replica continues the conversation")
	assert.Greater(t, next.Usage.InputTokens, fresh.Usage.InputTokens+20, "the earlier turns were sent upstream")
}
