package faults_test

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestTTFT(t *testing.T) {
	tests := []struct {
		mode      string
		wantFirst time.Duration
	}{
		{"", 3100 * time.Millisecond},
		{"add", 3100 * time.Millisecond},
		{"set", 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run("mode="+tt.mode, func(t *testing.T) {
			p := plan(3)
			d := faults.Fixed(3 * time.Second)
			apply(t, faults.Spec{Kind: faults.KindTTFT, Delay: &d, Mode: tt.mode}, p, env(llm.FormatOpenAI))
			if p.TTFT != tt.wantFirst || p.TokenTimes[0] != tt.wantFirst || p.TokenTimes[2]-p.TokenTimes[0] != 20*time.Millisecond {
				t.Fatalf("ttft %v times %v", p.TTFT, p.TokenTimes)
			}
		})
	}
	d := faults.Fixed(time.Second)
	if err := (faults.Spec{Kind: faults.KindTTFT, Delay: &d, Mode: "mul"}).Validate(); err == nil || err.(*faults.FieldError).Field != "mode" {
		t.Fatalf("bad mode: %v", err)
	}
}

func TestTTFTDistributionIsSeeded(t *testing.T) {
	d := faults.Latency{Median: 1000000000, P99: 4000000000}
	draw := func() []time.Duration {
		e := env(llm.FormatOpenAI)
		var out []time.Duration
		for range 5 {
			p := plan(2)
			apply(t, faults.Spec{Kind: faults.KindTTFT, Delay: &d, Mode: "set"}, p, e)
			out = append(out, p.TTFT)
		}
		return out
	}
	a, b := draw(), draw()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different draws: %v vs %v", a, b)
		}
	}
	if a[0] == a[1] {
		t.Fatalf("lognormal draws are constant: %v", a)
	}
}
