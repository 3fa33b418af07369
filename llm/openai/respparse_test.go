package openai

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResponseFastPath(t *testing.T) {
	tests := []struct {
		name string
		body string
		fast bool
	}{
		{"content", `{"id":"chatcmpl-1","object":"chat.completion","created":1741569952,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":2}},"service_tier":"default","system_fingerprint":"fp"}`, true},
		{"tool calls", `{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`, true},
		{"function_call finish", `{"choices":[{"message":{"content":"x"},"finish_reason":"function_call"}]}`, true},
		{"refusal", `{"choices":[{"message":{"content":null,"refusal":"no"},"finish_reason":"stop"}],"usage":null,"error":null}`, true},
		{"second choice", `{"choices":[{"message":{"content":"a"}},{"message":{"content":"b","tool_calls":[{"id":"x"}]}}]}`, true},
		{"escapes", `{"choices":[{"message":{"content":"a\"b\\c\n\u00e9\/"}}]}`, true},
		{"cache writes", `{"choices":[{"message":{"content":"a"}}],"usage":{"prompt_tokens":1,"prompt_tokens_details":{"cache_write_tokens":7}}}`, true},
		{"no choices", `{"id":"c","choices":[]}`, false},
		{"error object", `{"error":{"message":"bad","type":"invalid_request_error"}}`, false},
		{"role not a string", `{"choices":[{"message":{"role":1,"content":"a"}}]}`, false},
		{"object not a string", `{"object":1,"choices":[{"message":{"content":"a"}}]}`, false},
		{"folded key", `{"choices":[{"Message":{"content":"a"}}]}`, false},
		{"duplicate key", `{"choices":[{"message":{"content":"a","content":"b"}}]}`, false},
		{"null tool call", `{"choices":[{"message":{"tool_calls":[null]}}]}`, false},
		{"big number", `{"created":12345678901234567,"choices":[{"message":{"content":"a"}}]}`, false},
		{"trailing garbage", `{"choices":[{"message":{"content":"a"}}]}x`, false},
		{"surrogates", `{"choices":[{"message":{"content":"\ud83d\ude00"}}]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fast, ok := parseResponse([]byte(tt.body))
			if ok != tt.fast {
				t.Fatalf("fast path taken = %v, want %v", ok, tt.fast)
			}
			if !ok {
				return
			}
			slow, err := Codec{}.decodeResponseJSON([]byte(tt.body))
			if err != nil {
				t.Fatalf("encoding/json: %v", err)
			}
			if diff := cmp.Diff(slow, fast); diff != "" {
				t.Errorf("paths disagree (-json +fast):\n%s", diff)
			}
		})
	}
}

// FuzzResponseFastPath: whenever the fast path accepts a body, encoding/json
// accepts it too and reads the same response.
func FuzzResponseFastPath(f *testing.F) {
	for _, s := range []string{
		`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Hi","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}`,
		`{"choices":[{"message":{"content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"x":[true,false,null,1.5e+3,{"y":"z"}]}`,
		`{"choices":[{"message":{"content":"\u00e9"}},{"index":-0,"message":null}],"error":null}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		fast, ok := parseResponse([]byte(body))
		if !ok {
			return
		}
		slow, err := Codec{}.decodeResponseJSON([]byte(body))
		if err != nil {
			t.Fatalf("fast path accepted what encoding/json rejects: %v", err)
		}
		if diff := cmp.Diff(slow, fast); diff != "" {
			t.Fatalf("paths disagree (-json +fast):\n%s", diff)
		}
	})
}
