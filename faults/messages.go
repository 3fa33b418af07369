package faults

import (
	"fmt"
	"math/rand/v2"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
)

// Matcher is an optional interface: a fault that only makes sense for some
// requests (reject_param needs the parameter, empty_tool_args needs tools)
// reports it, and Set.Select skips it for the others without counting them.
type Matcher interface {
	Matches(e *Env) bool
}

// ProviderError returns the error a real provider of format f sends for type
// t, with its usual message (msg overrides it) and code, as the format's codec
// words it. status 0 uses the type's conventional status.
func ProviderError(f llm.Format, status int, t llm.ErrorType, msg string) *llm.Error {
	if status == 0 {
		status = llm.StatusFor(t)
	}
	code, text := codecs.Wording(f).ErrorText(t)
	if msg == "" {
		msg = text
	}
	if msg == "" {
		msg = fmt.Sprintf("the server answered %d", status)
	}
	return &llm.Error{Status: status, Type: t, Code: code, Message: msg}
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
