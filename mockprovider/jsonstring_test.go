package mockprovider

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWriteString: writeString writes what json.Marshal writes, on its fast
// path (printable ASCII) and off it.
func TestWriteString(t *testing.T) {
	for _, s := range []string{"", "plain", "two words", "a-b_c.d/e:f", `quo"te`, `back\slash`, "<b>", "a&b", "tab\there", "nl\n", "naïve", "\u2028", "\x7f", "\xff", "~"} {
		var b strings.Builder
		writeString(&b, s)
		want, _ := json.Marshal(s)
		if b.String() != string(want) {
			t.Errorf("writeString(%q) = %s, json.Marshal gives %s", s, b.String(), want)
		}
	}
}
