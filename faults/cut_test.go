package faults_test

import (
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestCut(t *testing.T) {
	for _, tt := range []struct {
		after *int
		want  int
	}{{intp(3), 3}, {nil, 5}, {intp(0), 0}} {
		p := plan(10)
		apply(t, faults.Spec{Kind: faults.KindCut, After: tt.after}, p, env(llm.FormatOpenAI))
		if p.CutAfter != tt.want || p.Corrupted || p.Response.Usage.OutputTokens != 10 {
			t.Fatalf("after %v: cut %d", tt.after, p.CutAfter)
		}
	}
	if err := (faults.Spec{Kind: faults.KindCut, After: intp(-1)}).Validate(); err == nil || err.(*faults.FieldError).Field != "after" {
		t.Fatalf("negative after: %v", err)
	}
}
