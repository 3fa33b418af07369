package faults

import "github.com/brownout-dev/brownout/llm"

// EmptyToolArgs makes the model call a tool with empty arguments ("{}"),
// the failure agents meet when a model "forgets" the arguments. Planned
// calls lose their arguments; an answer without calls becomes a call of the
// chosen tool (tool_choice) or the first offered one. It applies only to
// requests that offer tools.
type EmptyToolArgs struct{}

// Matches reports whether the request offers tools.
func (EmptyToolArgs) Matches(e *Env) bool { return e.Request != nil && len(e.Request.Tools) > 0 }

// Apply empties the arguments.
func (EmptyToolArgs) Apply(p *Plan, e *Env) {
	calls := append([]llm.ToolCall(nil), p.Response.ToolCalls...)
	if len(calls) == 0 {
		name := e.Request.Tools[0].Name
		if tc := e.Request.ToolChoice; tc != nil && tc.Mode == llm.ToolChoiceTool && tc.Name != "" {
			name = tc.Name
		}
		calls = []llm.ToolCall{{ID: ToolCallID(e.Format, e.Rand), Name: name}}
		p.Response.Content = ""
	}
	for i := range calls {
		calls[i].Arguments = "{}"
	}
	p.SetToolCalls(calls)
	p.Response.FinishReason = llm.FinishToolCalls
	p.Corrupted = true
}

func buildEmptyToolArgs(*Spec) Fault { return EmptyToolArgs{} }
