package mockprovider

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// GenerateJSON returns JSON text that satisfies the JSON Schema in schema for
// the common shapes structured output uses, drawing values from r:
//
//   - type: object (with properties; every listed property is emitted, in
//     sorted order, required or not), array (items, minItems, maxItems:
//     between minItems and min(maxItems, minItems+2) elements), string
//     (minLength, maxLength; format date, date-time, time, email, uri, uuid),
//     integer and number (minimum, maximum, exclusiveMinimum/Maximum,
//     multipleOf for integers), boolean, null, and a list of types (the
//     first non-null one);
//   - enum and const (the value is picked from them);
//   - anyOf / oneOf (the first branch), allOf (merged object properties);
//   - $ref to "#/$defs/..." or "#/definitions/..." (recursion stops at depth 8
//     with the smallest value the schema allows).
//
// Limits: pattern, patternProperties, additionalProperties (no extra keys are
// emitted), uniqueItems, dependent schemas, if/then/else and not are not
// honoured; a string with a pattern gets a plain word. A schema that is not
// valid JSON yields {}. Bounds may span the whole int64 and float64 range.
// Whatever the schema (a client sends it), a document stays small: minItems
// and minLength count at most 256, and past depth 32 or 16384 values objects
// and arrays are empty (such a document may break the schema).
func GenerateJSON(schema []byte, r *rand.Rand) string {
	return generateJSON(decodeSchema(schema), r)
}

// decodeSchema decodes a JSON schema; nil when it is empty or not valid JSON.
func decodeSchema(schema []byte) map[string]any {
	var root map[string]any
	if len(schema) == 0 || json.Unmarshal(schema, &root) != nil {
		return nil
	}
	return root
}

// generateJSON is GenerateJSON of a decoded schema (nil: {}). It only reads
// root, so a decoded schema can be reused.
func generateJSON(root map[string]any, r *rand.Rand) string {
	if root == nil {
		return "{}"
	}
	g := &gen{root: root, r: r}
	var b strings.Builder
	g.value(&b, root, 0)
	return b.String()
}

type gen struct {
	root map[string]any
	r    *rand.Rand
	buf  []byte // scratch of gen.node
	n    int    // values begun so far (see busy and full)
}

// Limits that keep one document small whatever the schema asks for (a
// client sends the schema: a mock must not be made to loop or exhaust
// memory). Below them a document satisfies the schema; past them it is
// cut short and may not.
const (
	// maxDepth: deeper objects get only their required properties and
	// arrays only their minimum items.
	maxDepth = 8
	// busyValues: past this many values, every object and array is
	// generated as at maxDepth.
	busyValues = 1 << 12
	// hardDepth and fullValues: deeper, or past this many values, objects
	// are {} and arrays [] (a required property that refers to its own
	// object would otherwise never end).
	hardDepth  = 32
	fullValues = 1 << 14
	// maxCount caps minItems and minLength.
	maxCount = 256
)

// begin counts a value and reports whether its object or array must be
// empty; tight reports whether it gets only what is required.
func (g *gen) begin(depth int) (full bool) {
	g.n++
	return depth >= hardDepth || g.n > fullValues
}

func (g *gen) tight(depth int) bool { return depth >= maxDepth || g.n > busyValues }

// count turns a schema count (minItems, maxLength...) into an int in
// [0, maxCount] for minimums, [0, MaxInt32] otherwise.
func count(v float64, limit int) int {
	switch {
	case v <= 0 || v != v:
		return 0
	case v >= float64(limit):
		return limit
	}
	return int(v)
}

func (g *gen) resolve(s map[string]any) map[string]any {
	for range 16 {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		target := g.lookup(ref)
		if target == nil {
			return map[string]any{}
		}
		s = target
	}
	return s
}

func (g *gen) lookup(ref string) map[string]any {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	var cur any = g.root
	for _, seg := range strings.Split(strings.TrimPrefix(ref, "#"), "/") {
		if seg == "" {
			continue
		}
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[seg]
	}
	m, _ := cur.(map[string]any)
	return m
}

func writeValue(b *strings.Builder, v any) {
	if str, ok := v.(string); ok {
		writeString(b, str)
		return
	}
	out, err := json.Marshal(v)
	if err != nil {
		b.WriteString("null")
		return
	}
	b.Write(out)
}

