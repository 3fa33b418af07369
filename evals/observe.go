package evals

import (
	"strings"

	"github.com/brownout-dev/brownout/llm"
)

// Observation is what the detectors need to know about one served response.
// It is a small value built per response by [Observe] (or [ObserveStream]);
// the caller fills Target (and Route, InputTokens, MaxTokens when known).
type Observation struct {
	Target       string           `json:"target"` // "provider:model"
	Route        string           `json:"route,omitempty"`
	FinishReason llm.FinishReason `json:"finish_reason"`
	OutputTokens int              `json:"output_tokens"`
	// InputTokens and MaxTokens (the request's cap, 0 when unset) describe the
	// traffic mix: the finish_reason=length detector stays quiet when they move.
	InputTokens int `json:"input_tokens,omitempty"`
	MaxTokens   int `json:"max_tokens,omitempty"`
	// Structured says the route expects JSON content; JSONValid is only
	// meaningful when it is set.
	Structured bool `json:"structured,omitempty"`
	JSONValid  bool `json:"json_valid,omitempty"`
	Refusal    bool `json:"refusal,omitempty"`
	ToolCalls  int  `json:"tool_calls,omitempty"`
	// EmptyToolArgs counts tool calls whose arguments are empty, "{}" or not
	// valid JSON.
	EmptyToolArgs int `json:"empty_tool_args,omitempty"`
}

// Of fills in what the request tells about an observed answer, the same
// way in both engines (the gateway and the simulator): the target
// ("provider:model") that answered, the route, the request's max_tokens,
// and the input tokens — the usage's, else promptEstimate (the gateway's
// estimate of the prompt) when the answer reported none.
func (o *Observation) Of(target, route string, maxTokens, promptEstimate int) {
	o.Target, o.Route, o.MaxTokens = target, route, maxTokens
	if o.InputTokens == 0 {
		o.InputTokens = promptEstimate
	}
}

// RefusalScan is how many leading bytes of content [Observe] searches for
// refusal phrases: refusals open the answer, and the bound keeps the cost per
// response constant.
const RefusalScan = 512

// Observe summarises one response for the detectors. It is cheap enough to run
// on every response: no allocation, JSON validity by a validating scanner
// (no decode, the same verdict as json.Valid) and only when structured, and refusal phrases searched in the first
// RefusalScan bytes. refusals nil means DefaultRefusals; phrases match ASCII
// case-insensitively, with curly apostrophes read as straight ones.
func Observe(r *llm.Response, structured bool, refusals []string) Observation {
	o := Observation{Structured: structured}
	if r == nil {
		return o
	}
	o.FinishReason = r.FinishReason
	o.OutputTokens = r.Usage.OutputTokens
	o.InputTokens = r.Usage.InputTokens
	if structured {
		o.JSONValid = validJSON(r.Content)
	}
	if refusals == nil {
		refusals = DefaultRefusals
	}
	if r.Refusal != "" || r.FinishReason == llm.FinishContentFilter {
		o.Refusal = true
	} else {
		_, o.Refusal = findPhrase(r.Content, refusals, RefusalScan)
	}
	o.ToolCalls = len(r.ToolCalls)
	for i := range r.ToolCalls {
		if emptyArgs(r.ToolCalls[i].Arguments) {
			o.EmptyToolArgs++
		}
	}
	return o
}

// ContainsPhrase reports whether s contains one of phrases anywhere, matched
// as [Observe] matches refusals (nil phrases: DefaultRefusals). A text that
// contains none has no substring that contains one when the substring starts
// at the text's start or after a space and ends at a character boundary: the
// simulator checks a mock provider's filler corpus once instead of every
// answer cut from it.
func ContainsPhrase(s string, phrases []string) bool {
	if phrases == nil {
		phrases = DefaultRefusals
	}
	_, ok := findPhrase(s, phrases, 0)
	return ok
}

// ObserveStream summarises a streamed response from what the proxy
// accumulated: the text deltas joined, the tool calls assembled from their
// deltas, the finish reason (empty if the stream was cut) and the final usage.
// When usage is missing, outputTokens estimates it (e.g. the number of text
// deltas); pass 0 when unknown.
func ObserveStream(content string, toolCalls []llm.ToolCall, finish llm.FinishReason, usage llm.Usage, outputTokens int, structured bool, refusals []string) Observation {
	r := llm.Response{Content: content, ToolCalls: toolCalls, FinishReason: finish, Usage: usage}
	if r.Usage.OutputTokens == 0 {
		r.Usage.OutputTokens = outputTokens
	}
	return Observe(&r, structured, refusals)
}

// Accumulator folds stream events into a response, for [ObserveStream] and
// for checks on streamed answers. The zero value is ready to use.
type Accumulator struct {
	id, model string
	content   strings.Builder
	calls     []llm.ToolCall
	index     map[int]int // stream index -> position in calls
	finish    llm.FinishReason
	usage     llm.Usage
	deltas    int
	err       *llm.Error
}

// Add folds one event in.
func (a *Accumulator) Add(ev llm.StreamEvent) {
	switch ev.Type {
	case llm.EventStart:
		a.id, a.model = ev.ID, ev.Model
	case llm.EventTextDelta:
		a.content.WriteString(ev.Text)
		if ev.Text != "" {
			a.deltas++
		}
	case llm.EventToolCallDelta:
		if ev.ToolCall == nil {
			return
		}
		if a.index == nil {
			a.index = make(map[int]int)
		}
		i, ok := a.index[ev.ToolCall.Index]
		if !ok {
			i = len(a.calls)
			a.index[ev.ToolCall.Index] = i
			a.calls = append(a.calls, llm.ToolCall{})
		}
		c := &a.calls[i]
		if ev.ToolCall.ID != "" {
			c.ID = ev.ToolCall.ID
		}
		if ev.ToolCall.Name != "" {
			c.Name = ev.ToolCall.Name
		}
		c.Arguments += ev.ToolCall.Arguments
	case llm.EventFinish:
		a.finish = ev.FinishReason
	case llm.EventUsage:
		if ev.Usage != nil {
			a.usage = *ev.Usage
		}
	case llm.EventError:
		a.err = ev.Err
	}
}

