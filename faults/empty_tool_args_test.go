package faults_test

import (
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestEmptyToolArgs(t *testing.T) {
	e := env(llm.FormatAnthropic)
	f, _ := faults.New(faults.Spec{Kind: faults.KindEmptyToolArgs})
	if f.(faults.Matcher).Matches(e) {
		t.Fatal("matches a request without tools")
	}
	e.Request.Tools = []llm.Tool{{Name: "search"}, {Name: "get_weather"}}
	e.Request.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "get_weather"}
	p := plan(5) // a text answer becomes a call
	f.Apply(p, e)
	calls := p.Response.ToolCalls
	if len(calls) != 1 || calls[0].Name != "get_weather" || calls[0].Arguments != "{}" || p.Response.Content != "" ||
		p.Response.FinishReason != llm.FinishToolCalls || len(calls[0].ID) != len("toolu_01")+22 {
		t.Fatalf("%+v", p.Response)
	}
	p = plan(0)
	p.SetToolCalls([]llm.ToolCall{{ID: "a", Name: "search", Arguments: `{"q":"x"}`}, {ID: "b", Name: "get_weather", Arguments: `{"city":"y"}`}})
	f.Apply(p, e)
	if p.Response.ToolCalls[0].Arguments != "{}" || p.Response.ToolCalls[1].Arguments != "{}" || len(p.Chunks) != 2 {
		t.Fatalf("%+v %q", p.Response.ToolCalls, p.Chunks)
	}
}
