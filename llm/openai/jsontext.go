package openai

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/brownout-dev/brownout/internal/jsonstr"
)

// appendString appends s as a JSON string, escaping like encoding/json with
// HTML escaping off (as the OpenAI API does).
func appendString(b []byte, s string) []byte { return jsonstr.Append(b, s, false) }

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// marshal encodes v without HTML escaping and without a trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// kind names the JSON type of raw the way the OpenAI API's messages do.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		if bytes.ContainsAny(raw, ".eE") {
			return "a decimal"
		}
		return "an integer"
	}
}
