package openai

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRequestFastPath(t *testing.T) {
	tests := []struct {
		name string
		body string
		fast bool
	}{
		{"chat", `{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Hi","name":"ann"},{"role":"assistant","content":"Hello"},{"role":"developer","content":"be brief"}]}`, true},
		{"parameters", `{"model":"m","messages":[{"role":"user","content":"a\n\u00e9"}],"max_tokens":10,"max_completion_tokens":20,"temperature":0.7,"top_p":1,"seed":-3,"user":"u1","stream":false}`, true},
		{"max_completion_tokens first", `{"max_completion_tokens":20,"max_tokens":10,"model":"m","messages":[{"role":"user","content":"a"}]}`, true},
		{"nulls", `{"model":"m","messages":[{"role":"user","content":"a","name":null}],"temperature":null,"seed":null,"stream":null,"stream_options":null,"max_tokens":null,"user":null}`, true},
		{"empty stream_options", ` {"model":"m","stream":true,"stream_options":{},"messages":[{"role":"user","content":""}]} `, true},
		{"tools", `{"model":"m","messages":[{"role":"user","content":"a"}],"tools":[]}`, false},
		{"unknown field", `{"model":"m","messages":[{"role":"user","content":"a"}],"foo":1}`, false},
		{"parts", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}`, false},
		{"tool role", `{"model":"m","messages":[{"role":"tool","tool_call_id":"c","content":"a"}]}`, false},
		{"assistant tool calls", `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[]}]}`, false},
		{"temperature too high", `{"model":"m","messages":[{"role":"user","content":"a"}],"temperature":3}`, false},
		{"zero max_tokens", `{"model":"m","messages":[{"role":"user","content":"a"}],"max_tokens":0}`, false},
		{"stream_options without stream", `{"model":"m","messages":[{"role":"user","content":"a"}],"stream_options":{"include_usage":true}}`, false},
		{"no messages", `{"model":"m","messages":[]}`, false},
		{"no model", `{"messages":[{"role":"user","content":"a"}]}`, false},
		{"duplicate key", `{"model":"a","model":"b","messages":[{"role":"user","content":"a"}]}`, false},
		{"bad role", `{"model":"m","messages":[{"role":"robot","content":"a"}]}`, false},
		{"trailing garbage", `{"model":"m","messages":[{"role":"user","content":"a"}]}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fast, ok := parseRequest([]byte(tt.body))
			if ok != tt.fast {
				t.Fatalf("fast path taken = %v, want %v", ok, tt.fast)
			}
			if !ok {
				return
			}
			slow, err := Codec{}.decodeRequestJSON([]byte(tt.body))
			if err != nil {
				t.Fatalf("general path: %v", err)
			}
			if diff := cmp.Diff(slow, fast); diff != "" {
				t.Errorf("paths disagree (-general +fast):\n%s", diff)
			}
		})
	}
}

// FuzzRequestFastPath: whenever the fast path accepts a request, the general
// path accepts it too and reads the same request.
func FuzzRequestFastPath(f *testing.F) {
	for _, s := range []string{
		`{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Hi","name":"ann"},{"role":"assistant","content":"Hello"}]}`,
		`{"model":"m","messages":[{"role":"developer","content":"a\n\u00e9"}],"max_tokens":10,"max_completion_tokens":20,"temperature":0.7,"top_p":1e-1,"seed":-0,"user":"u1","stream":false}`,
		`{"model":"m","messages":[{"role":"user","content":"a","name":null}],"temperature":null,"stream_options":null}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		fast, ok := parseRequest([]byte(body))
		if !ok {
			return
		}
		slow, err := Codec{}.decodeRequestJSON([]byte(body))
		if err != nil {
			t.Fatalf("fast path accepted what the general path rejects: %v", err)
		}
		if diff := cmp.Diff(slow, fast); diff != "" {
			t.Fatalf("paths disagree (-general +fast):\n%s", diff)
		}
	})
}
