package faults_test

import (
	"encoding/json"
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestMalformedJSONContent(t *testing.T) {
	f, err := faults.New(faults.Spec{Kind: faults.KindMalformedJSONContent})
	if err != nil {
		t.Fatal(err)
	}
	e := env(llm.FormatOpenAI)
	if f.(faults.Matcher).Matches(e) {
		t.Fatal("matches a request without structured output")
	}
	e.Request.ResponseFormat = &llm.ResponseFormat{Type: llm.ResponseJSONObject}
	if !f.(faults.Matcher).Matches(e) {
		t.Fatal("does not match a JSON request")
	}
	p := plan(0)
	p.SetContent(`{"a":{"b":1}}`)
	f.Apply(p, e)
	if json.Valid([]byte(p.Response.Content)) || !p.Corrupted || p.Response.FinishReason != llm.FinishStop {
		t.Fatalf("%q", p.Response.Content)
	}
}
