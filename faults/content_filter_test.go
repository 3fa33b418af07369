package faults_test

import (
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestContentFilter(t *testing.T) {
	p := plan(10)
	apply(t, faults.Spec{Kind: faults.KindContentFilter, After: intp(3)}, p, env(llm.FormatOpenAI))
	if p.Response.FinishReason != llm.FinishContentFilter || len(p.Chunks) != 3 || p.Corrupted || p.Terminal() {
		t.Fatalf("%+v", p.Response)
	}
	p = plan(10)
	apply(t, faults.Spec{Kind: faults.KindContentFilter, Stage: "prompt"}, p, env(llm.FormatGemini))
	if p.Status != 400 || p.Err.Type != llm.ErrContentFilter {
		t.Fatalf("%d %+v", p.Status, p.Err)
	}
	err := faults.Spec{Kind: faults.KindContentFilter, Stage: "prompt", After: intp(2)}.Validate()
	if fe, ok := err.(*faults.FieldError); !ok || fe.Field != "after" {
		t.Fatalf("after with stage prompt: %v", err)
	}
}
