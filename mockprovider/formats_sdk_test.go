package mockprovider_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	anth "github.com/anthropics/anthropic-sdk-go/v2"
	"google.golang.org/genai"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/mockprovider"
)

// Stream faults as the Anthropic and Gemini SDKs see them.

func anthropicStream(c anth.Client) (anth.Message, int, error) {
	st := c.Messages.NewStreaming(context.Background(), messageParams("hi"))
	var acc anth.Message
	deltas := 0
	for st.Next() {
		ev := st.Current()
		if ev.Type == "content_block_delta" {
			deltas++
		}
		_ = acc.Accumulate(ev)
	}
	return acc, deltas, st.Err()
}

func geminiStream(c *genai.Client) (string, genai.FinishReason, int32, error) {
	var text string
	var finish genai.FinishReason
	var out int32
	for chunk, err := range c.Models.GenerateContentStream(context.Background(), "gemini-2.5-flash", genai.Text("hi"), nil) {
		if err != nil {
			return text, finish, out, err
		}
		text += chunk.Text()
		if len(chunk.Candidates) > 0 && chunk.Candidates[0].FinishReason != "" {
			finish = chunk.Candidates[0].FinishReason
		}
		if chunk.UsageMetadata != nil {
			out = chunk.UsageMetadata.CandidatesTokenCount
		}
	}
	return text, finish, out, nil
}

func TestStreamFaultsAnthropic(t *testing.T) {
	t.Run("truncate", func(t *testing.T) {
		_, c := startAnthropic(t, faults.Spec{Kind: faults.KindTruncate, At: intp(8)})
		msg, deltas, err := anthropicStream(c)
		if err != nil || msg.StopReason != "max_tokens" || deltas != 8 || msg.Usage.OutputTokens != 8 {
			t.Fatalf("err %v, stop %q, %d deltas, usage %d", err, msg.StopReason, deltas, msg.Usage.OutputTokens)
		}
	})
	t.Run("malformed chunk", func(t *testing.T) {
		_, c := startAnthropic(t, faults.Spec{Kind: faults.KindMalformedChunk, At: intp(2)})
		if _, _, err := anthropicStream(c); err == nil {
			t.Fatal("a malformed event streamed cleanly")
		}
	})
	t.Run("stall close", func(t *testing.T) {
		_, c := startAnthropic(t, faults.Spec{Kind: faults.KindStall, After: intp(3), For: 1, Close: true})
		msg, deltas, err := anthropicStream(c)
		if err == nil || deltas != 3 || msg.StopReason != "" {
			t.Fatalf("err %v, %d deltas, stop %q", err, deltas, msg.StopReason)
		}
	})
	t.Run("tool call with empty arguments", func(t *testing.T) {
		_, c := startAnthropic(t, faults.Spec{Kind: faults.KindEmptyToolArgs})
		p := messageParams("weather in Paris?")
		p.Tools = []anth.ToolUnionParam{{OfTool: &anth.ToolParam{Name: "get_weather", InputSchema: anth.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}}
		msg, err := c.Messages.New(context.Background(), p)
		if err != nil || msg.StopReason != "tool_use" || len(msg.Content) != 1 || msg.Content[0].Name != "get_weather" || string(msg.Content[0].Input) != "{}" {
			t.Fatalf("err %v, %+v", err, msg)
		}
	})
}

func TestStreamFaultsGemini(t *testing.T) {
	t.Run("truncate", func(t *testing.T) {
		_, c := startGemini(t, faults.Spec{Kind: faults.KindTruncate, At: intp(8)})
		text, finish, out, err := geminiStream(c)
		if err != nil || finish != genai.FinishReasonMaxTokens || len(text) != 32 || out != 8 {
			t.Fatalf("err %v, finish %q, %d bytes, usage %d", err, finish, len(text), out)
		}
	})
	t.Run("cut", func(t *testing.T) {
		_, c := startGemini(t, faults.Spec{Kind: faults.KindCut, After: intp(5)})
		text, finish, _, err := geminiStream(c)
		if err == nil || finish != "" || len(text) != 20 {
			t.Fatalf("err %v, finish %q, %d bytes", err, finish, len(text))
		}
		// The connection is aborted mid-body: the SDK reports an error.
	})
	t.Run("malformed chunk", func(t *testing.T) {
		_, c := startGemini(t, faults.Spec{Kind: faults.KindMalformedChunk, At: intp(2)})
		if _, _, _, err := geminiStream(c); err == nil {
			t.Fatal("a malformed chunk streamed cleanly")
		}
	})
	t.Run("content filter", func(t *testing.T) {
		_, c := startGemini(t, faults.Spec{Kind: faults.KindContentFilter, After: intp(2)})
		text, finish, _, err := geminiStream(c)
		if err != nil || finish != genai.FinishReasonSafety || len(text) != 8 {
			t.Fatalf("err %v, finish %q, %q", err, finish, text)
		}
	})
}

func TestInBandErrorMidStream(t *testing.T) {
	t.Run("anthropic overloaded_error after 5 tokens", func(t *testing.T) {
		p, c := startAnthropic(t, faults.Spec{Kind: faults.KindHTTPError, Status: 529, After: intp(5)})
		msg, deltas, err := anthropicStream(c)
		if err == nil || !strings.Contains(err.Error(), "overloaded_error") || deltas != 5 || msg.StopReason != "" {
			t.Fatalf("err %v, %d deltas, stop %q", err, deltas, msg.StopReason)
		}
		if j := p.Model().Journal(); j[0].Outcome != mockprovider.OutcomeError || j[0].TokensSent != 5 {
			t.Fatalf("%+v", j[0])
		}
	})
	t.Run("openai error chunk", func(t *testing.T) {
		_, c := startOpenAI(t, faults.Spec{Kind: faults.KindHTTPError, Status: 500, After: intp(3)})
		r := openAIStream(t, c, chatParams("hi"))
		if r.err == nil || r.chunks != 3 || r.finish != "" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("not streamed: the error status", func(t *testing.T) {
		_, c := startAnthropic(t, faults.Spec{Kind: faults.KindHTTPError, Status: 529, After: intp(5)})
		_, err := c.Messages.New(context.Background(), messageParams("hi"))
		var e *anth.Error
		if !errors.As(err, &e) || e.StatusCode != 529 {
			t.Fatalf("got %v", err)
		}
	})
}
