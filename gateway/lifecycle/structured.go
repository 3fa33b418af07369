package lifecycle

import (
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

// Structured reports whether a request needs structured output, in both
// engines: its response_format asks for JSON, or its route (nil: unknown)
// is marked structured, which makes every request on it structured, with
// or without response_format. A structured answer that does not parse is
// invalid output: it is not served, and the request fails over.
func Structured(route *policy.Route, rf *llm.ResponseFormat) bool {
	if route != nil && route.Structured {
		return true
	}
	return rf != nil && rf.Type != llm.ResponseText && rf.Type != ""
}
