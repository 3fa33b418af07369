package responses_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/responses"
)

// A Responses request reads into the normalized model, which any codec can
// then write for an upstream.
func ExampleCodec_DecodeRequest() {
	req, err := responses.Codec{}.DecodeRequest([]byte(`{"model":"chat","instructions":"Be brief.","input":"Hi","max_output_tokens":64}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range req.Messages {
		fmt.Println(m.Role, m.Text())
	}
	fmt.Println(req.MaxTokens)
	// Output:
	// system Be brief.
	// user Hi
	// 64
}

// Normalized stream events become the Responses API's semantic events.
func ExampleCodec_NewStreamEncoder() {
	var buf bytes.Buffer
	enc := responses.Codec{}.NewStreamEncoder(&buf)
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: "resp_1", Model: "gpt-4o"})
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: "Hello"})
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventFinish, FinishReason: llm.FinishStop})
	_ = enc.Close()
	for _, line := range strings.Split(buf.String(), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			fmt.Println(name)
		}
	}
	// Output:
	// response.created
	// response.in_progress
	// response.output_item.added
	// response.content_part.added
	// response.output_text.delta
	// response.output_text.done
	// response.content_part.done
	// response.output_item.done
	// response.completed
}

// A gateway that keeps responses reads the previous_response_id a request
// continues; DecodeRequest refuses it with the API's own 400.
func ExampleCodec_DecodeContinuation() {
	body := []byte(`{"model":"chat","input":"And then?","previous_response_id":"resp_abc"}`)
	_, st, err := responses.Codec{}.DecodeContinuation(body)
	fmt.Println(st.Previous, err)
	_, err = responses.Codec{}.DecodeRequest(body)
	fmt.Println(err)
	// Output:
	// resp_abc <nil>
	// invalid_request (previous_response_not_found): previous_response_id: Previous response with id 'resp_abc' not found.
}
