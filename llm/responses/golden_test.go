package responses_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/internal/golden"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/openai"
	"github.com/brownout-dev/brownout/llm/responses"
)

// fixed is a codec whose clock is fixed, so "created_at" is stable.
var fixed = responses.Codec{Codec: openai.Codec{Now: func() time.Time { return time.Unix(1764633600, 0) }}}

func pretty(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, json.Indent(&out, b, "", "  "))
	return append(out.Bytes(), '\n')
}

// goldenResponses are the answers each golden file holds, as an upstream in
// another format would hand them to the gateway (chatcmpl- ids included).
var goldenResponses = map[string]*llm.Response{
	"text": {ID: "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", Model: "gpt-4o", Created: 1764633600, Content: "Hello there.",
		FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 12, OutputTokens: 3, CachedInputTokens: 4, ReasoningTokens: 1}},
	"tool_calls": {ID: "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b", Model: "gpt-4o", Created: 1764633600,
		ToolCalls:    []llm.ToolCall{{ID: "call_12345xyz", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {Name: "get_time", Arguments: `{}`}},
		FinishReason: llm.FinishToolCalls, Usage: llm.Usage{InputTokens: 30, OutputTokens: 20}},
	"incomplete": {ID: "msg_01XFDUDYJgAACzvnptvVoYEL", Model: "claude-sonnet", Created: 1764633600, Content: "Once upon a",
		FinishReason: llm.FinishLength, Usage: llm.Usage{InputTokens: 5, OutputTokens: 3}},
	"refusal": {ID: "resp_1", Model: "gpt-4o", Created: 1764633600, Refusal: "I can't help with that.", FinishReason: llm.FinishStop},
}

// TestGoldenResponseObjects: the response objects as the API writes them —
// every output_text part with annotations and logprobs arrays, message and
// function_call items with their own fields, native id prefixes, an
// incomplete response whose message is incomplete too, usage details.
func TestGoldenResponseObjects(t *testing.T) {
	for name, r := range goldenResponses {
		t.Run(name, func(t *testing.T) {
			b, err := fixed.EncodeResponse(r)
			require.NoError(t, err)
			golden.Check(t, "testdata/golden/response_"+name+".json", pretty(t, b))
		})
	}
}

// goldenStreams are the normalized event sequences each stream golden file
// is written from.
var goldenStreams = map[string][]llm.StreamEvent{
	"text": {
		{Type: llm.EventStart, ID: "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", Model: "gpt-4o"},
		{Type: llm.EventTextDelta, Text: "Hel"}, {Type: llm.EventTextDelta, Text: "lo."},
		{Type: llm.EventFinish, FinishReason: llm.FinishStop},
		{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 12, OutputTokens: 2, CachedInputTokens: 4}},
	},
	"tool_calls": {
		{Type: llm.EventStart, ID: "resp_abc", Model: "gpt-4o"},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "call_1", Name: "get_weather"}},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: `{"city":`}},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: `"Paris"}`}},
		{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls},
		{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 30, OutputTokens: 9}},
	},
	"incomplete": {
		{Type: llm.EventStart, ID: "resp_abc", Model: "gpt-4o"},
		{Type: llm.EventTextDelta, Text: "Once upon"},
		{Type: llm.EventFinish, FinishReason: llm.FinishLength},
		{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 5, OutputTokens: 2}},
	},
	"error": {
		{Type: llm.EventStart, ID: "resp_abc", Model: "gpt-4o"},
		{Type: llm.EventTextDelta, Text: "partial"},
		{Type: llm.EventError, Err: &llm.Error{Status: 503, Type: llm.ErrOverloaded, Message: "every target failed"}},
	},
}

// TestGoldenStreams: the semantic events of a stream, one JSON object a
// line, as the API writes them.
func TestGoldenStreams(t *testing.T) {
	for name, evs := range goldenStreams {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := fixed.NewStreamEncoder(&buf)
			for _, ev := range evs {
				require.NoError(t, enc.Encode(ev))
			}
			require.NoError(t, enc.Close())
			var out bytes.Buffer
			for line := range strings.SplitSeq(buf.String(), "\n") {
				if data, ok := strings.CutPrefix(line, "data: "); ok {
					out.Write(pretty(t, []byte(data)))
				}
			}
			golden.Check(t, "testdata/golden/stream_"+name+".jsonl", out.Bytes())
		})
	}
}

// TestOldShapesFail holds what clients broke on: an output_text part
// without annotations, a first message item without content, an
// incomplete response with a completed message, a foreign id.
func TestOldShapesFail(t *testing.T) {
	b, err := fixed.EncodeResponse(goldenResponses["incomplete"])
	require.NoError(t, err)
	var r struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Output []struct {
			ID      string `json:"id"`
			Status  string `json:"status"`
			Content []map[string]json.RawMessage
		} `json:"output"`
	}
	require.NoError(t, json.Unmarshal(b, &r))
	require.Regexp(t, `^resp_[0-9a-f]{48}$`, r.ID)
	require.Regexp(t, `^msg_[0-9a-f]{48}$`, r.Output[0].ID)
	require.Equal(t, "incomplete", r.Status)
	require.Equal(t, "incomplete", r.Output[0].Status)
	require.JSONEq(t, `[]`, string(r.Output[0].Content[0]["annotations"]))
	require.JSONEq(t, `[]`, string(r.Output[0].Content[0]["logprobs"]))

	var buf bytes.Buffer
	enc := fixed.NewStreamEncoder(&buf)
	require.NoError(t, enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: "x"}))
	require.Contains(t, buf.String(), `"item":{"id":"msg_`)
	require.Contains(t, buf.String(), `"content":[],"role":"assistant"}`)
}
