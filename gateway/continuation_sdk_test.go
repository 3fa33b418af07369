package gateway_test

import (
	"context"
	"testing"

	asdk "github.com/anthropics/anthropic-sdk-go/v2"
	osdk "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/require"

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
