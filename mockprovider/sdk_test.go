package mockprovider_test

import (
	"context"
	"testing"

	anth "github.com/anthropics/anthropic-sdk-go/v2"
	oai "github.com/openai/openai-go/v3"
	"google.golang.org/genai"
)

func TestSDKHappyPath(t *testing.T) {
	ctx := context.Background()
	t.Run("openai", func(t *testing.T) {
		_, c := startOpenAI(t)
		resp, err := c.Chat.Completions.New(ctx, chatParams("What is the capital of France?"))
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != "The capital of France is Paris." {
			t.Fatalf("content %q", got)
		}
		st := c.Chat.Completions.NewStreaming(ctx, chatParams("tell me a story"))
		var acc oai.ChatCompletionAccumulator
		for st.Next() {
			acc.AddChunk(st.Current())
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
		if acc.Choices[0].FinishReason != "stop" || len(acc.Choices[0].Message.Content) != 160 {
			t.Fatalf("stream: finish %q, %d bytes", acc.Choices[0].FinishReason, len(acc.Choices[0].Message.Content))
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		_, c := startAnthropic(t)
		msg, err := c.Messages.New(ctx, messageParams("What is the capital of France?"))
		if err != nil {
			t.Fatal(err)
		}
		if msg.Content[0].Text != "The capital of France is Paris." {
			t.Fatalf("content %q", msg.Content[0].Text)
		}
		st := c.Messages.NewStreaming(ctx, messageParams("tell me a story"))
		var acc anth.Message
		for st.Next() {
			if err := acc.Accumulate(st.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
		if acc.StopReason != "end_turn" || acc.Usage.OutputTokens != 40 {
			t.Fatalf("stream: stop %q, usage %+v", acc.StopReason, acc.Usage)
		}
	})
	t.Run("gemini", func(t *testing.T) {
		_, c := startGemini(t)
		resp, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("What is the capital of France?"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text() != "The capital of France is Paris." {
			t.Fatalf("content %q", resp.Text())
		}
		n := 0
		var text string
		for chunk, err := range c.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("tell me a story"), nil) {
			if err != nil {
				t.Fatal(err)
			}
			text += chunk.Text()
			n++
		}
		if len(text) != 160 {
			t.Fatalf("stream: %d chunks, %d bytes", n, len(text))
		}
	})
}
