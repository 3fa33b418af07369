package llm_test

import (
	"errors"
	"fmt"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/anthropic"
	"github.com/brownout-dev/brownout/llm/openai"
)

// Translate an OpenAI Chat Completions request into an Anthropic Messages
// request through the normalized model.
func ExampleTranslate() {
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]}`)
	var from openai.Codec
	req, err := from.DecodeRequest(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := llm.Translate(req, from.Format(), anthropic.Codec{})
	fmt.Println(string(out), err)

	// A field only OpenAI knows cannot cross silently.
	req, _ = from.DecodeRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"Hi"}],"logprobs":true}`))
	_, err = llm.Translate(req, from.Format(), anthropic.Codec{})
	var ue *llm.UnsupportedError
	fmt.Println(errors.As(err, &ue), ue.Feature)
	// Output:
	// {"model":"claude-sonnet-4-5","max_tokens":100,"system":"Be brief.","messages":[{"role":"user","content":"Hi"}]} <nil>
	// true extra.logprobs
}
