package gemini_test

import (
	"io"
	"testing"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/gemini"
)

// A typical streamed chunk: one text delta of a few tokens, as the API sends
// it (usage in every chunk).
const benchChunk = `data: {"candidates": [{"content": {"parts": [{"text": " the breaker opens after five consecutive failures"}],"role": "model"},"index": 0}],` +
	`"usageMetadata": {"promptTokenCount": 812,"candidatesTokenCount": 96,"totalTokenCount": 908},"modelVersion": "gemini-2.5-flash","responseId": "k3xCaNbEB4Ws1MkPnsTOsQ4"}` + "\r\n\r\n"

// BenchmarkEncodeChunk writes one text-delta chunk per iteration.
func BenchmarkEncodeChunk(b *testing.B) {
	enc := gemini.Codec{}.NewStreamEncoder(io.Discard)
	if err := enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: "k3xCaNbEB4Ws1MkPnsTOsQ4", Model: "gemini-2.5-flash"}); err != nil {
		b.Fatal(err)
	}
	ev := llm.StreamEvent{Type: llm.EventTextDelta, Text: " the breaker opens after five consecutive failures"}
	b.ReportAllocs()
	for b.Loop() {
		if err := enc.Encode(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// repeat is an endless stream of the same chunk.
type repeat struct {
	chunk string
	off   int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.chunk[r.off:])
		n += c
		r.off = (r.off + c) % len(r.chunk)
	}
	return n, nil
}

// BenchmarkDecodeChunk reads one chunk (SSE framing and JSON) per iteration.
func BenchmarkDecodeChunk(b *testing.B) {
	dec := gemini.Codec{}.NewStreamDecoder(&repeat{chunk: benchChunk})
	if ev, err := dec.Next(); err != nil || ev.Type != llm.EventStart {
		b.Fatal(ev, err)
	}
	if _, err := dec.Next(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchChunk)))
	b.ReportAllocs()
	for b.Loop() {
		ev, err := dec.Next()
		if err != nil || ev.Type != llm.EventTextDelta {
			b.Fatal(ev, err)
		}
	}
}

func BenchmarkDecodeRequest(b *testing.B) {
	body := []byte(`{"systemInstruction":{"parts":[{"text":"You are terse."}]},"contents":[{"role":"user","parts":[{"text":"Weather in Lisbon?"}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Lisbon"}}}]},{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":21}}}]}],` +
		`"tools":[{"functionDeclarations":[{"name":"get_weather","parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}}}}]}],"generationConfig":{"maxOutputTokens":256,"temperature":0.2}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (gemini.Codec{}).DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}
