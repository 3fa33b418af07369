package openai_test

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/openai"
)

func Example() {
	var c openai.Codec
	req, err := c.DecodeRequest([]byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hi"}],"stream":true,"stream_options":{"include_usage":true},"n":1}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(req.Model, req.LastUserText(), req.Stream, req.IncludeUsage, string(req.Extra["n"]))

	// A malformed request is the 400 OpenAI would send, naming the field.
	_, err = c.DecodeRequest([]byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":42}]}`))
	status, body := c.EncodeError(err.(*llm.Error))
	fmt.Println(status, string(body))

	// Decode a stream.
	stream := `data: {"id":"c1","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}

data: {"id":"c1","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hi!"}}]}

data: {"id":"c1","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: [DONE]

`
	d := c.NewStreamDecoder(strings.NewReader(stream))
	for {
		ev, err := d.Next()
		if err == io.EOF {
			break
		}
		switch ev.Type {
		case llm.EventStart:
			fmt.Println("start", ev.ID, ev.Model)
		case llm.EventTextDelta:
			fmt.Printf("text %q\n", ev.Text)
		case llm.EventFinish:
			fmt.Println("finish", ev.FinishReason)
		}
	}
	// Output:
	// gpt-4o-mini Say hi true true 1
	// 400 {"error":{"message":"Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an integer instead.","type":"invalid_request_error","param":"messages[0].content","code":null}}
	// start c1 gpt-4o-mini
	// text "Hi!"
	// finish stop
}

func ExampleCodec_NewStreamEncoder() {
	c := openai.Codec{Now: func() time.Time { return time.Unix(1764417600, 0) }}
	enc := c.NewStreamEncoder(os.Stdout)
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: "chatcmpl-1", Model: "gpt-4o-mini"})
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: "Hi"})
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventFinish, FinishReason: llm.FinishStop})
	_ = enc.Close()
	// Output:
	// data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764417600,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}
	//
	// data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764417600,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}
	//
	// data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764417600,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}
	//
	// data: [DONE]
}
