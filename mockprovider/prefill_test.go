package mockprovider_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

func text(s string) []llm.Part { return []llm.Part{llm.TextPart(s)} }

// prefillSpec is a provider whose model scripts a tool loop (a call, then
// an answer quoting the result), knows one rule, and takes prefill as p.
func prefillSpec(p mockprovider.Prefill) mockprovider.ProviderSpec {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.Models[0].Prefill = p
	s.Models[0].Steps = []mockprovider.Step{
		{ToolCall: &mockprovider.RuleToolCall{Name: "get_time", Arguments: map[string]any{"city": "Paris"}}},
		{Answer: "Done: it is {{tool_result}} in Paris."},
	}
	return s
}

var timeTool = []llm.Tool{{Name: "get_time", Parameters: []byte(`{"type":"object"}`)}}

// conversations in the states a stream can be cut in, each with the
// answer the model gives it without a prefill.
func prefillConversations() []struct {
	name           string
	msgs           []llm.Message
	tools, weather bool
} {
	user := llm.Message{Role: llm.RoleUser, Content: text("what time is it in Paris?")}
	call := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_time", Arguments: `{"city":"Paris"}`}}}
	result := llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Name: "get_time", Content: text("14:05")}
	weather := llm.Message{Role: llm.RoleUser, Content: text("and the weather?")}
	wcall := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_2", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}
	wresult := llm.Message{Role: llm.RoleTool, ToolCallID: "call_2", Name: "get_weather", Content: text("sunny, 21°C, light wind from the west")}
	return []struct {
		name           string
		msgs           []llm.Message
		tools, weather bool
	}{
		{name: "a first question (filler)", msgs: []llm.Message{{Role: llm.RoleUser, Content: text("tell me a story")}}},
		{name: "a rule's answer", msgs: []llm.Message{{Role: llm.RoleUser, Content: text("what is the capital of France?")}}},
		{name: "a scripted step after a tool result", msgs: []llm.Message{user, call, result}, tools: true},
		{name: "the default answer to a tool result", msgs: []llm.Message{weather, wcall, wresult}},
	}
}

// TestPrefillContinuedInEveryState: cut anywhere (mid-word, after a space,
// after a sentence), a model with prefill: true continues the answer the
// conversation gets: its rest when the prefill is its beginning, and
// always text that joins what was sent (the gateway's join check passes).
func TestPrefillContinuedInEveryState(t *testing.T) {
	for _, conv := range prefillConversations() {
		t.Run(conv.name, func(t *testing.T) {
			req := &llm.Request{Model: "gpt-4o", Messages: conv.msgs}
			if conv.tools {
				req.Tools = timeTool
			}
			full := newModel(t, prefillSpec(mockprovider.PrefillContinue)).Plan(t0, req, mockprovider.Meta{})
			require.Equal(t, 200, full.Status)
			answer := full.Response.Content
			require.NotEmpty(t, answer)
			for _, cut := range []int{3, len(answer) / 3, len(answer) / 2, strings.Index(answer, ". ") + 2} {
				if cut <= 0 || cut >= len(answer) {
					continue
				}
				m := newModel(t, prefillSpec(mockprovider.PrefillContinue))
				sent := answer[:cut]
				r := *req
				r.Messages = append(append([]llm.Message(nil), conv.msgs...), llm.Message{Role: llm.RoleAssistant, Content: text(sent)})
				p := m.Plan(t0, &r, mockprovider.Meta{})
				require.Equal(t, 200, p.Status, "%+v", p.Err)
				require.Empty(t, p.Response.ToolCalls, "a prefill is continued, not answered with the next step's call")
				got := p.Response.Content
				if conv.name != "a first question (filler)" {
					// The same model answers the same conversation: the
					// continuation is its rest.
					require.Equal(t, answer[cut:], got, "cut at %d of %q", cut, answer)
				}
				require.Equal(t, lifecycle.Joins, lifecycle.JudgeJoin(sent, got, r.LastUserText()), "%q | %q", sent, got)
				require.NotContains(t, sent+got, "  ", "no doubled space at the join")
			}
		})
	}
}

// TestPrefillCutOfAnotherModel: a prefill the model would not have
// written itself (another model's filler, cut mid-word) is continued from
// where it stops: the cut word finished, the sentence going on.
func TestPrefillCutOfAnotherModel(t *testing.T) {
	m := newModel(t, prefillSpec(mockprovider.PrefillContinue))
	for _, sent := range []string{"The gateway rou", "The gateway routes each ", "The gateway routes each request.", "Tokens stream steadily. "} {
		req := &llm.Request{Model: "gpt-4o", Messages: []llm.Message{
			{Role: llm.RoleUser, Content: text("tell me a story")},
			{Role: llm.RoleAssistant, Content: text(sent)},
		}}
		p := m.Plan(t0, req, mockprovider.Meta{})
		got := p.Response.Content
		require.Equal(t, lifecycle.Joins, lifecycle.JudgeJoin(sent, got), "%q | %q", sent, got)
		if sent == "The gateway rou" {
			require.True(t, strings.HasPrefix(got, "tes "), "the cut word finished: %q", got)
		}
	}
}

// TestPrefillIgnore: a model with prefill: ignore accepts a prefill and
// answers from scratch, the same answer as without it; the gateway's
// continuation check turns the restart into the answer (a repeated start)
// or an error (another text), never a splice.
func TestPrefillIgnore(t *testing.T) {
	for _, conv := range prefillConversations() {
		t.Run(conv.name, func(t *testing.T) {
			req := &llm.Request{Model: "gpt-4o", Messages: conv.msgs}
			if conv.tools {
				req.Tools = timeTool
			}
			answer := newModel(t, prefillSpec(mockprovider.PrefillIgnore)).Plan(t0, req, mockprovider.Meta{}).Response.Content
			sent := answer[:len(answer)/2]
			r := *req
			r.Messages = append(append([]llm.Message(nil), conv.msgs...), llm.Message{Role: llm.RoleAssistant, Content: text(sent)})
			p := newModel(t, prefillSpec(mockprovider.PrefillIgnore)).Plan(t0, &r, mockprovider.Meta{})
			require.Equal(t, 200, p.Status)
			require.Equal(t, answer, p.Response.Content, "the answer from its start")
			require.False(t, p.Corrupted, "it begins with the prefill: the overlap can be skipped")
		})
	}
	// Another model's cut answer: the fresh answer is another text.
	m := newModel(t, prefillSpec(mockprovider.PrefillIgnore))
	sent := "Latency rises when the provider sheds lo"
	p := m.Plan(t0, &llm.Request{Model: "gpt-4o", Messages: []llm.Message{
		{Role: llm.RoleUser, Content: text("tell me a story")},
		{Role: llm.RoleAssistant, Content: text(sent)},
	}}, mockprovider.Meta{})
	require.True(t, p.Corrupted, "another text: served after the prefill, a splice")
	c, err := lifecycle.NewContinuation(lifecycle.Prefill, sent, nil)
	require.NoError(t, err)
	_, _, diverged := lifecycle.Verify(c, p.Chunks, true)
	require.GreaterOrEqual(t, diverged, 0, "a fresh answer after a cut word diverges: %q", p.Response.Content)
}
