package mockprovider

import (
	"encoding/json"
	"math/rand/v2"
	"path"
	"strings"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

// fillerWords is the vocabulary of generated answers.
var fillerWords = [...]string{
	"the", "system", "gateway", "routes", "each", "request", "to", "a", "healthy",
	"provider", "and", "falls", "back", "when", "latency", "rises", "tokens", "stream",
	"steadily", "while", "budgets", "limit", "retries", "under", "load", "so", "users",
	"see", "stable", "answers", "with", "cost", "in", "check", "model", "returns",
	"results", "quickly", "for", "every", "query", "it", "receives", "from", "clients",
}

// Filler returns exactly n tokens of seeded filler text: lower-case words
// separated by spaces, sentences ending in ". ". It is ASCII, so n tokens are
// 4n bytes (the last word may be cut).
func Filler(r *rand.Rand, n int) string {
	if n <= 0 {
		return ""
	}
	want := n * faults.BytesPerToken
	var sb strings.Builder
	sb.Grow(want + 16)
	inSentence, sentence := 0, 8
	// One uint64 feeds eight draws of six bits' worth each (bits % k, then
	// bits /= 64).
	var bits uint64
	left := 0
	for sb.Len() < want {
		if left == 0 {
			bits, left = r.Uint64(), 8
		}
		w := fillerWords[bits%uint64(len(fillerWords))]
		bits /= 64
		left--
		if inSentence == 0 {
			sb.WriteByte(w[0] - ('a' - 'A'))
			sb.WriteString(w[1:])
			if left == 0 {
				bits, left = r.Uint64(), 8
			}
			sentence = 8 + int(bits%8)
			bits /= 64
			left--
		} else {
			sb.WriteString(w)
		}
		inSentence++
		if inSentence >= sentence {
			sb.WriteByte('.')
			inSentence = 0
		}
		sb.WriteByte(' ')
	}
	return sb.String()[:want]
}

// match finds the first rule for the request's last user message.
func (m *Model) match(model, text string) *Rule {
	for i := range m.rules {
		r := &m.rules[i]
		if r.Model != "" {
			if ok, _ := path.Match(r.Model, model); !ok {
				continue
			}
		}
		if r.Contains != "" && !strings.Contains(text, r.Contains) {
			continue
		}
		if r.re != nil && !r.re.MatchString(text) {
			continue
		}
		return r
	}
	return nil
}

func findTool(tools []llm.Tool, name string) *llm.Tool {
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	return nil
}

// content decides the answer: tool calls, a canned answer, JSON or filler.
// n is the sampled length for filler answers.
func (m *Model) content(req *llm.Request, model string, n int) (string, []llm.ToolCall) {
	rule := m.match(model, req.LastUserText())
	tc := req.ToolChoice
	toolsAllowed := len(req.Tools) > 0 && (tc == nil || tc.Mode != llm.ToolChoiceNone)
	if toolsAllowed {
		var name string
		var args map[string]any
		switch {
		case tc != nil && tc.Mode == llm.ToolChoiceTool && tc.Name != "":
			name = tc.Name
			if rule != nil && rule.ToolCall != nil && rule.ToolCall.Name == name {
				args = rule.ToolCall.Arguments
			}
		case rule != nil && rule.ToolCall != nil && findTool(req.Tools, rule.ToolCall.Name) != nil:
			name, args = rule.ToolCall.Name, rule.ToolCall.Arguments
		case tc != nil && tc.Mode == llm.ToolChoiceRequired:
			name = req.Tools[0].Name
		}
		if name != "" {
			var argText string
			if args != nil {
				b, _ := json.Marshal(args)
				argText = string(b)
			} else if t := findTool(req.Tools, name); t != nil {
				argText = generateJSON(m.schema(t.Parameters), m.rnd)
			} else {
				argText = "{}"
			}
			return "", []llm.ToolCall{{ID: faults.ToolCallID(m.spec.Format, m.rnd), Name: name, Arguments: argText}}
		}
	}
	structured := req.ResponseFormat != nil && (req.ResponseFormat.Type == llm.ResponseJSONSchema || req.ResponseFormat.Type == llm.ResponseJSONObject)
	if rule != nil && rule.Answer != "" {
		if !structured || json.Valid([]byte(rule.Answer)) {
			return rule.Answer, nil
		}
	}
	if structured {
		if req.ResponseFormat.Type == llm.ResponseJSONSchema && len(req.ResponseFormat.Schema) > 0 {
			return generateJSON(m.schema(req.ResponseFormat.Schema), m.rnd), nil
		}
		b, _ := json.Marshal(map[string]string{"answer": Filler(m.rnd, min(n, 32))})
		return string(b), nil
	}
	return Filler(m.rnd, n), nil
}

// maxSchemas bounds the decoded-schema cache.
const maxSchemas = 64

// schema returns the decoded schema, decoding each distinct schema once
// (callers hold m.mu; decoded schemas are only read).
func (m *Model) schema(raw []byte) map[string]any {
	if root, ok := m.schemas[string(raw)]; ok {
		return root
	}
	root := decodeSchema(raw)
	if len(m.schemas) < maxSchemas {
		if m.schemas == nil {
			m.schemas = make(map[string]map[string]any)
		}
		m.schemas[string(raw)] = root
	}
	return root
}
