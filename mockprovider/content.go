package mockprovider

import (
	"encoding/json"
	"math/rand/v2"
	"path"
	"strings"
	"unicode/utf8"

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

// convo is the state of a conversation that rules and steps match on.
type convo struct {
	lastRole llm.Role
	// toolResult: a tool result follows the last user message.
	toolResult bool
	// turn is 1 plus the assistant messages; step is the assistant
	// messages after the last user message.
	turn, step int
	// result is the last tool result (nil: none).
	result *llm.Message
	// prefill is the text of a last assistant message without tool calls
	// (hasPrefill): the answer to continue. It is not a turn or a step, and
	// before is the role of the message before it.
	prefill    string
	hasPrefill bool
	before     llm.Role
}

// conversation reads the state of req's conversation. A prefill (a last
// assistant message) sets lastRole to assistant and counts as no turn: it
// is the beginning of the answer being asked for.
func conversation(req *llm.Request) convo {
	msgs := req.Messages
	var pre *llm.Message
	if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleAssistant && len(msgs[n-1].ToolCalls) == 0 {
		pre, msgs = &msgs[n-1], msgs[:n-1]
	}
	c := convo{turn: 1}
	afterUser := false
	for i := range msgs {
		msg := &msgs[i]
		switch msg.Role {
		case llm.RoleUser:
			c.step, c.toolResult, afterUser = 0, false, true
		case llm.RoleAssistant:
			c.turn++
			if afterUser {
				c.step++
			}
		case llm.RoleTool:
			c.toolResult = afterUser || c.toolResult
			c.result = msg
		}
		c.lastRole = msg.Role
	}
	if pre != nil {
		c.prefill, c.hasPrefill, c.before, c.lastRole = pre.Text(), true, c.lastRole, llm.RoleAssistant
	}
	return c
}

// withoutPrefill is the conversation without its prefill.
func (c convo) withoutPrefill() convo {
	c.lastRole, c.prefill, c.hasPrefill = c.before, "", false
	return c
}

// fresh reports whether the conversation is a first question: what a
// rule matches then depends on the text alone (see matchRequest).
func (c *convo) fresh() bool { return c.turn == 1 && c.lastRole == llm.RoleUser && !c.toolResult }

// holds reports whether r's conversation conditions hold for c.
func (r *Rule) holds(c *convo) bool {
	switch {
	case r.LastRole != "" && r.LastRole != c.lastRole:
		return false
	case r.Turn != 0 && r.Turn != c.turn:
		return false
	case r.ToolResult != nil:
		return *r.ToolResult == c.toolResult
	case r.ToolCall != nil && r.LastRole == "" && r.Turn == 0:
		// A call without conversation conditions is made once per
		// user message.
		return !c.toolResult
	}
	return true
}

// match finds the first rule for the request's last user message and
// conversation state.
func (m *Model) match(model, text string, c *convo) *Rule {
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
		if !r.holds(c) {
			continue
		}
		return r
	}
	return nil
}

// matchRequest is m.match of the request's last user message, memoized
// with the prompt memo when it is on and the conversation is fresh.
func (m *Model) matchRequest(req *llm.Request, model string, c *convo) *Rule {
	if len(m.rules) == 0 {
		return nil
	}
	if m.memo != nil && c.fresh() {
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role == llm.RoleUser {
				if e := m.memo.message(i); e != nil {
					return e.match(m, model, req.Messages[i].Content[0].Text, c)
				}
				break
			}
		}
	}
	return m.match(model, req.LastUserText(), c)
}

func findTool(tools []llm.Tool, name string) *llm.Tool {
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	return nil
}

// scripted is what a rule or a model's step says to do: an answer or a
// tool call (nil: nothing).
func (m *Model) scripted(req *llm.Request, model string, ms *modelState, c *convo) (answer string, call *RuleToolCall) {
	if rule := m.matchRequest(req, model, c); rule != nil {
		return rule.Answer, rule.ToolCall
	}
	if ms != nil && c.step < len(ms.spec.Steps) {
		st := &ms.spec.Steps[c.step]
		return st.Answer, st.ToolCall
	}
	return "", nil
}

// toolResultVar is replaced in scripted answers by the last tool result.
const toolResultVar = "{{tool_result}}"

// withResult fills the tool result into a scripted answer.
func withResult(answer string, c *convo) string {
	if !strings.Contains(answer, toolResultVar) {
		return answer
	}
	text := ""
	if c.result != nil {
		text = c.result.Text()
	}
	return strings.ReplaceAll(answer, toolResultVar, text)
}

// maxQuote bounds the share of a tool result a default answer quotes.
const maxQuote = 200

// afterTool is the default answer to a tool result: it quotes the result,
// then fills n tokens in all.
func (m *Model) afterTool(c *convo, n int) string {
	name := c.result.Name
	if name == "" {
		name = "tool"
	}
	quote := strings.Join(strings.Fields(c.result.Text()), " ")
	if len(quote) > maxQuote {
		cut := maxQuote
		for cut > 0 && !utf8.RuneStart(quote[cut]) {
			cut--
		}
		quote = quote[:cut] + "..."
	}
	text := "The " + name + " tool returned: " + quote + ". "
	if rest := n - faults.CountTokens(text); rest > 0 {
		more, _ := m.filler(rest)
		text += more
	}
	return text
}

