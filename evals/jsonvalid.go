package evals

// validJSONText reports whether s is exactly one JSON value (RFC 8259) with
// optional surrounding white space — the same answer as json.Valid, which
// FuzzValidJSONText checks, several times faster, since it runs on every
// structured response the gateway serves.
func validJSONText(s string) bool {
	p := jsonScan{s: s}
	p.space()
	if !p.value(0) {
		return false
	}
	p.space()
	return p.i == len(s)
}

// maxJSONDepth matches encoding/json's nesting limit.
const maxJSONDepth = 10000

type jsonScan struct {
	s string
	i int
}

func (p *jsonScan) space() {
	s, i := p.s, p.i
	for i < len(s) && jsonSpace[s[i]] {
		i++
	}
	p.i = i
}

// jsonSpace marks JSON white space; jsonPlain the bytes a string holds as
// they are (not a quote, a backslash or a control character).
var jsonSpace, jsonPlain = func() (sp, plain [256]bool) {
	for _, c := range []byte{' ', '\t', '\n', '\r'} {
		sp[c] = true
	}
	for c := 0x20; c < 256; c++ {
		plain[c] = c != '"' && c != '\\'
	}
	return sp, plain
}()

func (p *jsonScan) value(depth int) bool {
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; c {
	case '{':
		return p.object(depth + 1)
	case '[':
		return p.array(depth + 1)
	case '"':
		return p.str()
	case 't':
		return p.lit("true")
	case 'f':
		return p.lit("false")
	case 'n':
		return p.lit("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return p.number()
		}
		return false
	}
}

func (p *jsonScan) lit(w string) bool {
	if len(p.s)-p.i < len(w) || p.s[p.i:p.i+len(w)] != w {
		return false
	}
	p.i += len(w)
	return true
}

func (p *jsonScan) object(depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	p.i++ // {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return true
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' || !p.str() {
			return false
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return false
		}
		p.i++
		p.space()
		if !p.value(depth) {
			return false
		}
		p.space()
		if p.i >= len(p.s) {
			return false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

func (p *jsonScan) array(depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	p.i++ // [
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return true
	}
	for {
		if !p.value(depth) {
			return false
		}
		p.space()
		if p.i >= len(p.s) {
			return false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			return true
		default:
			return false
		}
	}
}

func (p *jsonScan) str() bool {
	s := p.s
	i := p.i + 1 // opening quote
	for i < len(s) {
		for i < len(s) && jsonPlain[s[i]] {
			i++
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(s) {
				return false
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s) {
					return false
				}
				for k := i + 2; k < i+6; k++ {
					if !isHex(s[k]) {
						return false
					}
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (p *jsonScan) number() bool {
	s, i := p.s, p.i
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	p.i = i
	return true
}
