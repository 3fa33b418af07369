package mockprovider

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// extremeSchemas are schemas at the edges of what JSON can say: bounds near
// and past int64's and float64's limits, counts no document can hold, and
// required properties that refer to their own object.
var extremeSchemas = []string{
	`{"type": "integer", "minimum": -5e18, "maximum": 5e18}`,
	`{"type": "integer", "minimum": -9.3e18, "maximum": 9.3e18}`,
	`{"type": "integer", "minimum": -1e300, "maximum": 1e300}`,
	`{"type": "integer", "minimum": 9.2e18}`,
	`{"type": "integer", "maximum": -9.2e18}`,
	`{"type": "integer", "exclusiveMinimum": 9.223372036854775807e18}`,
	`{"type": "integer", "minimum": -5e18, "maximum": 5e18, "multipleOf": 4e18}`,
	`{"type": "integer", "minimum": 1, "maximum": 2, "multipleOf": 1e30}`,
	`{"type": "number", "minimum": -1.7976931348623157e308, "maximum": 1.7976931348623157e308}`,
	`{"type": "number", "minimum": 1e300}`,
	`{"type": "number", "exclusiveMaximum": -1e308}`,
	`{"type": "array", "minItems": 1e18}`,
	`{"type": "array", "minItems": 1e300, "maxItems": 1e300, "items": {"type": "array", "minItems": 100}}`,
	`{"type": "string", "minLength": 1e18}`,
	`{"type": "string", "maxLength": 1e300}`,
	`{"type": "object", "properties": {"self": {"$ref": "#"}}, "required": ["self"]}`,
	`{"type": "object", "properties": {"a": {"$ref": "#"}, "b": {"$ref": "#"}}, "required": ["a", "b"]}`,
	`{"type": "array", "items": {"$ref": "#"}, "minItems": 3}`,
	`{"type": "object", "properties": {"a": {"$ref": "#"}, "b": {"$ref": "#"}, "c": {"$ref": "#"}, "d": {"$ref": "#"}}}`,
}

// TestSchemaExtremes: extreme schemas give a bounded document, valid JSON,
// the same from the prepared schema as from generateJSON; integers and
// numbers stay within their bounds.
func TestSchemaExtremes(t *testing.T) {
	for i, raw := range extremeSchemas {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			doc := checkSchema(t, raw, uint64(i))
			root := decodeSchema([]byte(raw))
			switch typeOf(root) {
			case "integer", "number":
				lo, hi := bounds(root, 0.01)
				if typeOf(root) == "integer" {
					ilo, ihi := intRange(bounds(root, 1))
					lo, hi = float64(ilo), float64(ihi)
				}
				var v float64
				if err := json.Unmarshal([]byte(doc), &v); err != nil {
					t.Fatalf("%s: %v", doc, err)
				}
				if _, ok := root["multipleOf"]; !ok && (v < lo || v > hi) {
					t.Fatalf("%s: %v is outside [%v, %v]", raw, v, lo, hi)
				}
			}
		})
	}
}

// TestDrawInt: the whole int64 range, a range of one, and multiples.
func TestDrawInt(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ lo, hi, mult int64 }{
		{math.MinInt64, math.MaxInt64, 0},
		{math.MinInt64, math.MaxInt64, 3},
		{-5e18, 5e18, 0},
		{7, 7, 0},
		{-7, -5, 3},
		{math.MaxInt64 - 2, math.MaxInt64, 4},
		{math.MinInt64, math.MinInt64 + 2, 4},
	} {
		for range 100 {
			v := drawInt(r, c.lo, c.hi, c.mult)
			if v < c.lo || v > c.hi {
				t.Fatalf("drawInt(%d, %d, %d) = %d", c.lo, c.hi, c.mult, v)
			}
			// A multiple exists in every range here but the one at int64's top.
			if c.mult > 0 && v%c.mult != 0 && c.lo != math.MaxInt64-2 {
				t.Fatalf("drawInt(%d, %d, %d) = %d: not a multiple", c.lo, c.hi, c.mult, v)
			}
		}
	}
}

// checkSchema generates documents from raw both ways and checks them.
func checkSchema(t testing.TB, raw string, seed uint64) string {
	t.Helper()
	root := decodeSchema([]byte(raw))
	sp := newSchemaPlan(raw, root)
	r1, r2 := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 1))
	var doc string
	for i := range 3 {
		got, want := sp.generate(r1), generateJSON(root, r2)
		if got != want {
			t.Fatalf("schema %s, document %d:\n got %s\nwant %s", raw, i, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Fatalf("schema %s: not JSON: %s", raw, got)
		}
		if len(got) > 4<<20 {
			t.Fatalf("schema %s: a document of %d bytes", raw, len(got))
		}
		doc = got
	}
	return doc
}

// FuzzSchemaPlan: any schema a client may send generates valid JSON of
// bounded size without panicking, the same from the prepared schema as
// from generateJSON.
func FuzzSchemaPlan(f *testing.F) {
	for _, s := range append(append([]string{"", "not json", "[]", "null"}, planSchemas...), extremeSchemas...) {
		f.Add(s, uint64(1))
	}
	files, _ := filepath.Glob("testdata/schemas/*.json")
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(raw), uint64(2))
	}
	f.Fuzz(func(t *testing.T, raw string, seed uint64) {
		checkSchema(t, raw, seed)
	})
}
