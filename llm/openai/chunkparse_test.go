package openai

import (
	"fmt"
	"testing"
)

// render prints a chunk in a form two decodings can be compared by.
func render(c *chunk) string {
	s := fmt.Sprintf("id=%q model=%q", c.id, c.model)
	for _, ch := range c.choices {
		s += fmt.Sprintf(" [%d content=%q refusal=%q finish=%q", ch.index, ch.content, ch.refusal, ch.finish)
		for _, tc := range ch.toolCalls {
			s += fmt.Sprintf(" tc(%d %q %q %q)", tc.index, tc.id, tc.name, tc.args)
		}
		s += "]"
	}
	return s
}

func TestChunkFastPath(t *testing.T) {
	tests := []struct {
		name string
		data string
		fast bool
	}{
		{"content", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"hi"},"logprobs":null,"finish_reason":null}]}`, true},
		{"role chunk", `{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}],"usage":null}`, true},
		{"escapes", `{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"a\"b\\c\n\u00e9\/"}}]}`, true},
		{"utf8", `{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"héllo ✓"}}]}`, true},
		{"tool call", `{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}}]}`, true},
		{"finish", `{"id":"c","model":"m","choices":[{"index":0,"delta":{},"logprobs":{"content":[{"token":"x","logprob":-0.5e-3,"bytes":[1,2]}]},"finish_reason":"stop"}]}`, true},
		{"whitespace", " {\n\t\"id\" : \"c\" , \"choices\" : [ ] } \r\n", true},
		{"usage", `{"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, true},
		{"usage details", `{"id":"c","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":4,"cache_write_tokens":2},"completion_tokens_details":{"reasoning_tokens":3}}}`, true},
		{"usage token as string", `{"choices":[],"usage":{"prompt_tokens":"1"}}`, false},
		{"usage token decimal", `{"choices":[],"usage":{"completion_tokens":1.0}}`, false},
		{"usage folded key", `{"choices":[],"usage":{"Prompt_Tokens":1}}`, false},
		{"error", `{"error":{"message":"x"}}`, false},
		{"duplicate key", `{"id":"a","id":"b","choices":[]}`, false},
		{"folded key", `{"ID":"a","choices":[]}`, false},
		{"surrogate pair", `{"id":"c","choices":[{"delta":{"content":"\ud83d\ude00"}}]}`, false},
		{"invalid utf8", "{\"id\":\"\xff\",\"choices\":[]}", false},
		{"index as string", `{"choices":[{"index":"0"}]}`, false},
		{"index decimal", `{"choices":[{"index":0.0}]}`, false},
		{"trailing garbage", `{"choices":[]} x`, false},
		{"not an object", `[1]`, false},
		{"bad number in skipped field", `{"created":01,"choices":[]}`, false},
		{"bad escape in skipped field", `{"x":"\q","choices":[]}`, false},
		{"control char", "{\"id\":\"a\x01\"}", false},
		{"null choice", `{"choices":[null]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c chunk
			if got := parseChunk(tt.data, &c); got != tt.fast {
				t.Fatalf("fast path taken = %v, want %v", got, tt.fast)
			}
			if !tt.fast {
				return
			}
			slow, usage, inband, err := slowChunk(tt.data)
			if err != nil || inband != nil {
				t.Fatalf("slow path: %v %v", err, inband)
			}
			if (usage != nil) != c.hasUsage || (usage != nil && *usage != c.usage) {
				t.Fatalf("usage: fast %v %+v, slow %+v", c.hasUsage, c.usage, usage)
			}
			if render(&c) != render(slow) {
				t.Errorf("fast %s\nslow %s", render(&c), render(slow))
			}
		})
	}
}

// FuzzChunkFastPath: whenever the fast path accepts a chunk, encoding/json
// accepts it too and reads the same thing.
func FuzzChunkFastPath(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi","refusal":null},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]},"finish_reason":"tool_calls"}],"usage":null}`,
		`{"id":"c","model":"m","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":20,"total_tokens":32,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":3,"x":null}}}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"prompt_tokens_details":null,"completion_tokens_details":{}}}`,
		`{"id":"c\u00e9\n","choices":[{"index":-0,"delta":{"content":"\ud83d\ude00"}}],"x":[true,false,null,1.5e+3,{"y":"z"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var c chunk
		if !parseChunk(data, &c) {
			return
		}
		slow, usage, inband, err := slowChunk(data)
		if err != nil || inband != nil {
			t.Fatalf("fast path accepted what encoding/json reads as err=%v inband=%v", err, inband)
		}
		if (usage != nil) != c.hasUsage || (usage != nil && *usage != c.usage) {
			t.Fatalf("usage: fast %v %+v, slow %+v", c.hasUsage, c.usage, usage)
		}
		if render(&c) != render(slow) {
			t.Fatalf("paths disagree:\nfast %s\nslow %s", render(&c), render(slow))
		}
	})
}
