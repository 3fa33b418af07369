package openai

import (
	"fmt"
	"strconv"
	"time"

	"github.com/brownout-dev/brownout/llm"
)

var errorCodes = map[llm.ErrorType]string{
	llm.ErrRateLimit:      codeRateLimit,
	llm.ErrAuthentication: codeInvalidAPIKey,
	llm.ErrContextLength:  codeContextLength,
	llm.ErrContentFilter:  codeContentFilter,
	llm.ErrNotFound:       codeModelNotFound,
}

var errorMessages = map[llm.ErrorType]string{
	llm.ErrRateLimit:      "Rate limit reached for requests. Please try again later.",
	llm.ErrOverloaded:     "The engine is currently overloaded, please try again later.",
	llm.ErrServer:         "The server had an error while processing your request. Sorry about that!",
	llm.ErrAuthentication: "Incorrect API key provided: sk-proj-****. You can find your API key at https://platform.openai.com/account/api-keys.",
	llm.ErrPermission:     "You are not allowed to sample from this model.",
	llm.ErrTimeout:        "Request timed out.",
	llm.ErrContentFilter:  "The response was filtered due to the prompt triggering content management policy.",
	llm.ErrInvalidRequest: "Invalid request.",
	llm.ErrNotFound:       "The model does not exist or you do not have access to it.",
}

// ErrorText returns OpenAI's code and message for an error type.
func (Codec) ErrorText(t llm.ErrorType) (string, string) {
	return errorCodes[t], errorMessages[t]
}

// ContextLengthText is OpenAI's message for a prompt over the context window.
func (Codec) ContextLengthText(window, prompt int) string {
	return fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", window, prompt)
}

// UnsupportedParamText is OpenAI's rejection of a parameter.
func (Codec) UnsupportedParamText(param string) (string, string) {
	return "unsupported_parameter", fmt.Sprintf("Unsupported parameter: '%s' is not supported with this model.", param)
}

// ModelNotFoundText is OpenAI's message for an unknown model.
func (Codec) ModelNotFoundText(model string) string {
	return "The model `" + model + "` does not exist or you do not have access to it."
}

// RateLimitText is OpenAI's 429 message for a limit.
func (Codec) RateLimitText(limit string, wait time.Duration) string {
	secs := strconv.FormatFloat(wait.Seconds(), 'f', 3, 64)
	switch limit {
	case "rpm":
		return "Rate limit reached for requests per min (RPM). Please try again in " + secs + "s."
	case "tpm":
		return "Rate limit reached for tokens per min (TPM). Please try again in " + secs + "s."
	}
	return "Too many concurrent requests. Please try again in " + secs + "s."
}
