package faults

import (
	"fmt"
	"math/rand/v2"

	"github.com/brownout-dev/brownout/llm"
)

// Matcher is an optional interface: a fault that only makes sense for some
// requests (reject_param needs the parameter, empty_tool_args needs tools)
// reports it, and Set.Select skips it for the others without counting them.
type Matcher interface {
	Matches(e *Env) bool
}

// ProviderError returns the error a real provider of format f sends for type
// t, with its usual message (msg overrides it) and code. status 0 uses the
// type's conventional status.
func ProviderError(f llm.Format, status int, t llm.ErrorType, msg string) *llm.Error {
	if status == 0 {
		status = llm.StatusFor(t)
	}
	e := &llm.Error{Status: status, Type: t, Message: msg}
	switch f {
	case llm.FormatAnthropic:
		if e.Message == "" {
			e.Message = anthropicMessages[t]
		}
	case llm.FormatGemini:
		if e.Message == "" {
			e.Message = geminiMessages[t]
		}
	default:
		e.Code = openAICodes[t]
		if e.Message == "" {
			e.Message = openAIMessages[t]
		}
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("the server answered %d", status)
	}
	return e
}

var openAICodes = map[llm.ErrorType]string{
	llm.ErrRateLimit:      "rate_limit_exceeded",
	llm.ErrAuthentication: "invalid_api_key",
	llm.ErrContextLength:  "context_length_exceeded",
	llm.ErrContentFilter:  "content_filter",
	llm.ErrNotFound:       "model_not_found",
}

var openAIMessages = map[llm.ErrorType]string{
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

var anthropicMessages = map[llm.ErrorType]string{
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

var geminiMessages = map[llm.ErrorType]string{
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

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// ToolCallID returns a tool-call id shaped like format f's ("call_…" for
// OpenAI, "toolu_01…" for Anthropic, "call_…" for Gemini, which has none on
// the wire), drawn from r.
func ToolCallID(f llm.Format, r *rand.Rand) string {
	prefix, n := "call_", 24
	if f == llm.FormatAnthropic {
		prefix, n = "toolu_01", 22
	}
	b := make([]byte, len(prefix)+n)
	copy(b, prefix)
	for i := len(prefix); i < len(b); i++ {
		b[i] = idAlphabet[r.IntN(len(idAlphabet))]
	}
	return string(b)
}
