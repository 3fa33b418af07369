package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
)

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *llm.Request
	}{
		{"string input", `{"model":"gpt-4o","input":"Hi","instructions":"Be brief.","max_output_tokens":50}`,
			&llm.Request{Model: "gpt-4o", MaxTokens: 50, Messages: []llm.Message{
				{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("Be brief.")}},
				{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("Hi")}}}}},
		{"items, tools and a schema", `{"model":"m","stream":true,"input":[
			{"role":"developer","content":"Use tools."},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"Weather in Paris?"}]},
			{"type":"function_call","call_id":"call_1","name":"weather","arguments":"{\"city\":\"Paris\"}"},
			{"type":"function_call_output","call_id":"call_1","output":"sunny"}],
			"tools":[{"type":"function","name":"weather","parameters":{"type":"object"},"strict":true}],
			"tool_choice":{"type":"function","name":"weather"},"parallel_tool_calls":false,
			"text":{"format":{"type":"json_schema","name":"w","schema":{"type":"object"},"strict":true}},"store":false}`,
			&llm.Request{Model: "m", Stream: true, IncludeUsage: true, Messages: []llm.Message{
				{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("Use tools.")}},
				{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("Weather in Paris?")}},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`}}},
				{Role: llm.RoleTool, ToolCallID: "call_1", Content: []llm.Part{llm.TextPart("sunny")}}},
				Tools:          []llm.Tool{{Name: "weather", Parameters: json.RawMessage(`{"type":"object"}`), Strict: true}},
				ToolChoice:     &llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "weather", DisableParallel: true},
				ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "w", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Codec{}.DecodeRequest([]byte(tt.body))
			require.NoError(t, err)
			require.Empty(t, cmp.Diff(tt.want, got))
			// What is written reads back the same.
			body, err := Codec{}.EncodeRequest(got)
			require.NoError(t, err)
			again, err := Codec{}.DecodeRequest(body)
			require.NoError(t, err)
			require.Empty(t, cmp.Diff(got, again))
		})
	}
}

func TestDecodeRequestErrorsNameTheField(t *testing.T) {
	tests := []struct{ body, param string }{
		{`{"model":"m"}`, "input"},
		{`{"model":"m","input":[{"type":"reasoning"}]}`, "input[0].type"},
		{`{"model":"m","input":[{"role":"robot","content":"x"}]}`, "input[0].role"},
		{`{"model":"m","input":"x","tools":[{"type":"web_search"}]}`, "tools[0].type"},
		{`{"model":"m","input":"x","tool_choice":"sometimes"}`, "tool_choice"},
		{`{"model":"m","input":"x","text":{"format":{"type":"yaml"}}}`, "text.format.type"},
		{`{"model":"m","input":"x","previous_response_id":"resp_1"}`, "previous_response_id"},
		{`{"model":"m","input":"x","conversation":"conv_1"}`, "conversation"},
	}
	for _, tt := range tests {
		_, err := Codec{}.DecodeRequest([]byte(tt.body))
		var le *llm.Error
		require.True(t, errors.As(err, &le), tt.body)
		require.Equal(t, 400, le.Status)
		require.Equal(t, tt.param, le.Param, tt.body)
	}
}

// The stream's semantic events come in the documented order, and decode
// back to the normalized events that made them.
func TestStreamEventOrderAndRoundTrip(t *testing.T) {
	u := llm.Usage{InputTokens: 12, OutputTokens: 7}
	evs := []llm.StreamEvent{
		{Type: llm.EventStart, ID: "resp_abc", Model: "gpt-4o"},
		{Type: llm.EventTextDelta, Text: "Hel"},
		{Type: llm.EventTextDelta, Text: "lo"},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "call_1", Name: "f"}},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: `{"a":1}`}},
		{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls},
		{Type: llm.EventUsage, Usage: &u},
	}
	var buf bytes.Buffer
	enc := Codec{}.NewStreamEncoder(&buf)
	for _, ev := range evs {
		require.NoError(t, enc.Encode(ev))
	}
	require.NoError(t, enc.Close())
	var types []string
	for _, line := range bytes.Split(buf.Bytes(), []byte("\n")) {
		if name, ok := bytes.CutPrefix(line, []byte("event: ")); ok {
			types = append(types, string(name))
		}
	}
	require.Equal(t, []string{
		"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done",
		"response.completed",
	}, types)
	require.Contains(t, buf.String(), `"sequence_number":13`)

	dec := Codec{}.NewStreamDecoder(&buf)
	var got []llm.StreamEvent
	for {
		ev, err := dec.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, ev)
	}
	require.Empty(t, cmp.Diff(evs, got))
}

func TestStreamCutAndInBandError(t *testing.T) {
	var buf bytes.Buffer
	enc := Codec{}.NewStreamEncoder(&buf)
	require.NoError(t, enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: "resp_1", Model: "m"}))
	require.NoError(t, enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: "partial"}))
	cut := buf.String()
	require.NoError(t, enc.Encode(llm.StreamEvent{Type: llm.EventError, Err: &llm.Error{Status: 429, Type: llm.ErrRateLimit, Message: "slow down"}}))
	require.Contains(t, buf.String(), "event: error\ndata: {")
	require.NotContains(t, buf.String(), "response.completed")

	dec := Codec{}.NewStreamDecoder(&buf)
	var last llm.StreamEvent
	for {
		ev, err := dec.Next()
		require.NotErrorIs(t, err, io.EOF, "an errored stream has no clean end")
		if err != nil {
			require.ErrorIs(t, err, io.ErrUnexpectedEOF)
			break
		}
		last = ev
	}
	require.Equal(t, llm.EventError, last.Type)
	require.Equal(t, llm.ErrRateLimit, last.Err.Type)
	require.Equal(t, "slow down", last.Err.Message)

	dec = Codec{}.NewStreamDecoder(bytes.NewBufferString(cut))
	for {
		_, err := dec.Next()
		if err != nil {
			require.ErrorIs(t, err, io.ErrUnexpectedEOF, "a stream without its terminal event is cut")
			break
		}
	}
}

func TestResponseRoundTrip(t *testing.T) {
	for _, r := range []*llm.Response{
		{ID: "resp_1", Model: "m", Created: 1700000000, Content: "Hi", FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 3, OutputTokens: 1}},
		{ID: "resp_2", Model: "m", Created: 1700000000, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "f", Arguments: "{}"}}, FinishReason: llm.FinishToolCalls},
		{ID: "resp_3", Model: "m", Created: 1700000000, Content: "Hi th", FinishReason: llm.FinishLength},
	} {
		body, err := Codec{}.EncodeResponse(r)
		require.NoError(t, err)
		got, err := Codec{}.DecodeResponse(body)
		require.NoError(t, err)
		require.Empty(t, cmp.Diff(r, got))
	}
}

// TestPreviousResponseIDRefused: a request continuing a stored response is
// refused with the API's own 400 (it was once answered 200 without the
// earlier turns); an explicit null is no reference.
func TestPreviousResponseIDRefused(t *testing.T) {
	_, err := Codec{}.DecodeRequest([]byte(`{"model":"m","input":"and then?","previous_response_id":"resp_abc"}`))
	var le *llm.Error
	require.ErrorAs(t, err, &le)
	status, body := Codec{}.EncodeError(le)
	require.Equal(t, 400, status)
	require.JSONEq(t, `{"error":{"message":"Previous response with id 'resp_abc' not found.","type":"invalid_request_error",
		"param":"previous_response_id","code":"previous_response_not_found"}}`, string(body))

	_, err = Codec{}.DecodeRequest([]byte(`{"model":"m","input":"hi","previous_response_id":null}`))
	require.NoError(t, err)
}

// TestDecodeContinuation: a caller that keeps responses gets the
// previous_response_id (not in Extra, where it would travel upstream) and
// the store flag; a conversation reference is still refused.
func TestDecodeContinuation(t *testing.T) {
	req, st, err := Codec{}.DecodeContinuation([]byte(`{"model":"m","input":"and then?","previous_response_id":"resp_abc","store":false}`))
	require.NoError(t, err)
	require.Equal(t, State{Previous: "resp_abc", NoStore: true}, st)
	require.Empty(t, req.Extra)
	require.Len(t, req.Messages, 1)

	_, st, err = Codec{}.DecodeContinuation([]byte(`{"model":"m","input":"hi"}`))
	require.NoError(t, err)
	require.Equal(t, State{}, st)

	_, _, err = Codec{}.DecodeContinuation([]byte(`{"model":"m","input":"hi","conversation":{"id":"conv_1"}}`))
	var le *llm.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, "conversation", le.Param)
	require.Contains(t, le.Message, "conv_1")
}