// writeString writes str as json.Marshal does: a string of printable ASCII
// that needs no escape (json.Marshal also escapes <, > and &) is quoted as
// is, without allocating; others go through json.Marshal.
func writeString(b *strings.Builder, str string) {
	for i := 0; i < len(str); i++ {
		if c := str[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			out, _ := json.Marshal(str) // a string always marshals
			b.Write(out)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(str)
	b.WriteByte('"')
}

func (g *gen) value(b *strings.Builder, s map[string]any, depth int) {
	g.valueOf(b, g.resolve(s), depth)
}

// valueOf is value for a resolved schema.
func (g *gen) valueOf(b *strings.Builder, s map[string]any, depth int) {
	full := g.begin(depth)
	if c, ok := s["const"]; ok {
		writeValue(b, c)
		return
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		writeValue(b, e[g.r.IntN(len(e))])
		return
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				g.value(b, m, depth+1)
				return
			}
		}
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		merged := map[string]any{}
		props := map[string]any{}
		for _, a := range all {
			m, ok := a.(map[string]any)
			if !ok {
				continue
			}
			m = g.resolve(m)
			for k, v := range m {
				if k == "properties" {
					if pm, ok := v.(map[string]any); ok {
						for pk, pv := range pm {
							props[pk] = pv
						}
					}
					continue
				}
				merged[k] = v
			}
		}
		if len(props) > 0 {
			merged["properties"] = props
		}
		delete(merged, "allOf")
		g.value(b, merged, depth+1)
		return
	}
	switch typeOf(s) {
	case "object":
		if full {
			b.WriteString("{}")
			return
		}
		g.object(b, s, depth)
	case "array":
		if full {
			b.WriteString("[]")
			return
		}
		g.array(b, s, depth)
	case "string":
		g.str(b, s)
	case "integer":
		g.integer(b, s)
	case "number":
		g.number(b, s)
	case "boolean":
		if g.r.IntN(2) == 0 {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case "null":
		b.WriteString("null")
	default:
		b.WriteString(`"` + words[g.r.IntN(len(words))] + `"`)
	}
}

func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if str, ok := v.(string); ok && str != "null" {
				return str
			}
		}
		if len(t) > 0 {
			str, _ := t[0].(string)
			return str
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	if _, ok := s["items"]; ok {
		return "array"
	}
	return ""
}

func (g *gen) object(b *strings.Builder, s map[string]any, depth int) {
	props, _ := s["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	if g.tight(depth) {
		// Only what is required, to end recursion.
		keys = keys[:0]
		if req, ok := s["required"].([]any); ok {
			for _, k := range req {
				if ks, ok := k.(string); ok {
					keys = append(keys, ks)
				}
			}
		}
	}
	sort.Strings(keys)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, k)
		b.WriteByte(':')
		ps, _ := props[k].(map[string]any)
		if ps == nil {
			ps = map[string]any{}
		}
		g.value(b, ps, depth+1)
	}
	b.WriteByte('}')
}

func num(s map[string]any, k string) (float64, bool) {
	v, ok := s[k].(float64)
	return v, ok
}

func (g *gen) array(b *strings.Builder, s map[string]any, depth int) {
	lo, hi := itemRange(s)
	if g.tight(depth) {
		hi = lo
	}
	n := lo
	if hi > lo {
		n += g.r.IntN(hi - lo + 1)
	}
	items, _ := s["items"].(map[string]any)
	if items == nil {
		items = map[string]any{"type": "string"}
	}
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		g.value(b, items, depth+1)
	}
	b.WriteByte(']')
}

// itemRange is the item count range of an array schema before the depth
// rule: between minItems and min(maxItems, minItems+2), 1 to 3 by default.
func itemRange(s map[string]any) (lo, hi int) {
	lo, hi = 1, 3
	if v, ok := num(s, "minItems"); ok {
		lo = count(v, maxCount)
		hi = max(hi, lo)
	}
	if v, ok := num(s, "maxItems"); ok {
		hi = min(hi, count(v, math.MaxInt32))
		lo = min(lo, hi)
	}
	return lo, hi
}

var words = []string{
	"alpha", "bravo", "delta", "echo", "harbor", "lumen", "orbit", "quartz",
	"river", "signal", "timber", "vector", "willow", "zephyr", "copper", "meadow",
}

