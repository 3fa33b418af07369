package faults

import "strings"

// MalformedJSONContent spoils structured output: the answer to a request
// that asked for JSON still finishes with "stop" but does not parse (its last
// closing brace is replaced by a dangling comma). It applies only to
// structured-output requests.
type MalformedJSONContent struct{}

// Matches reports whether the request asks for JSON.
func (MalformedJSONContent) Matches(e *Env) bool { return e.Structured() }

// Apply breaks the JSON.
func (MalformedJSONContent) Apply(p *Plan, _ *Env) {
	c := strings.TrimRight(p.Response.Content, " \n")
	if i := strings.LastIndexAny(c, "}]"); i >= 0 {
		c = c[:i] + ","
	} else {
		c = `{"answer": ` + c
	}
	p.SetContent(c)
	p.Corrupted = true
}

func buildMalformedJSONContent(*Spec) Fault { return MalformedJSONContent{} }
