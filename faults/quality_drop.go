package faults

import (
	"bytes"
	"encoding/json"
	"strings"
)

// QualityDrop degrades the answer while keeping its shape and length: text
// becomes repetitive filler of the same token count; JSON content keeps its
// keys and structure but loses its values (strings "", numbers 0, booleans
// false, arrays emptied), so it still parses but may no longer satisfy the
// schema's constraints (minLength, minItems, enum).
type QualityDrop struct{}

var degenerate = []string{"as noted above ", "the the ", "it depends ", "in summary "}

// Apply degrades the content.
func (QualityDrop) Apply(p *Plan, e *Env) {
	c := p.Response.Content
	var v any
	if dec := json.NewDecoder(strings.NewReader(c)); len(c) > 0 && (c[0] == '{' || c[0] == '[') && dec.Decode(&v) == nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(blank(v)) == nil {
			p.SetContent(strings.TrimSuffix(buf.String(), "\n"))
			p.Corrupted = true
			return
		}
	}
	phrase := degenerate[e.Rand.IntN(len(degenerate))]
	n := CountTokens(c)
	var b strings.Builder
	for CountTokens(b.String()) < n {
		b.WriteString(phrase)
	}
	text := b.String()
	toks := Tokenize(text, nil)
	p.SetContent(strings.Join(toks[:n], ""))
	p.Corrupted = true
}

func blank(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = blank(e)
		}
		return x
	case []any:
		return []any{}
	case string:
		return ""
	case float64:
		return 0
	case bool:
		return false
	}
	return v
}

func buildQualityDrop(*Spec) Fault { return QualityDrop{} }