func (g *gen) str(b *strings.Builder, s map[string]any) {
	var v string
	switch s["format"] {
	case "date":
		v = "2025-" + pad2(1+g.r.IntN(12)) + "-" + pad2(1+g.r.IntN(28))
	case "date-time":
		v = "2025-" + pad2(1+g.r.IntN(12)) + "-" + pad2(1+g.r.IntN(28)) + "T" + pad2(g.r.IntN(24)) + ":" + pad2(g.r.IntN(60)) + ":00Z"
	case "time":
		v = pad2(g.r.IntN(24)) + ":" + pad2(g.r.IntN(60)) + ":00Z"
	case "email":
		v = words[g.r.IntN(len(words))] + "@example.com"
	case "uri", "url":
		v = "https://example.com/" + words[g.r.IntN(len(words))]
	case "uuid":
		const hex = "0123456789abcdef"
		u := []byte("xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx")
		for i, c := range u {
			if c == 'x' {
				u[i] = hex[g.r.IntN(16)]
			}
		}
		v = string(u)
	default:
		v = words[g.r.IntN(len(words))]
		if g.r.IntN(2) == 0 {
			v += " " + words[g.r.IntN(len(words))]
		}
		if mn, ok := num(s, "minLength"); ok {
			for len([]rune(v)) < count(mn, maxCount) {
				v += " " + words[g.r.IntN(len(words))]
			}
		}
		if mx, ok := num(s, "maxLength"); ok && len([]rune(v)) > count(mx, math.MaxInt32) {
			v = string([]rune(v)[:count(mx, math.MaxInt32)])
		}
	}
	writeString(b, v)
}

func pad2(v int) string {
	if v < 10 {
		return "0" + strconv.Itoa(v)
	}
	return strconv.Itoa(v)
}

// bounds returns the inclusive range a numeric schema allows, defaulting to [0, 100].
func bounds(s map[string]any, step float64) (float64, float64) {
	lo, hi := 0.0, 100.0
	hasLo, hasHi := false, false
	if v, ok := num(s, "minimum"); ok {
		lo, hasLo = v, true
	}
	if v, ok := num(s, "exclusiveMinimum"); ok {
		lo, hasLo = v+step, true
	}
	if v, ok := num(s, "maximum"); ok {
		hi, hasHi = v, true
	}
	if v, ok := num(s, "exclusiveMaximum"); ok {
		hi, hasHi = v-step, true
	}
	switch {
	case hasLo && !hasHi:
		hi = lo + 100
	case hasHi && !hasLo:
		lo = min(0, hi-100)
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

func (g *gen) integer(b *strings.Builder, s map[string]any) {
	lo, hi := bounds(s, 1)
	ilo, ihi := intRange(lo, hi)
	mult, _ := num(s, "multipleOf")
	b.WriteString(strconv.FormatInt(drawInt(g.r, ilo, ihi, multiple(mult)), 10))
}

// intRange is the integer range [ilo, ihi] within [lo, hi] (bounds),
// clamped to int64 (a bound beyond it is the nearest int64).
func intRange(lo, hi float64) (ilo, ihi int64) {
	ilo, ihi = toInt64(math.Ceil(lo)), toInt64(math.Floor(hi))
	if ihi < ilo {
		ihi = ilo
	}
	return ilo, ihi
}

// toInt64 converts v, a whole number, clamping it to int64's range.
func toInt64(v float64) int64 {
	switch {
	case v >= 1<<63:
		return math.MaxInt64
	case v <= -(1 << 63):
		return math.MinInt64
	}
	return int64(v)
}

// multiple is a multipleOf usable for integers: whole and at least 1 (0: none).
func multiple(m float64) int64 {
	if m < 1 {
		return 0
	}
	return toInt64(m)
}

// drawInt draws a uniform integer in [lo, hi] (lo <= hi, the full int64
// range included), then moves it to a multiple of mult (mult > 0) next
// to it, when that multiple is in range.
func drawInt(r *rand.Rand, lo, hi, mult int64) int64 {
	span := uint64(hi) - uint64(lo) // hi-lo, exact even when it overflows int64
	var v int64
	if span == math.MaxUint64 {
		v = int64(r.Uint64())
	} else {
		v = lo + int64(r.Uint64N(span+1))
	}
	if mult > 0 {
		m := (v / mult) * mult // toward zero: at most v when v >= 0
		if m < lo && m <= math.MaxInt64-mult {
			m += mult
		}
		if m > hi && m >= math.MinInt64+mult {
			m -= mult
		}
		if m >= lo && m <= hi {
			v = m
		}
	}
	return v
}

func (g *gen) number(b *strings.Builder, s map[string]any) {
	lo, hi := bounds(s, 0.01)
	b.WriteString(strconv.FormatFloat(drawFloat(g.r, lo, hi), 'f', -1, 64))
}

// drawFloat draws a number in [lo, hi], truncated to two decimals when it
// has any, for the full float64 range.
func drawFloat(r *rand.Rand, lo, hi float64) float64 {
	f := r.Float64()
	var v float64
	if d := hi - lo; !math.IsInf(d, 0) {
		v = lo + f*d
	} else {
		v = lo*(1-f) + hi*f // no overflow: a weighted mean
	}
	if math.Abs(v) < 1<<52 { // larger numbers have no fractional digits
		v = math.Trunc(v*100) / 100
	}
	return min(max(v, lo), hi)
}
