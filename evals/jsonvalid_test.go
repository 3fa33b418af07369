package evals

import (
	"encoding/json"
	"strings"
	"testing"
)

var jsonSamples = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `-0.5e+10`, `1E5`, `12.25`, `"x"`, `"\u00e9\n\"\\\/"`,
	` {"a": [1, 2, {"b": null}], "c": "d"} `, "\t[\r\n]\n", `{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{a: 1}`,
	`01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `"unterminated`, `"bad \x escape"`, `"\u12G4"`, "\"ctrl \x01\"",
	`tru`, `nul`, `{"a":1}}`, `{"a":1} {"b":2}`, `[`, `{`, `"`, ``, ` `, `[[[[]]]]`, `{"a":{"b":{"c":[]}}}`,
	"\"\xff invalid utf8\"", `"\ud800"`, `{"":""}`, `[-1.5e-3, 0e0, 0.0]`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 9999) + strings.Repeat("]", 9999),
}

func TestValidJSONTextMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonSamples {
		if got, want := validJSONText(s), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSONText(%.40q) = %v, json.Valid = %v", s, got, want)
		}
	}
}

func FuzzValidJSONText(f *testing.F) {
	for _, s := range jsonSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validJSONText(s), json.Valid([]byte(s)); got != want {
			t.Fatalf("validJSONText(%q) = %v, json.Valid = %v", s, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	doc := `{"items": [` + strings.Repeat(`{"name": "widget \"x\"", "qty": 3, "price": 9.5, "ok": true},`, 40) + `{}]}`
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			json.Valid([]byte(doc))
		}
	})
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			validJSONText(doc)
		}
	})
}
