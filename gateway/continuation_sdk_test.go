package gateway_test

import (
	"context"
	"testing"

	asdk "github.com/anthropics/anthropic-sdk-go/v2"
	osdk "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/llm"
)

// TestSDKReadVerifiedContinuations: a stream cut after "The cat sat on" is
// completed by a fall-back that restarts its answer (continued, overlap
// skipped) or replays the request (replayed); both official SDKs read one
// clean answer with the right text, through the OpenAI and the Anthropic
// inbound APIs.
func TestSDKReadVerifiedContinuations(t *testing.T) {
	const want = "The cat sat on the mat."
	restart := func(*llm.Request, int) (int, string) {
		return 200, chunks("fallback-model", []string{"The cat", " sat on", " the", " mat."}, "stop", &llm.Usage{InputTokens: 12, OutputTokens: 9})
	}
	tests := []struct {
		name       string
		caps       string
		routeExtra string
	}{
		{name: "continued", caps: prefillCaps},
		{name: "replayed", caps: "{streaming: true}", routeExtra: "    replay: true"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := pair(t, cutPrimary(t), startUpstream(t, restart), tt.caps, tt.routeExtra, "")

			oc := openaiClient(g)
			st := oc.Chat.Completions.NewStreaming(ctx, osdk.ChatCompletionNewParams{
				Model:         "chat",
				Messages:      []osdk.ChatCompletionMessageParamUnion{osdk.UserMessage("where did the cat sit?")},
				StreamOptions: osdk.ChatCompletionStreamOptionsParam{IncludeUsage: osdk.Bool(true)},
			})
			var acc osdk.ChatCompletionAccumulator
			for st.Next() {
				require.True(t, acc.AddChunk(st.Current()))
			}
			require.NoError(t, st.Err())
			require.Len(t, acc.Choices, 1)
			require.Equal(t, want, acc.Choices[0].Message.Content)
			require.Equal(t, "stop", acc.Choices[0].FinishReason)
			require.Equal(t, "chat", acc.Model, "the model the client asked for (the trailer names the target)")
			require.EqualValues(t, 6, acc.Usage.CompletionTokens, "4 deltas from the primary, 2 forwarded from the fall-back")

			ac := anthropicClient(g)
			ast := ac.Messages.NewStreaming(ctx, asdk.MessageNewParams{
				Model: "chat", MaxTokens: 256,
				Messages: []asdk.MessageParam{asdk.NewUserMessage(asdk.NewTextBlock("where did the cat sit?"))},
			})
			var msg asdk.Message
			for ast.Next() {
				require.NoError(t, msg.Accumulate(ast.Current()))
			}
			require.NoError(t, ast.Err())
			require.Len(t, msg.Content, 1)
			require.Equal(t, want, msg.Content[0].Text)
			require.Equal(t, asdk.StopReasonEndTurn, msg.StopReason)
			require.EqualValues(t, 6, msg.Usage.OutputTokens)
		})
	}
}

// TestSDKContinuationJoin: the conformance cases of a fall-back given the
// partial answer as a prefill (issue 27). It continues mid-word (a clean
// answer), or ignores the prefill and restarts: with another opener, with
// an answer opener, with the same opener and another text. Both official
// SDKs read a clean, right answer or an explicit error, never the partial
// answer with a fresh one glued on. (A restart that repeats everything
// sent and goes on otherwise is one coherent answer: the client gets it.)
func TestSDKContinuationJoin(t *testing.T) {
	cut := []string{"The", " cat", " sa"} // cut mid-word
	tests := []struct {
		name     string
		fallback []string
		want     string // the clean answer; "" for an error
		reason   string // of the stream.continuation event
	}{
		{name: "continues mid-word", fallback: []string{"t on", " the", " mat."}, want: "The cat sat on the mat.", reason: "prefill"},
		{name: "restarts with another opener", fallback: []string{"Every", " cat", " sits", " somewhere."}, reason: "a new word glued onto the cut text"},
		{name: "restarts with an answer opener", fallback: []string{"Sure!", " Cats", " love", " mats."}, reason: "an answer opener"},
		{name: "restarts with an opener and the answer", fallback: []string{"Sure!", " The cat", " sat on", " the mat."}, reason: "the answer's start repeated after a preamble"},
		{name: "restarts with the same opener", fallback: []string{"The dog", " ran", " away."}, reason: "diverges at byte 4"},
		{name: "restarts from its start", fallback: []string{"The cat", " sat on", " the mat."}, want: "The cat sat on the mat.", reason: "restart: 10 bytes of overlap skipped"},
		{name: "restarts from its start, then another text", fallback: []string{"The cat", " sat under", " the table."}, want: "The cat sat under the table.", reason: "restart: 10 bytes of overlap skipped"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			primary := startUpstream(t, func(*llm.Request, int) (int, string) {
				return 200, chunks("primary-model", cut, "", nil)
			})
			fallback := startUpstream(t, func(*llm.Request, int) (int, string) {
				return 200, chunks("fallback-model", tt.fallback, "stop", &llm.Usage{InputTokens: 12, OutputTokens: len(tt.fallback)})
			})
			g := pair(t, primary, fallback, prefillCaps, "", "")

			oc := openaiClient(g)
			st := oc.Chat.Completions.NewStreaming(ctx, osdk.ChatCompletionNewParams{
				Model:    "chat",
				Messages: []osdk.ChatCompletionMessageParamUnion{osdk.UserMessage("where did the cat sit?")},
			})
			var acc osdk.ChatCompletionAccumulator
			for st.Next() {
				acc.AddChunk(st.Current())
			}
			var got string
			if len(acc.Choices) > 0 {
				got = acc.Choices[0].Message.Content
			}
			if tt.want != "" {
				require.NoError(t, st.Err())
				require.Equal(t, tt.want, got)
				require.Equal(t, "stop", acc.Choices[0].FinishReason)
			} else {
				require.Error(t, st.Err(), "an explicit error, not a clean end: %q", got)
				require.Equal(t, "The cat sa", got, "nothing of the restart reaches the client")
			}

			ac := anthropicClient(g)
			ast := ac.Messages.NewStreaming(ctx, asdk.MessageNewParams{
				Model: "chat", MaxTokens: 256,
				Messages: []asdk.MessageParam{asdk.NewUserMessage(asdk.NewTextBlock("where did the cat sit?"))},
			})
			var msg asdk.Message
			for ast.Next() {
				require.NoError(t, msg.Accumulate(ast.Current()))
			}
			got = ""
			if len(msg.Content) > 0 {
				got = msg.Content[0].Text
			}
			if tt.want != "" {
				require.NoError(t, ast.Err())
				require.Equal(t, tt.want, got)
				require.Equal(t, asdk.StopReasonEndTurn, msg.StopReason)
			} else {
				require.Error(t, ast.Err(), "an explicit error, not a clean end: %q", got)
				require.Equal(t, "The cat sa", got)
				require.Empty(t, msg.StopReason, "no stop reason: the answer did not end")
			}

			conts := only(g.log.Events(), events.StreamContinuation)
			require.Len(t, conts, 2, "one continuation per SDK request")
			for _, c := range conts {
				require.Contains(t, c.Reason, tt.reason)
			}
		})
	}
}
