package gemini_test

import (
	"bytes"
	"fmt"
	"io"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/gemini"
)

// A server reads the model and the stream mode from the path, the rest from
// the body.
func Example() {
	model, stream, err := gemini.ParsePath("/v1beta/models/gemini-2.5-flash:streamGenerateContent")
	if err != nil {
		panic(err)
	}
	req, err := gemini.Codec{}.DecodeRequest([]byte(`{
	  "systemInstruction": {"parts": [{"text": "Be brief."}]},
	  "contents": [
	    {"role": "user", "parts": [{"text": "Weather in Oslo?"}]},
	    {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}]},
	    {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": "rain"}}}]}
	  ],
	  "generationConfig": {"maxOutputTokens": 64}
	}`))
	if err != nil {
		panic(err)
	}
	req.Model, req.Stream = model, stream
	fmt.Println(req.Model, req.Stream, req.MaxTokens)
	for _, m := range req.Messages {
		fmt.Printf("%s %q", m.Role, m.Text())
		for _, tc := range m.ToolCalls {
			fmt.Printf(" call %s %s(%s)", tc.ID, tc.Name, tc.Arguments)
		}
		if m.ToolCallID != "" {
			fmt.Printf(" answers %s", m.ToolCallID)
		}
		fmt.Println()
	}
	// Output:
	// gemini-2.5-flash true 64
	// system "Be brief."
	// user "Weather in Oslo?"
	// assistant "" call call_0 get_weather({"city":"Oslo"})
	// tool "rain" answers call_0
}

// A stream written by the encoder and read back by the decoder.
func ExampleCodec_NewStreamEncoder() {
	var buf bytes.Buffer
	enc := gemini.Codec{}.NewStreamEncoder(&buf)
	for _, ev := range []llm.StreamEvent{
		{Type: llm.EventStart, ID: "r-1", Model: "gemini-2.5-flash"},
		{Type: llm.EventTextDelta, Text: "Rain in Oslo."},
		{Type: llm.EventFinish, FinishReason: llm.FinishStop},
		{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 20, OutputTokens: 4}},
	} {
		if err := enc.Encode(ev); err != nil {
			panic(err)
		}
	}
	if err := enc.Close(); err != nil {
		panic(err)
	}
	fmt.Print(buf.String())

	dec := gemini.Codec{}.NewStreamDecoder(&buf)
	for {
		ev, err := dec.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		switch ev.Type {
		case llm.EventStart:
			fmt.Println("start", ev.ID, ev.Model)
		case llm.EventTextDelta:
			fmt.Printf("text %q\n", ev.Text)
		case llm.EventFinish:
			fmt.Println("finish", ev.FinishReason)
		case llm.EventUsage:
			fmt.Println("usage", ev.Usage.InputTokens, "in,", ev.Usage.OutputTokens, "out")
		}
	}
	// Output:
	// data: {"candidates":[{"content":{"parts":[{"text":"Rain in Oslo."}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"r-1"}
	//
	// data: {"candidates":[{"content":{"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":4,"totalTokenCount":24},"modelVersion":"gemini-2.5-flash","responseId":"r-1"}
	//
	// start r-1 gemini-2.5-flash
	// text "Rain in Oslo."
	// finish stop
	// usage 20 in, 4 out
}
