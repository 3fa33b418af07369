package faults_test

import (
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestMalformedChunk(t *testing.T) {
	p := plan(10)
	apply(t, faults.Spec{Kind: faults.KindMalformedChunk}, p, env(llm.FormatOpenAI))
	if p.MalformedAt != 5 {
		t.Fatalf("at %d", p.MalformedAt)
	}
	p = plan(10)
	apply(t, faults.Spec{Kind: faults.KindMalformedChunk, At: intp(2)}, p, env(llm.FormatOpenAI))
	if p.MalformedAt != 2 || p.Terminal() {
		t.Fatalf("at %d", p.MalformedAt)
	}
}
