package faults_test

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

func TestSlowHeaders(t *testing.T) {
	p := plan(3)
	d := faults.Fixed(2 * time.Second)
	apply(t, faults.Spec{Kind: faults.KindSlowHeaders, Delay: &d}, p, env(llm.FormatOpenAI))
	if p.HeaderDelay != 2*time.Second || p.TTFT != 2100*time.Millisecond || p.TokenTimes[2] != 2120*time.Millisecond {
		t.Fatalf("header %v ttft %v times %v", p.HeaderDelay, p.TTFT, p.TokenTimes)
	}
	if p.Terminal() {
		t.Fatal("slow headers made the plan terminal")
	}
	bad := faults.Latency{Dist: faults.DistUniform, Min: yamlfile.Duration(time.Second)}
	err := faults.Spec{Kind: faults.KindSlowHeaders, Delay: &bad}.Validate()
	if fe, ok := err.(*faults.FieldError); !ok || fe.Field != "delay.max" {
		t.Fatalf("got %v", err)
	}
}
