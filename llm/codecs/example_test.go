package codecs_test

import (
	"fmt"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
)

// Look a format up: its codec, where its requests go, how its key is sent,
// and how its provider words an error.
func ExampleLookup() {
	row, err := codecs.Lookup(llm.FormatGemini)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(row.Codec.Format(), row.Path("gemini-2.5-flash", true), row.AuthHeader)
	fmt.Println(row.Codec.ModelNotFoundText("gemini-9"))
	_, err = codecs.Lookup("cohere")
	fmt.Println(err)
	// Output:
	// gemini /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse X-Goog-Api-Key
	// models/gemini-9 is not found for API version v1beta, or is not supported for generateContent.
	// unknown format "cohere": want one of openai, anthropic, gemini, openai_responses
}
