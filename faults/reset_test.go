package faults_test

import (
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestReset(t *testing.T) {
	p := plan(4)
	apply(t, faults.Spec{Kind: faults.KindReset}, p, env(llm.FormatOpenAI))
	if !p.Reset || !p.Terminal() || p.End() != p.TokenTimes[3] {
		t.Fatalf("reset %v terminal %v", p.Reset, p.Terminal())
	}
	if err := (faults.Spec{Kind: faults.KindReset, Status: 500}).Validate(); err == nil || err.(*faults.FieldError).Field != "status" {
		t.Fatalf("a parameter on a kind without parameters: %v", err)
	}
}
