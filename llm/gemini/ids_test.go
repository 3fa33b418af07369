package gemini_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/gemini"
)

// TestResponseIDNative: an answer served by an upstream of another format
// carries a Gemini-shaped responseId (it once read "chatcmpl-…"), the same
// in a whole response and in every stream chunk; Gemini's own id is kept.
func TestResponseIDNative(t *testing.T) {
	for _, id := range []string{"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "msg_01XFDUDYJgAACzvnptvVoYEL", "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b"} {
		b, err := gemini.Codec{}.EncodeResponse(&llm.Response{ID: id, Model: "gemini-2.5-flash", Content: "Hi", FinishReason: llm.FinishStop})
		require.NoError(t, err)
		var r struct {
			ResponseID string `json:"responseId"`
		}
		require.NoError(t, json.Unmarshal(b, &r))
		require.Regexp(t, `^[A-Za-z0-9_-]{22}$`, r.ResponseID, id)

		var buf bytes.Buffer
		enc := gemini.Codec{}.NewStreamEncoder(&buf)
		require.NoError(t, enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: id, Model: "gemini-2.5-flash"}))
		require.NoError(t, enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: "Hi"}))
		require.NoError(t, enc.Close())
		require.Contains(t, buf.String(), `"responseId":"`+r.ResponseID+`"`)
		require.NotContains(t, buf.String(), id)
	}
	b, err := gemini.Codec{}.EncodeResponse(&llm.Response{ID: "yjk0aKPXBsKa1e8P1v-R6Ac", Content: "Hi", FinishReason: llm.FinishStop})
	require.NoError(t, err)
	require.Contains(t, string(b), `"responseId":"yjk0aKPXBsKa1e8P1v-R6Ac"`)
}
