package evals

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
)

func TestObserve(t *testing.T) {
	tests := []struct {
		name       string
		resp       *llm.Response
		structured bool
		refusals   []string
		want       Observation
	}{
		{"plain answer", &llm.Response{Content: "Paris.", FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}},
			false, nil, Observation{FinishReason: llm.FinishStop, OutputTokens: 3, InputTokens: 12}},
		{"structured valid", &llm.Response{Content: " {\"a\": [1, 2]}\n", FinishReason: llm.FinishStop},
			true, nil, Observation{FinishReason: llm.FinishStop, Structured: true, JSONValid: true}},
		{"structured wrapped in prose", &llm.Response{Content: "Here it is: {\"a\": 1}", FinishReason: llm.FinishStop},
			true, nil, Observation{FinishReason: llm.FinishStop, Structured: true}},
		{"structured truncated", &llm.Response{Content: "{\"a\": [1, 2", FinishReason: llm.FinishLength, Usage: llm.Usage{OutputTokens: 256}},
			true, nil, Observation{FinishReason: llm.FinishLength, OutputTokens: 256, Structured: true}},
		{"unstructured JSON is not judged", &llm.Response{Content: "not json"},
			false, nil, Observation{}},
		{"refusal phrase", &llm.Response{Content: "I’m sorry, but I can’t help with that."},
			false, nil, Observation{Refusal: true}},
		{"refusal field", &llm.Response{Refusal: "no"}, false, nil, Observation{Refusal: true}},
		{"content filter", &llm.Response{FinishReason: llm.FinishContentFilter}, false, nil,
			Observation{FinishReason: llm.FinishContentFilter, Refusal: true}},
		{"refusal beyond the scanned prefix", &llm.Response{Content: strings.Repeat("x", RefusalScan) + " I cannot help with that"},
			false, nil, Observation{}},
		{"custom refusals", &llm.Response{Content: "Computer says no."}, false, []string{"COMPUTER SAYS NO"},
			Observation{Refusal: true}},
		{"empty refusal list", &llm.Response{Content: "I can't help with that"}, false, []string{}, Observation{}},
		{"tool calls", &llm.Response{FinishReason: llm.FinishToolCalls, ToolCalls: []llm.ToolCall{
			{Name: "a", Arguments: `{"x": 1}`}, {Name: "b", Arguments: ""}, {Name: "c", Arguments: " { } "}, {Name: "d", Arguments: `{"x"`}}},
			false, nil, Observation{FinishReason: llm.FinishToolCalls, ToolCalls: 4, EmptyToolArgs: 3}},
		{"nil response", nil, true, nil, Observation{Structured: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Observe(tt.resp, tt.structured, tt.refusals))
		})
	}
}

func TestAccumulatorAndObserveStream(t *testing.T) {
	var a Accumulator
	events := []llm.StreamEvent{
		{Type: llm.EventStart, ID: "chatcmpl-1", Model: "gpt-4o"},
		{Type: llm.EventTextDelta, Text: "{\"city\":"},
		{Type: llm.EventTextDelta, Text: " \"Paris\"}"},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "call_1", Name: "get_weather"}},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 1, ID: "call_2", Name: "noop"}},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: `{"city":`}},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: ` "Paris"}`}},
		{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls},
	}
	for _, ev := range events {
		a.Add(ev)
	}
	r := a.Response()
	require.Equal(t, "chatcmpl-1", r.ID)
	require.Equal(t, `{"city": "Paris"}`, r.Content)
	require.Equal(t, []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Paris"}`}, {ID: "call_2", Name: "noop"}}, r.ToolCalls)
	require.Equal(t, 2, r.Usage.OutputTokens, "estimated from deltas without usage")
	o := a.Observe(true, nil)
	require.Equal(t, Observation{FinishReason: llm.FinishToolCalls, OutputTokens: 2, Structured: true, JSONValid: true,
		ToolCalls: 2, EmptyToolArgs: 1}, o)

	a.Add(llm.StreamEvent{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 9, OutputTokens: 17}})
	require.Equal(t, 17, a.Observe(true, nil).OutputTokens)
	a.Add(llm.StreamEvent{Type: llm.EventError, Err: &llm.Error{Type: llm.ErrOverloaded}})
	require.Equal(t, llm.ErrOverloaded, a.Err().Type)

	// A cut stream: no finish reason.
	cut := ObserveStream("The answer is", nil, "", llm.Usage{}, 3, false, nil)
	require.Equal(t, Observation{OutputTokens: 3}, cut)
}

func BenchmarkObserve(b *testing.B) {
	cases := []struct {
		name       string
		resp       *llm.Response
		structured bool
	}{
		{"plain_1KB", &llm.Response{Content: strings.Repeat("Paris is the capital of France. ", 32), FinishReason: llm.FinishStop,
			Usage: llm.Usage{InputTokens: 500, OutputTokens: 250}}, false},
		{"structured_2KB", &llm.Response{Content: `{"items": [` + strings.Repeat(`{"name": "widget", "qty": 3, "price": 9.5},`, 45) + `{}]}`,
			FinishReason: llm.FinishStop, Usage: llm.Usage{OutputTokens: 600}}, true},
		{"tool_call", &llm.Response{FinishReason: llm.FinishToolCalls, ToolCalls: []llm.ToolCall{{ID: "c", Name: "get_weather",
			Arguments: `{"city": "Paris", "unit": "c"}`}}}, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Observe(c.resp, c.structured, nil)
			}
		})
	}
}

func TestObservationOf(t *testing.T) {
	o := Observe(&llm.Response{Usage: llm.Usage{InputTokens: 12}}, false, nil)
	o.Of("a:m", "chat", 64, 9)
	require.Equal(t, Observation{Target: "a:m", Route: "chat", MaxTokens: 64, InputTokens: 12}, o)
	o = Observe(&llm.Response{}, false, nil)
	o.Of("a:m", "chat", 0, 9)
	require.Equal(t, 9, o.InputTokens, "no usage: the prompt estimate")
}
