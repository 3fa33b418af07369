package responses

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/brownout-dev/brownout/llm"
)

var benchRequest = []byte(`{"model":"chat","instructions":"You are a helpful assistant.","input":[` +
	`{"role":"user","content":[{"type":"input_text","text":"` + strings.Repeat("Tell me about brownouts. ", 40) + `"}]},` +
	`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},` +
	`{"type":"function_call_output","call_id":"call_1","output":"sunny"}],` +
	`"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}],"stream":true}`)

func BenchmarkDecodeRequest(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (Codec{}).DecodeRequest(benchRequest); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeStream: a 64-token answer as semantic events.
func BenchmarkEncodeStream(b *testing.B) {
	b.ReportAllocs()
	u := llm.Usage{InputTokens: 300, OutputTokens: 64}
	for b.Loop() {
		enc := Codec{}.NewStreamEncoder(io.Discard)
		_ = enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: "resp_1", Model: "gpt-4o"})
		for range 64 {
			_ = enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: "word "})
		}
		_ = enc.Encode(llm.StreamEvent{Type: llm.EventFinish, FinishReason: llm.FinishStop})
		_ = enc.Encode(llm.StreamEvent{Type: llm.EventUsage, Usage: &u})
		if err := enc.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeStream: the same answer read back.
func BenchmarkDecodeStream(b *testing.B) {
	var buf bytes.Buffer
	enc := Codec{}.NewStreamEncoder(&buf)
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: "resp_1", Model: "gpt-4o"})
	for range 64 {
		_ = enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: "word "})
	}
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventFinish, FinishReason: llm.FinishStop})
	_ = enc.Close()
	data := buf.Bytes()
	b.ReportAllocs()
	for b.Loop() {
		dec := Codec{}.NewStreamDecoder(bytes.NewReader(data))
		for {
			if _, err := dec.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}
