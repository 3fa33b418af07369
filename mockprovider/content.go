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

// corpusTokens is the length of a model's filler corpus in tokens (64 KiB
// of text).
const corpusTokens = 1 << 14

// corpus is a model's filler text, generated once from one seed: a filler
// answer is a window of it that begins with a sentence, and its chunks are
// the same window of the corpus's tokens, so planning a filler answer draws
// one number and copies nothing. Every sentence begins on a token boundary
// (the last word of each sentence is picked to make it so), which is what
// lets a window's tokens be the corpus's tokens. Nothing writes the text,
// tokens or starts after newCorpus (plans treat Chunks as read-only, see
// faults.Plan).
type corpus struct {
	text   string
	tokens []string // faults.Tokenize(text): BytesPerToken bytes each
	starts []int32  // token indices where a sentence begins, ascending
	// fits[n] caches the number of starts a window of n tokens can begin
	// at (0: not computed yet; it is at least half the starts).
	fits []int32
}

// wordsByResidue groups fillerWords by their length modulo BytesPerToken.
var wordsByResidue = func() (out [faults.BytesPerToken][]string) {
	for _, w := range fillerWords {
		out[len(w)%faults.BytesPerToken] = append(out[len(w)%faults.BytesPerToken], w)
	}
	return out
}()

// newCorpus generates about tokens tokens of filler from seed: sentences of
// 8 to 15 words, capitalized, ending in ". ", each starting on a token
// boundary.
func newCorpus(seed uint64, tokens int) *corpus {
	src := rand.NewPCG(seed, seed^0x6a09e667f3bcc908)
	// pick draws an index below n from 16 bits of a draw, four per draw.
	var bits uint64
	left := 0
	pick := func(n int) int {
		if left == 0 {
			bits, left = src.Uint64(), 4
		}
		v := int((bits & 0xffff) * uint64(n) >> 16)
		bits >>= 16
		left--
		return v
	}
	want := tokens * faults.BytesPerToken
	b := make([]byte, 0, want+128)
	starts := make([]int32, 0, want/48)
	for len(b) < want {
		starts = append(starts, int32(len(b)/faults.BytesPerToken))
		words := 8 + pick(8)
		for i := range words {
			var w string
			if i < words-1 {
				w = fillerWords[pick(len(fillerWords))]
			} else {
				// After w and ". " the next sentence starts on a token
				// boundary.
				need := (2*faults.BytesPerToken - (len(b)+2)%faults.BytesPerToken) % faults.BytesPerToken
				set := wordsByResidue[need]
				w = set[pick(len(set))]
			}
			if i == 0 {
				b = append(b, w[0]-('a'-'A'))
				b = append(b, w[1:]...)
			} else {
				b = append(b, w...)
			}
			if i == words-1 {
				b = append(b, '.')
			}
			b = append(b, ' ')
		}
	}
	text := string(b)
	// ASCII, a whole number of tokens long: Tokenize is this slicing.
	toks := make([]string, len(text)/faults.BytesPerToken)
	for i := range toks {
		toks[i] = text[i*faults.BytesPerToken : (i+1)*faults.BytesPerToken]
	}
	return &corpus{text: text, tokens: toks, starts: starts}
}

// window returns n tokens of filler that begin with a sentence, drawing
// one number from r: the text and its chunks, capped so that an append
// cannot write into the corpus. ok is false when n is too long for the
// corpus (more than half of it).
func (c *corpus) window(r *rand.Rand, n int) (text string, chunks []string, ok bool) {
	if n <= 0 || n > len(c.tokens)/2 {
		return "", nil, false
	}
	// k = the number of starts s with s+n <= len(tokens) (at least half).
	if c.fits == nil {
		c.fits = make([]int32, len(c.tokens)/2+1)
	}
	lo := int(c.fits[n])
	if lo == 0 {
		lo = c.fitting(n)
		c.fits[n] = int32(lo)
	}
	s := int(c.starts[r.IntN(lo)])
	return c.text[s*faults.BytesPerToken : (s+n)*faults.BytesPerToken], c.tokens[s : s+n : s+n], true
}

