package faults_test

import (
	"encoding/json"
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestRejectParam(t *testing.T) {
	temp := 0.3
	tests := []struct {
		name  string
		param string
		req   func(*llm.Request)
		match bool
	}{
		{"temperature set", "", func(r *llm.Request) { r.Temperature = &temp }, true},
		{"temperature unset", "", func(*llm.Request) {}, false},
		{"tools", "tools", func(r *llm.Request) { r.Tools = []llm.Tool{{Name: "f"}} }, true},
		{"extra field", "reasoning_effort", func(r *llm.Request) { r.Extra = map[string]json.RawMessage{"reasoning_effort": []byte(`"low"`)} }, true},
		{"extra absent", "reasoning_effort", func(*llm.Request) {}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := env(llm.FormatOpenAI)
			tt.req(e.Request)
			f, err := faults.New(faults.Spec{Kind: faults.KindRejectParam, Param: tt.param})
			if err != nil {
				t.Fatal(err)
			}
			if got := f.(faults.Matcher).Matches(e); got != tt.match {
				t.Fatalf("Matches = %v", got)
			}
			p := plan(3)
			f.Apply(p, e)
			want := tt.param
			if want == "" {
				want = "temperature"
			}
			if p.Status != 400 || p.Err.Param != want || p.Err.Code != "unsupported_parameter" {
				t.Fatalf("%d %+v", p.Status, p.Err)
			}
		})
	}
}
