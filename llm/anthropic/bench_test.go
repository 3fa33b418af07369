package anthropic_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/brownout-dev/brownout/llm"
)

// BenchmarkEncodeChunk measures writing one content_block_delta
// (text_delta) event.
func BenchmarkEncodeChunk(b *testing.B) {
	enc := codec.NewStreamEncoder(io.Discard)
	if err := enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: "msg_1", Model: "claude-sonnet-4-5"}); err != nil {
		b.Fatal(err)
	}
	ev := llm.StreamEvent{Type: llm.EventTextDelta, Text: "Hello, world! This is a \"typical\" chunk.\n"}
	b.ReportAllocs()
	for b.Loop() {
		if err := enc.Encode(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeChunk measures reading one content_block_delta
// (text_delta) event, SSE framing included.
func BenchmarkDecodeChunk(b *testing.B) {
	const head = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	const chunk = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello, world! This is a \\\"typical\\\" chunk.\\n\"}}\n\n"
	const n = 4096
	input := []byte(head + strings.Repeat(chunk, n))
	r := bytes.NewReader(input)
	var dec llm.StreamDecoder
	i := n
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		if i == n {
			b.StopTimer()
			r.Reset(input)
			dec = codec.NewStreamDecoder(r)
			if ev, err := dec.Next(); err != nil || ev.Type != llm.EventStart {
				b.Fatal(ev, err)
			}
			i = 0
			b.StartTimer()
		}
		ev, err := dec.Next()
		if err != nil || ev.Type != llm.EventTextDelta {
			b.Fatal(ev, err)
		}
		i++
	}
}
