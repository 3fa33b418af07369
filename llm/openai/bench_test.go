package openai_test

import (
	"io"
	"strings"
	"testing"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/openai"
)

// BenchmarkEncodeChunk encodes one content delta as a chunk.
func BenchmarkEncodeChunk(b *testing.B) {
	enc := codec().NewStreamEncoder(io.Discard)
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", Model: "gpt-4o-2024-08-06"})
	ev := llm.StreamEvent{Type: llm.EventTextDelta, Text: " the quick brown fox"}
	b.ReportAllocs()
	for b.Loop() {
		if err := enc.Encode(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeChunk decodes one content chunk (an SSE event and its JSON).
func BenchmarkDecodeChunk(b *testing.B) {
	const chunk = `data: {"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f9f4fb6dbf","choices":[{"index":0,"delta":{"content":" the quick brown fox"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	const n = 1024
	stream := strings.Repeat(chunk, n)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	var d llm.StreamDecoder
	left := 0
	for b.Loop() {
		if left == 0 {
			b.StopTimer()
			d = openai.Codec{}.NewStreamDecoder(strings.NewReader(stream))
			if _, err := d.Next(); err != nil { // EventStart
				b.Fatal(err)
			}
			left = n
			b.StartTimer()
		}
		if _, err := d.Next(); err != nil {
			b.Fatal(err)
		}
		left--
	}
}
