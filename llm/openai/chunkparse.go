package openai

import (
	"unicode/utf8"

	"github.com/brownout-dev/brownout/llm"
)

// A fast path for the chunks that make up nearly all of a stream: content
// and tool-call deltas, finish reasons and the usage chunk. parseChunk
// reads them without encoding/json and without allocating (strings are
// slices of the event data, unless they hold escapes). On anything it does
// not handle exactly as encoding/json would — an error object, a duplicate or
// case-folded key, a type mismatch, invalid UTF-8, surrogate escapes, deep
// nesting, a syntax error — it reports false and the caller decodes the
// chunk with encoding/json instead. FuzzChunkFastPath checks that the two
// paths agree.

// chunk is a chat.completion.chunk as the decoder uses it.
type chunk struct {
	id, model string
	choices   []choice
	usage     llm.Usage
	hasUsage  bool // a usage object (not null) was read into usage
	// obfAt and obfEnd delimit the string value of a top-level
	// "obfuscation" member (OpenAI's random padding, different in every
	// chunk), quotes included; obfEnd 0: none.
	obfAt, obfEnd int
}

type choice struct {
	index            int
	content, refusal string
	finish           string
	toolCalls        []toolCallDelta
	// contentAt and contentEnd delimit the delta's content string in the
	// input, quotes included (contentEnd 0: no content string was read).
	contentAt, contentEnd int
}

type toolCallDelta struct {
	index          int
	id, name, args string
}

type chunkParser struct {
	s string
	i int
	// scratch for strings with escapes
	buf []byte
}

const maxFastDepth = 64

// parseChunk fills c from data; false means "use encoding/json".
func parseChunk(data string, c *chunk) bool {
	p := chunkParser{s: data}
	c.id, c.model = "", ""
	c.choices = c.choices[:0]
	c.usage, c.hasUsage = llm.Usage{}, false
	c.obfAt, c.obfEnd = 0, 0
	p.ws()
	if !p.top(c) {
		return false
	}
	p.ws()
	return p.i == len(p.s)
}

func (p *chunkParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *chunkParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *chunkParser) eat(c byte) bool {
	p.ws()
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

func (p *chunkParser) null() bool {
	if len(p.s)-p.i >= 4 && p.s[p.i:p.i+4] == "null" {
		p.i += 4
		return true
	}
	return false
}

// object walks an object's members, calling member for each key; member
// must consume the value. Keys must be ASCII (folding rules are then exact).
func (p *chunkParser) object(member func(key string) bool) bool {
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return true
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok || !p.eat(':') {
			return false
		}
		for j := 0; j < len(key); j++ {
			if key[j] >= utf8.RuneSelf {
				return false
			}
		}
		p.ws()
		if !member(key) {
			return false
		}
		if p.eat(',') {
			continue
		}
		return p.eat('}')
	}
}

// array walks an array's elements; elem must consume the value.
func (p *chunkParser) array(elem func() bool) bool {
	if !p.eat('[') {
		return false
	}
	if p.eat(']') {
		return true
	}
	for {
		p.ws()
		if !elem() {
			return false
		}
		if p.eat(',') {
			continue
		}
		return p.eat(']')
	}
}

