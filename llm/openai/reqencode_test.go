package openai

import (
	"math"
	"testing"
)

func TestRequestEncodeFastPath(t *testing.T) {
	temp, topP, tiny, seed := 0.7, 1.0, 1e-9, int64(-42)
	tests := []struct {
		name string
		w    wireRequest
		fast bool
	}{
		{"chat", wireRequest{Model: "gpt-4o", Messages: []wireMessage{{Role: "system", Content: "be <terse> & \u2028"}, {Role: "user", Name: "ann", Content: "hi \"there\"\n"}},
			Stream: true, StreamOptions: &wireStreamOptions{IncludeUsage: true}}, true},
		{"parameters", wireRequest{Model: "m", Messages: []wireMessage{{Role: "assistant", Content: "", ToolCalls: []wireToolCall{{ID: "c1", Type: "function", Function: wireFunction{Name: "f", Arguments: `{"a":1}`}}}},
			{Role: "tool", ToolCallID: "c1", Content: "42"}}, MaxCompletionTokens: 100, Temperature: &temp, TopP: &topP, Seed: &seed, Stop: []string{"a", "b"}, User: "u"}, true},
		{"no content", wireRequest{Model: "m", Messages: []wireMessage{{Role: "assistant", ToolCalls: []wireToolCall{{ID: "c1"}}}}}, true},
		{"tiny float", wireRequest{Model: "m", Messages: []wireMessage{}, Temperature: &tiny}, false},
		{"parts", wireRequest{Model: "m", Messages: []wireMessage{{Role: "user", Content: []wirePart{{Type: "text"}}}}}, false},
		{"tools", wireRequest{Model: "m", Tools: []wireTool{{Type: "function"}}}, false},
		{"metadata", wireRequest{Model: "m", Metadata: map[string]string{"a": "b"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := appendRequest(nil, &tt.w)
			if ok != tt.fast {
				t.Fatalf("fast path taken = %v, want %v", ok, tt.fast)
			}
			if !ok {
				return
			}
			want, err := marshal(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("fast %s\njson %s", got, want)
			}
		})
	}
}

// FuzzRequestEncodeFastPath: whenever the fast encoder writes a request,
// it writes the bytes encoding/json does.
func FuzzRequestEncodeFastPath(f *testing.F) {
	f.Add("gpt-4o", "system", "be terse", "", "hi <b>\u2028", 0.7, 100, int64(7), true, "stop")
	f.Add("m\xff", "user", "\x00\x1f\"\\", "n", "", 1e-7, -1, int64(-1), false, "")
	f.Fuzz(func(t *testing.T, model, role, content, name, content2 string, temp float64, maxTok int, seed int64, stream bool, stop string) {
		w := wireRequest{Model: model, MaxCompletionTokens: maxTok, Stream: stream, User: name}
		w.Messages = []wireMessage{{Role: role, Name: name, Content: content}, {Role: "assistant", Content: content2,
			ToolCalls: []wireToolCall{{ID: name, Type: "function", Function: wireFunction{Name: role, Arguments: content2}}}, ToolCallID: stop}}
		if !math.IsNaN(temp) {
			w.Temperature, w.TopP = &temp, &temp
		}
		if seed != 0 {
			w.Seed = &seed
		}
		if stop != "" {
			w.Stop = []string{stop, content}
			w.StreamOptions = &wireStreamOptions{IncludeUsage: stream}
		}
		got, ok := appendRequest(nil, &w)
		if !ok {
			return
		}
		want, err := marshal(w)
		if err != nil {
			t.Fatalf("fast path wrote what encoding/json rejects: %v", err)
		}
		if string(got) != string(want) {
			t.Fatalf("encodings differ:\nfast %s\njson %s", got, want)
		}
	})
}
