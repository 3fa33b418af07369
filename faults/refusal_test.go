package faults_test

import (
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestRefusal(t *testing.T) {
	p := plan(3)
	p.SetToolCalls([]llm.ToolCall{{ID: "c", Name: "f", Arguments: "{}"}})
	apply(t, faults.Spec{Kind: faults.KindRefusal, Text: "No."}, p, env(llm.FormatOpenAI))
	if p.Response.Content != "No." || len(p.Response.ToolCalls) != 0 || len(p.Chunks) != 1 || !p.Corrupted ||
		p.Response.FinishReason != llm.FinishStop || p.Response.Usage.OutputTokens != 1 {
		t.Fatalf("%+v chunks %q", p.Response, p.Chunks)
	}
}
