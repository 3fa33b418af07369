package faults_test

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

func TestNoResponse(t *testing.T) {
	p := plan(4)
	apply(t, faults.Spec{Kind: faults.KindNoResponse, For: yamlfile.Duration(30 * time.Second)}, p, env(llm.FormatOpenAI))
	if p.HoldFor != 30*time.Second || !p.Terminal() || p.End() != 30*time.Second {
		t.Fatalf("hold %v end %v", p.HoldFor, p.End())
	}
	if err := (faults.Spec{Kind: faults.KindNoResponse}).Validate(); err == nil || err.(*faults.FieldError).Field != "for" {
		t.Fatalf("missing for: %v", err)
	}
}
