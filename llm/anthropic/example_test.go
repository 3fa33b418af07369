package anthropic_test

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/anthropic"
)

// A request from an Anthropic client, decoded into the normalized model: the
// system prompt becomes the first message and the tool result its own
// message, named after the call it answers.
func ExampleCodec_DecodeRequest() {
	body := `{
	  "model": "claude-sonnet-4-5",
	  "max_tokens": 256,
	  "system": "Be brief.",
	  "messages": [
	    {"role": "user", "content": "Weather in Paris?"},
	    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
	    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"}]}
	  ]
	}`
	req, err := anthropic.Codec{}.DecodeRequest([]byte(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range req.Messages {
		fmt.Printf("%-9s %q calls=%v name=%q\n", m.Role, m.Text(), m.ToolCalls, m.Name)
	}

	_, err = anthropic.Codec{}.DecodeRequest([]byte(`{"model": "m", "messages": []}`))
	fmt.Println(err)
	// Output:
	// system    "Be brief." calls=[] name=""
	// user      "Weather in Paris?" calls=[] name=""
	// assistant "" calls=[{toolu_1 get_weather {"city":"Paris"}}] name=""
	// tool      "18C" calls=[] name="get_weather"
	// invalid_request: max_tokens: field required
}

// Streaming: normalized events out as Anthropic server-sent events, and back.
func ExampleCodec_NewStreamEncoder() {
	var sb strings.Builder
	enc := anthropic.Codec{}.NewStreamEncoder(&sb)
	for _, ev := range []llm.StreamEvent{
		{Type: llm.EventStart, ID: "msg_1", Model: "claude-sonnet-4-5"},
		{Type: llm.EventTextDelta, Text: "Hi!"},
		{Type: llm.EventFinish, FinishReason: llm.FinishStop},
		{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 12, OutputTokens: 2, CachedInputTokens: 10}},
	} {
		if err := enc.Encode(ev); err != nil {
			fmt.Println(err)
		}
	}
	_ = enc.Close()
	fmt.Print(sb.String()[strings.Index(sb.String(), "event: message_delta"):])

	dec := anthropic.Codec{}.NewStreamDecoder(strings.NewReader(sb.String()))
	for {
		ev, err := dec.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
		fmt.Printf("%s %q %q\n", ev.Type, ev.Text, ev.FinishReason)
	}
	// Output:
	// event: message_delta
	// data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":2,"cache_creation_input_tokens":0,"cache_read_input_tokens":10,"output_tokens":2}}
	//
	// event: message_stop
	// data: {"type":"message_stop"}
	//
	// start "" ""
	// text_delta "Hi!" ""
	// finish "" "stop"
	// usage "" ""
}

// A 529 overloaded error, as the API sends it and as a client reads it.
func ExampleCodec_EncodeError() {
	status, body := anthropic.Codec{}.EncodeError(&llm.Error{Type: llm.ErrOverloaded, Message: "Overloaded"})
	fmt.Println(status, string(body))
	// Output:
	// 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}
}
