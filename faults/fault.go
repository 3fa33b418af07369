package faults

import (
	"math/rand/v2"

	"github.com/brownout-dev/brownout/llm"
)

// Fault is one fault kind with its parameters. Apply transforms the plan of
// one selected request; it draws randomness only from e.Rand and never reads
// the clock: all timing is plan data that the HTTP shell or the simulator
// executes.
type Fault interface {
	Apply(p *Plan, e *Env)
}

// Env is what a fault may know about the request it transforms.
type Env struct {
	Provider string
	Model    string
	Format   llm.Format
	// Headers are the request headers, keys in lower case.
	Headers map[string]string
	Request *llm.Request
	// PromptTokens is the provider's count of the request's input tokens.
	PromptTokens int
	// Rand is the provider's seeded source.
	Rand *rand.Rand
}

// Header returns the request header k (case-insensitive), or "".
func (e *Env) Header(k string) string {
	if e.Headers == nil {
		return ""
	}
	if v, ok := e.Headers[k]; ok {
		return v
	}
	return e.Headers[lower(k)]
}

// Structured reports whether the request asks for JSON output.
func (e *Env) Structured() bool {
	return e.Request != nil && e.Request.ResponseFormat != nil &&
		(e.Request.ResponseFormat.Type == llm.ResponseJSONObject || e.Request.ResponseFormat.Type == llm.ResponseJSONSchema)
}

func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
