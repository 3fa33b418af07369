package faults_test

import (
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestMissingDone(t *testing.T) {
	p := plan(3)
	apply(t, faults.Spec{Kind: faults.KindMissingDone}, p, env(llm.FormatOpenAI))
	if !p.NoDone || p.Response.FinishReason != llm.FinishStop || p.Corrupted {
		t.Fatalf("%+v", p)
	}
}