// fitting returns the number of starts s with s+n <= len(c.tokens).
func (c *corpus) fitting(n int) int {
	last := int32(len(c.tokens) - n)
	lo, hi := 0, len(c.starts)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if c.starts[mid] <= last {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// FillerCorpus returns the model's filler corpus: every answer planned
// from it (Plan.Filler) is a substring of it that starts at its start or
// after a space (a sentence start) and ends at a token boundary.
func (m *Model) FillerCorpus() string {
	m.lock()
	defer m.unlock()
	if m.corpus == nil {
		m.corpus = newCorpus(m.corpusSeed, corpusTokens)
	}
	return m.corpus.text
}

// filler returns n tokens of filler text and, when they come from the
// model's corpus, their chunks (nil otherwise).
func (m *Model) filler(n int) (string, []string) {
	if m.corpus == nil {
		m.corpus = newCorpus(m.corpusSeed, corpusTokens)
	}
	if text, chunks, ok := m.corpus.window(m.rnd, n); ok {
		return text, chunks
	}
	return Filler(m.rnd, n), nil
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

// matchRequest is m.match of the request's last user message, memoized
// with the prompt memo when it is on.
func (m *Model) matchRequest(req *llm.Request, model string) *Rule {
	if len(m.rules) == 0 {
		return nil
	}
	if m.memo != nil {
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role == llm.RoleUser {
				if e := m.memo.message(i); e != nil {
					return e.match(m, model, req.Messages[i].Content[0].Text)
				}
				break
			}
		}
	}
	return m.match(model, req.LastUserText())
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
// n is the sampled length for filler answers. chunks is set only for a
// filler answer from the corpus: the tokens of text, shared (read-only).
func (m *Model) content(req *llm.Request, model string, n int) (text string, chunks []string, calls []llm.ToolCall) {
	rule := m.matchRequest(req, model)
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
				argText = m.schema(t.Parameters).generate(m.rnd)
			} else {
				argText = "{}"
			}
			return "", nil, []llm.ToolCall{{ID: faults.ToolCallID(m.spec.Format, m.rnd), Name: name, Arguments: argText}}
		}
	}
	structured := req.ResponseFormat != nil && (req.ResponseFormat.Type == llm.ResponseJSONSchema || req.ResponseFormat.Type == llm.ResponseJSONObject)
	if rule != nil && rule.Answer != "" {
		if !structured || json.Valid([]byte(rule.Answer)) {
			return rule.Answer, nil, nil
		}
	}
	if structured {
		if req.ResponseFormat.Type == llm.ResponseJSONSchema && len(req.ResponseFormat.Schema) > 0 {
			return m.schema(req.ResponseFormat.Schema).generate(m.rnd), nil, nil
		}
		answer, _ := m.filler(min(n, 32))
		b, _ := json.Marshal(map[string]string{"answer": answer})
		return string(b), nil, nil
	}
	text, chunks = m.filler(n)
	return text, chunks, nil
}

// maxSchemas bounds the decoded-schema cache.
const maxSchemas = 64

// schema returns the prepared schema, decoding and preparing each distinct
// schema once (callers hold m.mu). The last one is checked first: a
// simulator sends the same schema again and again.
func (m *Model) schema(raw []byte) *schemaPlan {
	if sp := m.lastSchema; sp != nil && string(raw) == sp.text {
		return sp
	}
	sp, ok := m.schemas[string(raw)]
	if !ok {
		sp = newSchemaPlan(string(raw), decodeSchema(raw))
		if len(m.schemas) < maxSchemas {
			if m.schemas == nil {
				m.schemas = make(map[string]*schemaPlan)
			}
			m.schemas[string(raw)] = sp
		}
	}
	m.lastSchema = sp
	return sp
}
