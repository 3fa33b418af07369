package faults_test

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

func TestStall(t *testing.T) {
	t.Run("resume", func(t *testing.T) {
		p := plan(10)
		apply(t, faults.Spec{Kind: faults.KindStall, After: intp(4), For: yamlfile.Duration(20 * time.Second)}, p, env(llm.FormatOpenAI))
		if p.StallAfter != 4 || p.StallClose || p.TokenTimes[3] != 130*time.Millisecond || p.TokenTimes[4] != 20*time.Second+140*time.Millisecond {
			t.Fatalf("after %d times %v", p.StallAfter, p.TokenTimes)
		}
	})
	t.Run("close, default after half", func(t *testing.T) {
		p := plan(10)
		apply(t, faults.Spec{Kind: faults.KindStall, For: yamlfile.Duration(5 * time.Second), Close: true}, p, env(llm.FormatOpenAI))
		if p.StallAfter != 5 || !p.StallClose || p.TokenTimes[5] != 150*time.Millisecond {
			t.Fatalf("after %d times %v", p.StallAfter, p.TokenTimes)
		}
		if p.End() != 140*time.Millisecond+5*time.Second {
			t.Fatalf("end %v", p.End())
		}
	})
}