// field matches key against the known names of an object; a case-folded
// match of a known name or a repeated key is not handled (false, false).
func field(key string, names []string, seen *uint32) (int, bool) {
	for n, name := range names {
		if key == name {
			if *seen&(1<<n) != 0 {
				return -1, false
			}
			*seen |= 1 << n
			return n, true
		}
		if asciiEqualFold(key, name) {
			return -1, false
		}
	}
	return -1, true // unknown: skip
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

var (
	topNames      = []string{"id", "model", "choices", "usage", "error"}
	choiceNames   = []string{"index", "delta", "finish_reason"}
	deltaNames    = []string{"content", "refusal", "tool_calls"}
	toolCallNames = []string{"index", "id", "function"}
	functionNames = []string{"name", "arguments"}
)

func (p *chunkParser) top(c *chunk) bool {
	var seen uint32
	return p.object(func(key string) bool {
		n, ok := field(key, topNames, &seen)
		switch {
		case !ok:
			return false
		case n == 0:
			return p.optString(&c.id)
		case n == 1:
			return p.optString(&c.model)
		case n == 2:
			if p.null() {
				c.choices = c.choices[:0]
				return true
			}
			return p.array(func() bool {
				c.choices = append(c.choices, choice{})
				return p.choice(&c.choices[len(c.choices)-1])
			})
		case n == 3:
			if p.null() {
				return true
			}
			c.hasUsage = true
			return p.usage(&c.usage) // as in a chat.completion (respparse.go)
		case n == 4: // error: only null is handled here
			return p.null()
		case key == "obfuscation" && p.peek() == '"':
			at := p.i
			if !p.skip(0) {
				return false
			}
			c.obfAt, c.obfEnd = at, p.i
			return true
		default:
			return p.skip(0)
		}
	})
}

func (p *chunkParser) choice(ch *choice) bool {
	var seen uint32
	return p.object(func(key string) bool {
		n, ok := field(key, choiceNames, &seen)
		switch {
		case !ok:
			return false
		case n == 0:
			return p.integer(&ch.index)
		case n == 1:
			if p.null() {
				return true
			}
			return p.delta(ch)
		case n == 2:
			return p.optString(&ch.finish)
		default:
			return p.skip(0)
		}
	})
}

func (p *chunkParser) delta(ch *choice) bool {
	var seen uint32
	return p.object(func(key string) bool {
		n, ok := field(key, deltaNames, &seen)
		switch {
		case !ok:
			return false
		case n == 0:
			at := p.i
			if !p.optString(&ch.content) {
				return false
			}
			if p.s[at] == '"' {
				ch.contentAt, ch.contentEnd = at, p.i
			}
			return true
		case n == 1:
			return p.optString(&ch.refusal)
		case n == 2:
			if p.null() {
				return true
			}
			return p.array(func() bool {
				ch.toolCalls = append(ch.toolCalls, toolCallDelta{})
				return p.toolCall(&ch.toolCalls[len(ch.toolCalls)-1])
			})
		default:
			return p.skip(0)
		}
	})
}

func (p *chunkParser) toolCall(tc *toolCallDelta) bool {
	var seen uint32
	return p.object(func(key string) bool {
		n, ok := field(key, toolCallNames, &seen)
		switch {
		case !ok:
			return false
		case n == 0:
			return p.integer(&tc.index)
		case n == 1:
			return p.optString(&tc.id)
		case n == 2:
			return p.function(&tc.name, &tc.args)
		default:
			return p.skip(0)
		}
	})
}

// function reads a tool call's "function" member ({"name", "arguments"} or
// null), in stream chunks and whole responses alike.
func (p *chunkParser) function(name, args *string) bool {
	if p.null() {
		return true
	}
	var seen uint32
	return p.object(func(key string) bool {
		n, ok := field(key, functionNames, &seen)
		switch {
		case !ok:
			return false
		case n == 0:
			return p.optString(name)
		case n == 1:
			return p.optString(args)
		default:
			return p.skip(0)
		}
	})
}

// optString reads a string or null (which leaves *dst alone, as
// encoding/json does).
func (p *chunkParser) optString(dst *string) bool {
	if p.null() {
		return true
	}
	s, ok := p.str()
	if ok {
		*dst = s
	}
	return ok
}

// integer reads a JSON integer that fits an int, or null.
func (p *chunkParser) integer(dst *int) bool {
	if p.null() {
		return true
	}
	neg := false
	if p.peek() == '-' {
		neg = true
		p.i++
	}
	start := p.i
	n := 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		n = n*10 + int(p.s[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	if digits == 0 || digits > 15 || (digits > 1 && p.s[start] == '0') {
		return false
	}
	if c := p.peek(); c == '.' || c == 'e' || c == 'E' {
		return false
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

// str reads a string. Without escapes it is a slice of the input.
func (p *chunkParser) str() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	start := p.i + 1
	ascii := true
	for i := start; i < len(p.s); i++ {
		c := p.s[i]
		switch {
		case c == '"':
			s := p.s[start:i]
			if !ascii && !utf8.ValidString(s) {
				return "", false
			}
			p.i = i + 1
			return s, true
		case c == '\\':
			return p.strEscaped(start)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

func (p *chunkParser) strEscaped(start int) (string, bool) {
	b := p.buf[:0]
	i := start
	for i < len(p.s) {
		c := p.s[i]
		switch {
		case c == '"':
			if !utf8.Valid(b) {
				return "", false
			}
			p.i = i + 1
			p.buf = b
			return string(b), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(p.s) {
			return "", false
		}
		switch e := p.s[i+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(p.s, i+2)
			if !ok || (r >= 0xD800 && r < 0xE000) {
				return "", false // surrogates: leave them to encoding/json
			}
			b = utf8.AppendRune(b, r)
			i += 4
		default:
			return "", false
		}
		i += 2
	}
	return "", false
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skip consumes any valid JSON value.
func (p *chunkParser) skip(depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	p.ws()
	switch c := p.peek(); {
	case c == '"':
		return p.skipString()
	case c == '{':
		return p.object(func(string) bool { p.ws(); return p.skip(depth + 1) })
	case c == '[':
		return p.array(func() bool { return p.skip(depth + 1) })
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	}
	return false
}

func (p *chunkParser) literal(lit string) bool {
	if len(p.s)-p.i >= len(lit) && p.s[p.i:p.i+len(lit)] == lit {
		p.i += len(lit)
		return true
	}
	return false
}

func (p *chunkParser) skipString() bool {
	for i := p.i + 1; i < len(p.s); i++ {
		switch c := p.s[i]; {
		case c == '"':
			p.i = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if i+1 >= len(p.s) {
				return false
			}
			switch p.s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if _, ok := hex4(p.s, i+2); !ok {
					return false
				}
				i += 5
			default:
				return false
			}
		}
	}
	return false
}

// number consumes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *chunkParser) number() bool {
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.peek() == '-' {
		p.i++
	}
	if p.peek() == '0' {
		p.i++
	} else if digits() == 0 {
		return false
	}
	if p.peek() == '.' {
		p.i++
		if digits() == 0 {
			return false
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
