package faults_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

// plan returns a 200 plan of n ASCII tokens ("tok0", "tok1"...) due every
// 10ms from a TTFT of 100ms.
func plan(n int) *faults.Plan {
	p := faults.NewPlan()
	var b strings.Builder
	for i := range n {
		b.WriteString(string(rune('a'+i%26)) + "bcd")
	}
	p.Response = llm.Response{ID: "r1", Model: "gpt-4o", FinishReason: llm.FinishStop}
	p.TTFT = 100 * time.Millisecond
	p.SetContent(b.String())
	for i := range p.TokenTimes {
		p.TokenTimes[i] = p.TTFT + time.Duration(i)*10*time.Millisecond
	}
	return p
}

func env(format llm.Format) *faults.Env {
	return &faults.Env{
		Provider: "p", Model: "gpt-4o", Format: format,
		Request: &llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}}},
		Rand:    rand.New(rand.NewPCG(1, 2)),
	}
}

// apply validates s, builds it and applies it to p.
func apply(t *testing.T, s faults.Spec, p *faults.Plan, e *faults.Env) {
	t.Helper()
	f, err := faults.New(s)
	if err != nil {
		t.Fatalf("New(%+v): %v", s, err)
	}
	f.Apply(p, e)
}

func intp(v int) *int { return &v }
