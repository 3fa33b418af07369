package gemini

import (
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/llm"
)

var errorMessages = map[llm.ErrorType]string{
	llm.ErrRateLimit:      "Resource has been exhausted (e.g. check quota).",
	llm.ErrOverloaded:     "The model is overloaded. Please try again later.",
	llm.ErrServer:         "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
	llm.ErrAuthentication: "API key expired. Please renew the API key.",
	llm.ErrPermission:     "The caller does not have permission",
	llm.ErrTimeout:        "The request timed out. Please try again.",
	llm.ErrContentFilter:  "The prompt was blocked due to safety reasons.",
	llm.ErrInvalidRequest: "Request contains an invalid argument.",
	llm.ErrNotFound:       "models/unknown is not found for API version v1beta, or is not supported for generateContent.",
}

// ErrorText returns Gemini's message for an error type (its code is the
// status name EncodeError writes).
func (Codec) ErrorText(t llm.ErrorType) (string, string) { return "", errorMessages[t] }

// ContextLengthText is Gemini's message for a prompt over the context window.
func (Codec) ContextLengthText(window, prompt int) string {
	return fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", prompt, window)
}

// UnsupportedParamText is Gemini's rejection of an unknown field.
func (Codec) UnsupportedParamText(param string) (string, string) {
	return "", fmt.Sprintf("Invalid JSON payload received. Unknown name %q: Cannot find field.", param)
}

// ModelNotFoundText is Gemini's message for an unknown model.
func (Codec) ModelNotFoundText(model string) string {
	return "models/" + model + " is not found for API version v1beta, or is not supported for generateContent."
}

// RateLimitText is Gemini's 429 message, the same for every limit.
func (Codec) RateLimitText(string, time.Duration) string {
	return "Resource has been exhausted (e.g. check quota)."
}
