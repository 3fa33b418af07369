package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// encodingJSON is the reference: encoding/json with or without HTML escaping.
func encodingJSON(s string, html bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s)
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func TestAppendMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote \" backslash \\", "nl\ncr\rtab\t", "\b\f\x00\x1f", "<a href='x'>&</a>", "héllo ✓ 日本", "\u2028\u2029", "bad \xff utf8", "\xe2\x82"} {
		for _, html := range []bool{false, true} {
			got := string(Append(nil, s, html))
			if want := encodingJSON(s, html); got != want {
				t.Errorf("Append(%q, html=%v) = %s, want %s", s, html, got, want)
			}
		}
	}
}

func FuzzAppend(f *testing.F) {
	f.Add("hello <b>\"world\"</b>\n", true)
	f.Add("\xff\u2028", false)
	f.Fuzz(func(t *testing.T, s string, html bool) {
		if got, want := string(Append(nil, s, html)), encodingJSON(s, html); got != want {
			t.Fatalf("Append(%q, %v) = %s, want %s", s, html, got, want)
		}
	})
}