// Err returns the in-band error the stream carried, or nil.
func (a *Accumulator) Err() *llm.Error { return a.err }

// Response returns the response accumulated so far. When the stream carried
// no usage, OutputTokens is the number of non-empty text deltas.
func (a *Accumulator) Response() *llm.Response {
	r := &llm.Response{ID: a.id, Model: a.model, Content: a.content.String(),
		ToolCalls: append([]llm.ToolCall(nil), a.calls...), FinishReason: a.finish, Usage: a.usage}
	if r.Usage.OutputTokens == 0 {
		r.Usage.OutputTokens = a.deltas
	}
	return r
}

// Observe summarises the accumulated stream (see [ObserveStream]).
func (a *Accumulator) Observe(structured bool, refusals []string) Observation {
	return ObserveStream(a.content.String(), a.calls, a.finish, a.usage, a.deltas, structured, refusals)
}

// validJSON reports whether s, trimmed (as the json_valid check trims), is
// one JSON value.
func validJSON(s string) bool {
	return validJSONText(strings.TrimSpace(s))
}

func emptyArgs(args string) bool {
	args = strings.TrimSpace(args)
	if args == "" {
		return true
	}
	if args[0] == '{' {
		inner := strings.TrimSpace(args[1:])
		if inner == "}" {
			return true
		}
	}
	return !validJSON(args)
}

// findPhraseLinear is findPhrase without a compiled phrase set, for lists
// of more than 64 phrases (and the reference the tests compare findPhrase
// with). It reports the first phrase found in the first limit bytes of s
// (limit 0: all of s), ASCII case-insensitively, reading U+2019 as '.
//
// It scans s in place (no lowered copy): a byte table of the phrases' first
// bytes (both cases) finds candidate positions, and only candidates at a word
// start are compared, folding case and curly apostrophes as they go.
func findPhraseLinear(s string, phrases []string, limit int) (string, bool) {
	if len(phrases) == 0 || s == "" {
		return "", false
	}
	if limit > 0 && len(s) > limit {
		s = s[:limit]
	}
	// first and second hold the bytes that can begin the phrases' first and
	// second characters (both cases; 0xe2 for a curly apostrophe).
	var first, second [256]bool
	short := false // a one-byte phrase: no second character to test
	for _, p := range phrases {
		if p == "" {
			continue
		}
		markFolded(&first, p[0])
		if len(p) == 1 {
			short = true
		} else {
			markFolded(&second, p[1])
		}
	}
	for i := 0; i < len(s); i++ {
		if !first[s[i]] || insideCurly(s, i) {
			continue
		}
		c, next := s[i], i+1
		if isCurly(s, i) {
			c, next = '\'', i+3
		} else {
			c = lowerASCII(c)
		}
		if !short && (next >= len(s) || !second[s[next]]) {
			continue
		}
		if i > 0 && isWordByte(c) && isWordByte(prevFolded(s, i)) {
			continue
		}
		c2 := byte(0) // the folded second character; 0 when there is none
		if next < len(s) {
			c2 = lowerASCII(s[next])
			if isCurly(s, next) {
				c2 = '\''
			}
		}
		for _, p := range phrases {
			// Cheap rejections by the first two characters, then the rest.
			if p == "" || lowerASCII(p[0]) != c || len(p) > 1 && (next >= len(s) || lowerASCII(p[1]) != c2) {
				continue
			}
			if hasPrefixFold(s[i:], p) {
				return p, true
			}
		}
	}
	return "", false
}

// markFolded marks the content bytes that begin a character folding to c: c
// lowered, its upper case and, for ', the first byte of a curly apostrophe.
func markFolded(t *[256]bool, c byte) {
	c = lowerASCII(c)
	t[c] = true
	if 'a' <= c && c <= 'z' {
		t[c-'a'+'A'] = true
	}
	if c == '\'' {
		t[0xe2] = true
	}
}

// isCurly reports whether s[i:] starts with a whole U+2019 (’).
func isCurly(s string, i int) bool {
	return s[i] == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && s[i+2] == 0x99
}

// insideCurly reports whether s[i] is a continuation byte of a whole ’.
func insideCurly(s string, i int) bool {
	switch s[i] {
	case 0x80:
		return i >= 1 && isCurly(s, i-1)
	case 0x99:
		return i >= 2 && isCurly(s, i-2)
	}
	return false
}

// prevFolded is the folded character before position i (i > 0): ' when a
// whole ’ ends there, else the lowered byte.
func prevFolded(s string, i int) byte {
	if i >= 3 && isCurly(s, i-3) {
		return '\''
	}
	return lowerASCII(s[i-1])
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c >= 0x80
}

// hasPrefixFold reports whether s starts with p, comparing ASCII-lowercased
// and reading a whole ’ in s as '.
func hasPrefixFold(s string, p string) bool {
	j := 0
	for k := 0; k < len(p); k++ {
		if j >= len(s) {
			return false
		}
		c := s[j]
		if isCurly(s, j) {
			c = '\''
			j += 3
		} else {
			c = lowerASCII(c)
			j++
		}
		if c != lowerASCII(p[k]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