// content decides the answer: tool calls, a scripted answer, JSON or
// filler. n is the sampled length for filler answers; ms is the model
// (its steps). chunks is set only for a filler answer from the corpus:
// the tokens of text, shared (read-only).
//
// In order: a forced tool choice calls its tool; a matching rule, else the
// model's step for this point of the tool loop, answers or calls a tool
// the request offers; a structured answer is JSON; an answer to a tool
// result quotes it; anything else is filler.
//
// A request ending with a prefill is answered as the conversation without
// it would be (a rule written for prefills, last_role: assistant, aside),
// then continued from the prefill (continueText); with prefill: ignore, the
// answer starts from scratch, and when it does not begin with the prefill
// it is spoiled (a splice if served after it): ignored is set.
func (m *Model) content(req *llm.Request, model string, ms *modelState, n int) (text string, chunks []string, calls []llm.ToolCall, ignored bool) {
	c := conversation(req)
	if !c.hasPrefill {
		text, chunks, calls = m.answer(req, model, ms, n, &c)
		return text, chunks, calls, false
	}
	if r := m.matchRequest(req, model, &c); r != nil && r.LastRole == llm.RoleAssistant {
		text, chunks, calls = m.answer(req, model, ms, n, &c)
		return text, chunks, calls, false
	}
	fresh := c.withoutPrefill()
	text, chunks, calls = m.answer(req, model, ms, n, &fresh)
	if len(calls) > 0 {
		return text, chunks, calls, false
	}
	if ms != nil && ms.spec.Prefill == PrefillIgnore {
		return text, chunks, calls, !strings.HasPrefix(text, strings.TrimLeft(c.prefill, " \t\r\n"))
	}
	return m.continueText(c.prefill, text, n), nil, nil, false
}

// continueText continues the prefill p, given the answer a the
// conversation gets without it: the rest of a when p is its beginning
// (leading whitespace aside); otherwise p's last word is finished from the
// filler vocabulary when it is the beginning of one of its words, and n
// tokens of filler go on, as the rest of p's sentence (lower case, after a
// space) or as new sentences after a full stop.
func (m *Model) continueText(p, a string, n int) string {
	if rest, ok := strings.CutPrefix(a, strings.TrimLeft(p, " \t\r\n")); ok {
		return rest
	}
	var b strings.Builder
	if w := partialWord(p); w != "" {
		b.WriteString(completeWord(w))
	}
	more, _ := m.filler(n)
	end := strings.TrimRight(p+b.String(), " \t\r\n")
	if end != "" && len(end) == len(p)+b.Len() {
		b.WriteByte(' ')
	}
	if r, _ := utf8.DecodeLastRuneInString(end); r == '.' || r == '!' || r == '?' || r == ':' || end == "" {
		b.WriteString(more)
	} else if more != "" {
		b.WriteString(strings.ToLower(more[:1]))
		b.WriteString(more[1:])
	}
	return b.String()
}

// partialWord returns the ASCII letters that end p (a word the cut may
// have split), "" when p ends otherwise.
func partialWord(p string) string {
	i := len(p)
	for i > 0 && (p[i-1] >= 'a' && p[i-1] <= 'z' || p[i-1] >= 'A' && p[i-1] <= 'Z') {
		i--
	}
	return p[i:]
}

// completeWord returns the rest of the first filler word that begins with
// w (any case), "" when none does or w is one already.
func completeWord(w string) string {
	lw := strings.ToLower(w)
	for _, f := range fillerWords {
		if f == lw {
			return ""
		}
	}
	for _, f := range fillerWords {
		if strings.HasPrefix(f, lw) {
			return f[len(lw):]
		}
	}
	return ""
}

// answer is content for the conversation state c.
func (m *Model) answer(req *llm.Request, model string, ms *modelState, n int, c *convo) (text string, chunks []string, calls []llm.ToolCall) {
	answer, call := m.scripted(req, model, ms, c)
	tc := req.ToolChoice
	toolsAllowed := len(req.Tools) > 0 && (tc == nil || tc.Mode != llm.ToolChoiceNone)
	if toolsAllowed {
		var name string
		var args map[string]any
		switch {
		case tc != nil && tc.Mode == llm.ToolChoiceTool && tc.Name != "":
			name = tc.Name
			if call != nil && call.Name == name {
				args = call.Arguments
			}
		case call != nil && findTool(req.Tools, call.Name) != nil:
			name, args = call.Name, call.Arguments
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
	if answer != "" {
		answer = withResult(answer, c)
		if !structured || json.Valid([]byte(answer)) {
			return answer, nil, nil
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
	if c.lastRole == llm.RoleTool && c.result != nil {
		return m.afterTool(c, n), nil, nil
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
