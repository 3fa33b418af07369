package anthropic

import (
	"fmt"
	"strconv"
	"time"

	"github.com/brownout-dev/brownout/llm"
)

var errorMessages = map[llm.ErrorType]string{
	llm.ErrRateLimit:      "Number of request tokens has exceeded your per-minute rate limit.",
	llm.ErrOverloaded:     "Overloaded",
	llm.ErrServer:         "Internal server error",
	llm.ErrAuthentication: "invalid x-api-key",
	llm.ErrPermission:     "Your API key does not have permission to use the specified resource.",
	llm.ErrTimeout:        "Request timed out.",
	llm.ErrContentFilter:  "Output blocked by content filtering policy",
	llm.ErrInvalidRequest: "Invalid request.",
	llm.ErrNotFound:       "model not found",
}

// ErrorText returns Anthropic's message for an error type (Anthropic sends
// no code).
func (Codec) ErrorText(t llm.ErrorType) (string, string) { return "", errorMessages[t] }

// ContextLengthText is Anthropic's message for a prompt over the context
// window.
func (Codec) ContextLengthText(window, prompt int) string {
	return fmt.Sprintf("prompt is too long: %d tokens > %d maximum", prompt, window)
}

// UnsupportedParamText is Anthropic's rejection of a parameter.
func (Codec) UnsupportedParamText(param string) (string, string) {
	return "", param + ": Extra inputs are not permitted"
}

// ModelNotFoundText is Anthropic's message for an unknown model.
func (Codec) ModelNotFoundText(model string) string { return "model: " + model }

// RateLimitText is Anthropic's 429 message for a limit.
func (Codec) RateLimitText(limit string, wait time.Duration) string {
	secs := strconv.FormatFloat(wait.Seconds(), 'f', 3, 64)
	switch limit {
	case "rpm":
		return "This request would exceed your organization's rate limit of requests per minute. Please retry after " + secs + "s."
	case "tpm":
		return "This request would exceed your organization's rate limit of input tokens per minute. Please retry after " + secs + "s."
	}
	return "Too many concurrent requests. Please try again in " + secs + "s."
}
