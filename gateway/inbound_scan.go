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
	// maxTokens is the largest output cap the body names: a top-level
	// max_tokens, max_completion_tokens or max_output_tokens, or Gemini's
	// generationConfig.maxOutputTokens (0: none, or not a plain integer).
	maxTokens int
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
		wantValue bool   // inside messages: the next token starts an element
		inGen     bool   // inside the top-level generationConfig object (depth 2)
		genKey    []byte // the last key read there
		wantKey2  bool   // there, the next string is a key
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
			if depth == 2 && inGen && wantKey2 {
				genKey, wantKey2 = raw, false
				continue
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
			if depth == 2 && c == '{' && string(key) == "generationConfig" {
				inGen, wantKey2 = true, true
			}
		case '}', ']':
			if depth == 2 && inMsgs {
				inMsgs = false
				sh.messages = max(sh.messages, msgs)
			}
			if depth == 2 {
				inGen = false
			}
			depth--
		case ',':
			if depth == 1 {
				wantKey = true
			}
			if depth == 2 && inGen {
				wantKey2 = true
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
			if depth == 1 && !wantKey && isMaxTokens(key) || depth == 2 && inGen && !wantKey2 && string(genKey) == "maxOutputTokens" {
				var n int
				n, i = scanInt(body, i)
				sh.maxTokens = max(sh.maxTokens, n)
			}
		}
	}
	if inMsgs {
		sh.messages = max(sh.messages, msgs)
	}
	return sh
}

// isMaxTokens reports whether a top-level key caps the output tokens.
func isMaxTokens(key []byte) bool {
	switch string(key) {
	case "max_tokens", "max_completion_tokens", "max_output_tokens":
		return true
	}
	return false
}

// scanInt reads the literal at body[i:]: a plain non-negative integer's
// value (saturated), 0 for anything else; and the index of its last byte.
func scanInt(body []byte, i int) (int, int) {
	n, ok := 0, true
	j := i
	for ; j < len(body); j++ {
		c := body[j]
		if c >= '0' && c <= '9' {
			n = min(n*10+int(c-'0'), 1<<40)
			continue
		}
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		ok = false // a sign, a fraction, an exponent, a word
	}
	if !ok {
		n = 0
	}
	return n, j - 1
}

// unescape decodes the contents of a JSON string with escapes.
func unescape(raw []byte) []byte {
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) != nil {
		return raw
	}
	return []byte(s)
}
