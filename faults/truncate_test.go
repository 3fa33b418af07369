package faults_test

import (
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		tokens    int
		at        *int
		want      int
		corrupted bool
	}{
		{100, nil, 64, true},
		{64, nil, 32, true},
		{65, nil, 64, true},
		{100, intp(10), 10, true},
		{5, intp(10), 5, false}, // shorter than the cut: untouched
	}
	for _, tt := range tests {
		p := plan(tt.tokens)
		apply(t, faults.Spec{Kind: faults.KindTruncate, At: tt.at}, p, env(llm.FormatOpenAI))
		if len(p.Chunks) != tt.want || len(p.TokenTimes) != tt.want || p.Response.Usage.OutputTokens != tt.want ||
			len(p.Response.Content) != 4*tt.want || p.Corrupted != tt.corrupted {
			t.Fatalf("%d tokens at %v: %d chunks, usage %d, %d bytes, corrupted %v", tt.tokens, tt.at, len(p.Chunks), p.Response.Usage.OutputTokens, len(p.Response.Content), p.Corrupted)
		}
		wantFinish := llm.FinishLength
		if !tt.corrupted {
			wantFinish = llm.FinishStop
		}
		if p.Response.FinishReason != wantFinish {
			t.Fatalf("finish %s", p.Response.FinishReason)
		}
	}
}

func TestTruncateToolCall(t *testing.T) {
	p := plan(2) // 2 text tokens, then a call whose arguments are 6 tokens
	p.SetToolCalls([]llm.ToolCall{{ID: "call_1", Name: "f", Arguments: `{"city":"Paris","n":1}`}})
	apply(t, faults.Spec{Kind: faults.KindTruncate, At: intp(4)}, p, env(llm.FormatOpenAI))
	if p.Response.ToolCalls[0].Arguments != `{"city":` || p.Response.Usage.OutputTokens != 4 || p.ToolStart[0] != 2 {
		t.Fatalf("%+v starts %v", p.Response, p.ToolStart)
	}
}
