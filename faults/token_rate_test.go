package faults_test

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestTokenRate(t *testing.T) {
	p := plan(11)
	apply(t, faults.Spec{Kind: faults.KindTokenRate, Rate: 5}, p, env(llm.FormatOpenAI))
	if p.TokenTimes[0] != p.TTFT || p.TokenTimes[10] != p.TTFT+2*time.Second {
		t.Fatalf("times %v", p.TokenTimes)
	}
	p = plan(11)
	apply(t, faults.Spec{Kind: faults.KindTokenRate, Rate: 5, Jitter: 0.5}, p, env(llm.FormatOpenAI))
	for i := 1; i < len(p.TokenTimes); i++ {
		gap := p.TokenTimes[i] - p.TokenTimes[i-1]
		if gap < 100*time.Millisecond || gap > 300*time.Millisecond {
			t.Fatalf("gap %d = %v outside 200ms±50%%", i, gap)
		}
	}
	if err := (faults.Spec{Kind: faults.KindTokenRate}).Validate(); err == nil || err.(*faults.FieldError).Field != "rate" {
		t.Fatalf("missing rate: %v", err)
	}
}
