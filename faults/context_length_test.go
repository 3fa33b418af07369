package faults_test

import (
	"strings"
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestContextLength(t *testing.T) {
	f, err := faults.New(faults.Spec{Kind: faults.KindContextLength, Window: 1000})
	if err != nil {
		t.Fatal(err)
	}
	e := env(llm.FormatAnthropic)
	e.PromptTokens = 900
	if f.(faults.Matcher).Matches(e) {
		t.Fatal("900 tokens overflow a 1000-token window")
	}
	e.Request.MaxTokens = 200
	if !f.(faults.Matcher).Matches(e) {
		t.Fatal("900 + max_tokens 200 fit a 1000-token window")
	}
	p := plan(3)
	f.Apply(p, e)
	if p.Status != 400 || p.Err.Type != llm.ErrContextLength || !strings.Contains(p.Err.Message, "900 tokens > 1000 maximum") {
		t.Fatalf("%+v", p.Err)
	}
}
