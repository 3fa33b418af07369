package mockprovider

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// planSchemas are schemas of every shape generateJSON knows, and of shapes
// it only tolerates.
var planSchemas = []string{
	`{}`,
	`{"$ref": "#"}`,
	`{"type": "object", "properties": {"child": {"$ref": "#"}, "n": {"type": "integer"}}, "required": ["n", "n", "missing"]}`,
	`{"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "array", "items": {"$ref": "#"}, "minItems": 2}}}`,
	`{"type": "object", "properties": {"s1": {"type": "string", "minLength": 30}, "s2": {"type": "string", "maxLength": 5}, "s3": {"type": "string", "minLength": 7.5, "maxLength": 9}, "s4": {"type": "string", "maxLength": 0}}}`,
	`{"type": "object", "properties": {"i1": {"type": "integer", "exclusiveMinimum": 3, "exclusiveMaximum": 9}, "i2": {"type": "integer", "maximum": -50}, "i3": {"type": "integer", "minimum": 7, "multipleOf": 3}, "i4": {"type": "integer", "multipleOf": 0.5}, "i5": {"type": "integer", "minimum": 10, "maximum": 2}}}`,
	`{"type": "object", "properties": {"n1": {"type": "number", "minimum": 1.5}, "n2": {"type": "number", "maximum": -3}, "n3": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.05}}}`,
	`{"type": "object", "properties": {"t1": {"type": ["null", "integer"]}, "t2": {"type": ["null"]}, "t3": {"type": []}, "t4": {"type": "foo"}, "t5": {"type": "boolean"}, "t6": {"type": "null"}, "t7": {"type": 5}}}`,
	`{"properties": {"x": {"items": {"type": "boolean"}}, "y": {}}}`,
	`{"type": "array", "minItems": 0, "maxItems": 0}`,
	`{"type": "array", "minItems": 5}`,
	`{"type": "array", "maxItems": 1, "items": {"type": "number"}}`,
	`{"type": "array", "minItems": 4, "maxItems": 2}`,
	`{"type": "array", "minItems": -1}`,
	`{"type": "object", "properties": {"d": {"type": "string", "format": "date"}, "dt": {"type": "string", "format": "date-time"}, "t": {"type": "string", "format": "time"}, "e": {"type": "string", "format": "email"}, "u": {"type": "string", "format": "uri"}, "id": {"type": "string", "format": "uuid"}, "p": {"type": "string", "format": "hostname"}, "f": {"type": "string", "format": 3}}}`,
	`{"type": "object", "properties": {"c": {"const": {"a": [1, "x"]}}, "e": {"enum": ["a", 2, null]}, "any": {"anyOf": [{"type": "integer"}, {"type": "null"}]}, "one": {"oneOf": ["x", {"type": "boolean"}]}, "all": {"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"$ref": "#/$defs/s"}}, "required": ["b"]}]}}, "$defs": {"s": {"type": "string"}}}`,
	`{"type": "object", "properties": "not a map", "required": "no"}`,
	`{"type": "object", "properties": {"a<b": {"type": "string"}, "é": {"type": "integer"}, "q\"": {"type": "null"}}}`,
	chainSchema(20),
	chainSchema(15),
}

// chainSchema is a chain of n $refs ending in an object.
func chainSchema(n int) string {
	var b strings.Builder
	b.WriteString(`{"$ref": "#/$defs/d0", "$defs": {`)
	for i := range n {
		fmt.Fprintf(&b, `"d%d": {"$ref": "#/$defs/d%d"}, `, i, i+1)
	}
	fmt.Fprintf(&b, `"d%d": {"type": "object", "properties": {"k": {"type": "integer"}}}}}`, n)
	return b.String()
}

// samePlan checks that a prepared schema generates what generateJSON does,
// drawing the same numbers, document after document.
func samePlan(t interface{ Fatalf(string, ...any) }, raw string, seed uint64, docs int) {
	root := decodeSchema([]byte(raw))
	sp := newSchemaPlan(raw, root)
	r1, r2 := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 1))
	for i := range docs {
		got, want := sp.generate(r1), generateJSON(root, r2)
		if got != want {
			t.Fatalf("schema %s, document %d:\n got %s\nwant %s", raw, i, got, want)
		}
	}
	if a, b := r1.Uint64(), r2.Uint64(); a != b {
		t.Fatalf("schema %s: the sources drew differently", raw)
	}
}

// TestSchemaPlan: a prepared schema generates what generateJSON does, for
// every shape and the test schemas, not valid JSON included.
func TestSchemaPlan(t *testing.T) {
	files, _ := filepath.Glob("testdata/schemas/*.json")
	schemas := append([]string{"not json", ""}, planSchemas...)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		schemas = append(schemas, string(raw))
	}
	for i, raw := range schemas {
		if raw != "not json" && raw != "" && !json.Valid([]byte(raw)) {
			t.Fatalf("schema %d is not JSON: %s", i, raw)
		}
		samePlan(t, raw, uint64(i), 50)
	}
}

// TestSchemaPlanRandom: the same for random nested schemas.
func TestSchemaPlanRandom(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		raw, _ := json.Marshal(randomSchema(rt, 0, false))
		samePlan(rt, string(raw), rapid.Uint64().Draw(rt, "seed"), 10)
	})
}

// randomSchema draws a schema. Only optional properties refer to the root:
// a required property or array items (of at least one) that recurse never
// end, in generateJSON as here. A leaf (depth > 3) is neither an object nor
// an array.
func randomSchema(rt *rapid.T, depth int, ref bool) map[string]any {
	kinds := []string{"ref", "object", "array", "string", "integer", "number", "boolean", "null", "enum", "none", "types"}
	if !ref {
		kinds = kinds[1:]
	}
	if depth > 3 {
		kinds = kinds[len(kinds)-9:]
	}
	s := map[string]any{}
	num := func(label string) any { return float64(rapid.IntRange(-20, 40).Draw(rt, label)) }
	maybe := func(label string, v func() any) {
		if rapid.Bool().Draw(rt, label+"?") {
			s[label] = v()
		}
	}
	switch k := rapid.SampledFrom(kinds).Draw(rt, "kind"); k {
	case "object":
		s["type"] = "object"
		props := map[string]any{}
		for i := range rapid.IntRange(0, 4).Draw(rt, "props") {
			if i == 1 {
				props["p1"] = randomSchema(rt, 4, false) // a leaf: p1 may be required
				continue
			}
			props[fmt.Sprint("p", i)] = randomSchema(rt, depth+1, true)
		}
		s["properties"] = props
		maybe("required", func() any { return []any{"p9", "p1", "p1"} })
	case "array":
		s["type"] = "array"
		maybe("minItems", func() any { return num("min") })
		maybe("maxItems", func() any { return num("max") })
		maybe("items", func() any { return randomSchema(rt, depth+1, false) })
	case "string":
		s["type"] = "string"
		maybe("minLength", func() any { return num("min") })
		maybe("maxLength", func() any { return float64(rapid.IntRange(0, 40).Draw(rt, "max")) })
		maybe("format", func() any { return rapid.SampledFrom([]string{"date", "uuid", "email", "other"}).Draw(rt, "format") })
	case "integer", "number":
		s["type"] = k
		for _, b := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
			maybe(b, func() any { return num(b) })
		}
	case "enum":
		s["enum"] = []any{"a", 1.0, true}
	case "ref":
		s["$ref"] = "#"
	case "types":
		s["type"] = []any{"null", rapid.SampledFrom([]string{"integer", "string", "array"}).Draw(rt, "t")}
	case "none":
	default:
		s["type"] = k
	}
	return s
}
