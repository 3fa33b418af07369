package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/brownout-dev/brownout/llm"
)

// object is one JSON object of a request, read field by field. Keys are kept
// in lowerCamelCase: like Google's proto JSON parser, brownout accepts both
// "maxOutputTokens" and "max_output_tokens". A null value counts as absent.
type object struct {
	path   string
	fields map[string]json.RawMessage
}

func decodeObject(raw json.RawMessage, path string) (*object, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, llm.BadRequest(path, "%s must be a JSON object", name(path))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, llm.BadRequest(path, "%s is not valid JSON: %v", name(path), err)
	}
	o := &object{path: path, fields: make(map[string]json.RawMessage, len(m))}
	for k, v := range m {
		c := camel(k)
		if _, dup := o.fields[c]; dup {
			return nil, llm.BadRequest(join(path, c), "field %q is set twice (in camelCase and snake_case)", c)
		}
		if isNull(v) {
			continue
		}
		o.fields[c] = v
	}
	return o, nil
}

// take removes and returns a field.
func (o *object) take(key string) (json.RawMessage, bool) {
	v, ok := o.fields[key]
	if ok {
		delete(o.fields, key)
	}
	return v, ok
}

// at is the path of a field of o.
func (o *object) at(key string) string { return join(o.path, key) }

// done reports the first field nobody took as unknown, as Google does
// ("Unknown name ... Cannot find field").
func (o *object) done() error {
	if len(o.fields) == 0 {
		return nil
	}
	keys := make([]string, 0, len(o.fields))
	for k := range o.fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return llm.BadRequest(o.at(keys[0]), "unknown field %q", keys[0])
}

// unsupported reports a field Gemini knows but brownout does not model.
func unsupportedField(path string) error {
	return llm.BadRequest(path, "%s is a Gemini feature brownout does not support", path)
}

func (o *object) str(key string) (string, bool, error) {
	v, ok := o.take(key)
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false, llm.BadRequest(o.at(key), "%s must be a string", key)
	}
	return s, true, nil
}

func (o *object) float(key string) (*float64, error) {
	v, ok := o.take(key)
	if !ok {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, llm.BadRequest(o.at(key), "%s must be a number", key)
	}
	return &f, nil
}

// integer reads an integer; proto JSON allows it quoted ("42") and written as
// an integral float (40.0).
func (o *object) integer(key string, lo, hi int64) (*int64, error) {
	v, ok := o.take(key)
	if !ok {
		return nil, nil
	}
	bad := llm.BadRequest(o.at(key), "%s must be an integer between %d and %d", key, lo, hi)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, bad
		}
		v = json.RawMessage(s)
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(v), 64)
		if ferr != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
			return nil, bad
		}
		n = int64(f)
	}
	if n < lo || n > hi {
		return nil, bad
	}
	return &n, nil
}

func (o *object) array(key string) ([]json.RawMessage, bool, error) {
	v, ok := o.take(key)
	if !ok {
		return nil, false, nil
	}
	var a []json.RawMessage
	if err := json.Unmarshal(v, &a); err != nil {
		return nil, false, llm.BadRequest(o.at(key), "%s must be an array", key)
	}
	return a, true, nil
}

func (o *object) strings(key string) ([]string, error) {
	v, ok := o.take(key)
	if !ok {
		return nil, nil
	}
	var a []string
	if err := json.Unmarshal(v, &a); err != nil {
		return nil, llm.BadRequest(o.at(key), "%s must be an array of strings", key)
	}
	return a, nil
}

func (o *object) object(key string) (*object, bool, error) {
	v, ok := o.take(key)
	if !ok {
		return nil, false, nil
	}
	sub, err := decodeObject(v, o.at(key))
	return sub, err == nil, err
}

func isNull(v json.RawMessage) bool {
	return string(bytes.TrimSpace(v)) == "null"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func name(path string) string {
	if path == "" {
		return "the request body"
	}
	return path
}

// camel converts a snake_case key to lowerCamelCase; other keys are unchanged.
func camel(k string) string {
	if !strings.Contains(k, "_") {
		return k
	}
	var b strings.Builder
	up := false
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' && i > 0:
			up = true
		case up && 'a' <= c && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			up = false
		default:
			b.WriteByte(c)
			up = false
		}
	}
	return b.String()
}
