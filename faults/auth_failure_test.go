package faults_test

import (
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestAuthFailure(t *testing.T) {
	for _, f := range []llm.Format{llm.FormatOpenAI, llm.FormatAnthropic, llm.FormatGemini} {
		p := plan(3)
		apply(t, faults.Spec{Kind: faults.KindAuthFailure}, p, env(f))
		if p.Status != 401 || p.Err.Type != llm.ErrAuthentication || p.Err.Message == "" {
			t.Fatalf("%s: %d %+v", f, p.Status, p.Err)
		}
	}
	p := plan(3)
	apply(t, faults.Spec{Kind: faults.KindAuthFailure, Message: "key expired"}, p, env(llm.FormatOpenAI))
	if p.Err.Message != "key expired" || p.Err.Code != "invalid_api_key" {
		t.Fatalf("%+v", p.Err)
	}
}
