package openai_test

import (
	"fmt"
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

// BenchmarkDecodeChunk decodes one content chunk (an SSE event and its
// JSON) of a stream of chunks with different texts: as a stream comes
// (template: the bytes around the text are the same from chunk to chunk,
// and the decoder reads the text alone), with OpenAI's obfuscation padding
// (a random string per chunk, read too), and with a field that changes in
// every chunk (parser: each chunk is parsed whole).
func BenchmarkDecodeChunk(b *testing.B) {
	const pre = `data: {"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":%d,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f9f4fb6dbf","choices":[{"index":0,"delta":{"content":%q},"logprobs":null,"finish_reason":null}]%s}` + "\n\n"
	words := []string{" the", " quick", " brown", " fox", " jumps", " over\n", " the", " lazy", " dog."}
	const n = 1024
	for _, c := range []struct {
		name      string
		created   func(int) int
		obfuscate bool
	}{
		{"template", func(int) int { return 1741569952 }, false},
		{"obfuscation", func(int) int { return 1741569952 }, true},
		{"parser", func(i int) int { return 1741569952 + i }, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			var sb strings.Builder
			for i := range n {
				obf := ""
				if c.obfuscate {
					obf = fmt.Sprintf(`,"obfuscation":%q`, "kQ7xP2mZ"[:1+i%8])
				}
				fmt.Fprintf(&sb, pre, c.created(i), words[i%len(words)], obf)
			}
			stream := sb.String()
			b.SetBytes(int64(len(stream) / n))
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
					left = n - 1
					b.StartTimer()
				}
				if _, err := d.Next(); err != nil {
					b.Fatal(err)
				}
				left--
			}
		})
	}
}
