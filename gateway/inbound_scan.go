package gateway

import "encoding/json"

// shape is what the gateway learns from a request body before decoding it:
// enough to refuse a request whose decoded form would be too large, and to
// admit it (route, stream) without decoding it twice.
type shape struct {
	model    string // the top-level "model" (the route)
	stream   bool   // "stream": true at the top level
	messages int    // elements of the top-level "messages" array (the largest, if repeated)
	nodes    int    // JSON objects and arrays, at any depth
	strs     int    // JSON strings (keys included)
}

// Decoded-size estimate, in bytes: what decoding a body into an
// llm.Request may allocate, bounded from above. The constants are measured
// (TestDecodedEstimateBoundsDecoding holds them to both codecs on
// adversarial shapes): a value's struct, the slices that hold it and the
// decoder's own bookkeeping.
const (
	decodedPerByte = 4
	decodedPerNode = 1024
	decodedPerStr  = 128
)

// decoded is the estimate of the memory the request's decoded form takes.
func (s *shape) decoded(bodyLen int) int64 {
	return int64(bodyLen)*decodedPerByte + int64(s.nodes)*decodedPerNode + int64(s.strs)*decodedPerStr
}

// scanRequest scans a JSON body once, without allocating (but for escaped
// keys and model names). It does not validate: a malformed body gives a
// partial shape, and the decoder says what is wrong with it.
func scanRequest(body []byte) shape {
	var (
		sh        shape
		depth     int
		key       []byte // the last key read at depth 1
		wantKey   bool   // at depth 1, the next string is a key
		inMsgs    bool   // inside the top-level messages array (depth 2)
		msgs      int
		wantValue bool // inside messages: the next token starts an element
	)
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch c {
		case '"':
			start := i + 1
			escaped := false
			for i++; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' {
					escaped = true
					i++
				}
			}
			if i >= len(body) {
				return sh
			}
			sh.strs++
			raw := body[start:i]
			if depth == 2 && inMsgs && wantValue {
				msgs++
				wantValue = false
			}
			if depth != 1 {
				continue
			}
			if wantKey {
				key, wantKey = raw, false
				if escaped {
					key = unescape(raw)
				}
				continue
			}
			if string(key) == "model" {
				sh.model = string(raw)
				if escaped {
					sh.model = string(unescape(raw))
				}
			}
		case '{', '[':
			sh.nodes++
			if depth == 2 && inMsgs && wantValue {
				msgs++
				wantValue = false
			}
			depth++
			if depth == 1 && c == '{' {
				wantKey = true
			}
			if depth == 2 && c == '[' && string(key) == "messages" {
				inMsgs, msgs, wantValue = true, 0, true
			}
		case '}', ']':
			if depth == 2 && inMsgs {
				inMsgs = false
				sh.messages = max(sh.messages, msgs)
			}
			depth--
		case ',':
			if depth == 1 {
				wantKey = true
			}
			if depth == 2 && inMsgs {
				wantValue = true
			}
		case ' ', '\t', '\n', '\r', ':':
		default:
			// a literal (number, true, false, null)
			if depth == 2 && inMsgs && wantValue {
				msgs++
				wantValue = false
			}
			if depth == 1 && !wantKey && string(key) == "stream" && c == 't' {
				sh.stream = true
			}
		}
	}
	if inMsgs {
		sh.messages = max(sh.messages, msgs)
	}
	return sh
}

// unescape decodes the contents of a JSON string with escapes.
func unescape(raw []byte) []byte {
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) != nil {
		return raw
	}
	return []byte(s)
}
