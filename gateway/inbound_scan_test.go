package gateway

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/anthropic"
	"github.com/brownout-dev/brownout/llm/openai"
)

func TestScanRequest(t *testing.T) {
	cases := []struct {
		body string
		want shape
	}{
		{`{"model":"chat","messages":[{"role":"user","content":"hi"}],"stream":true}`,
			shape{model: "chat", stream: true, messages: 1, nodes: 3, strs: 8}},
		{`{"messages":[],"model":"c\u0068at","stream":false}`, shape{model: "chat", nodes: 2, strs: 4}},
		{`{"m\u0065ssages":[1,2,[3],{"a":[4]}], "max_tokens": 5}`, shape{messages: 4, nodes: 5, strs: 3, maxTokens: 5}},
		// output caps: every API's name, the largest of repeated ones; not nested, not a float
		{`{"max_completion_tokens":700,"max_tokens":30}`, shape{nodes: 1, strs: 2, maxTokens: 700}},
		{`{"max_output_tokens":12}`, shape{nodes: 1, strs: 1, maxTokens: 12}},
		{`{"generationConfig":{"temperature":1,"maxOutputTokens":64},"contents":[]}`, shape{nodes: 3, strs: 4, maxTokens: 64}},
		{`{"metadata":{"max_tokens":9},"max_tokens":1e9}`, shape{nodes: 2, strs: 3}},
		{`{"max_tokens":-5}`, shape{nodes: 1, strs: 1}},
		// a nested "model" or "messages" is not the top-level one
		{`{"metadata":{"model":"x","messages":[1,2]},"model":"y"}`, shape{model: "y", nodes: 3, strs: 6}},
		// repeated keys: the largest messages array counts
		{`{"messages":[1,2,3],"messages":[1]}`, shape{messages: 3, nodes: 3, strs: 2}},
		{`{"model":"a\"b","messages":["x\"]",`, shape{model: `a"b`, messages: 1, nodes: 2, strs: 4}},
		{`not json`, shape{}},
		{`{"model":"unterminated`, shape{nodes: 1, strs: 1}},
	}
	for _, c := range cases {
		require.Equal(t, c.want, scanRequest([]byte(c.body)), c.body)
	}
}

// adversarial are request bodies shaped to make decoding expensive.
func adversarial(n int) map[string]string {
	rep := func(s string, n int) string { return strings.TrimSuffix(strings.Repeat(s+",", n), ",") }
	return map[string]string{
		"tiny messages":     `{"model":"chat","messages":[` + rep(`{"role":"user","content":"x"}`, n) + `]}`,
		"empty messages":    `{"model":"chat","messages":[` + rep(`{}`, n) + `]}`,
		"many parts":        `{"model":"chat","messages":[{"role":"user","content":[` + rep(`{"type":"text","text":"x"}`, n) + `]}]}`,
		"many tool calls":   `{"model":"chat","messages":[{"role":"assistant","tool_calls":[` + rep(`{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}`, n) + `]}]}`,
		"many tools":        `{"model":"chat","messages":[],"tools":[` + rep(`{"type":"function","function":{"name":"f","parameters":{}}}`, n) + `]}`,
		"anthropic tools":   `{"model":"chat","max_tokens":5,"messages":[],"tools":[` + rep(`{"name":"f","input_schema":{"type":"object"}}`, n) + `]}`,
		"anthropic blocks":  `{"model":"chat","max_tokens":5,"messages":[{"role":"user","content":[` + rep(`{"type":"text","text":"x"}`, n) + `]}]}`,
		"tool results":      `{"model":"chat","max_tokens":5,"messages":[{"role":"user","content":[` + rep(`{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"x"}]}`, n) + `]}]}`,
		"deep parameters":   `{"model":"chat","messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":` + strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n) + `}}]}`,
		"stop strings":      `{"model":"chat","messages":[],"stop":[` + rep(`"x"`, n) + `]}`,
		"escaped text":      `{"model":"chat","messages":[{"role":"user","content":"` + strings.Repeat(`\u00e9`, n) + `"}]}`,
		"metadata keys":     `{"model":"chat","messages":[],"metadata":{` + rep(`"k":"v"`, n) + `}}`,
		"big numbers array": `{"model":"chat","messages":[],"logit_bias":{` + rep(`"1":1`, n) + `}}`,
	}
}

// allocated returns the bytes f allocates (TotalAlloc over its run).
func allocated(f func()) int64 {
	var a, b goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&a)
	f()
	goruntime.ReadMemStats(&b)
	return int64(b.TotalAlloc - a.TotalAlloc)
}

// The decoded-size estimate bounds what decoding really allocates, for
// both inbound formats and every adversarial shape: limits.max_decoded_bytes
// is a memory bound, not a hope.
func TestDecodedEstimateBoundsDecoding(t *testing.T) {
	for _, codec := range []llm.Codec{openai.Codec{}, anthropic.Codec{}} {
		for name, body := range adversarial(20000) {
			t.Run(fmt.Sprintf("%s/%s", codec.Format(), name), func(t *testing.T) {
				b := []byte(body)
				sh := scanRequest(b)
				got := allocated(func() { _, _ = codec.DecodeRequest(b) })
				est := sh.decoded(len(b))
				t.Logf("body %d B, decoded %d B, estimate %d B (%.1fx)", len(b), got, est, float64(est)/float64(max(got, 1)))
				require.LessOrEqual(t, got, est, "decoding allocated more than the estimate")
			})
		}
	}
}
