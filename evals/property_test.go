package evals

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/brownout-dev/brownout/llm"
)

// findPhrase agrees with a plain reference: lowercase the scanned prefix,
// read curly apostrophes as straight ones, and look for the phrase at a word
// start.
func TestFindPhraseMatchesReference(t *testing.T) {
	words := []string{"i", "I", "can't", "can’t", "cannot", "help", "with", "sorry,", "but", "Paris", "is", "the", "as", "an", "ai", "AI", "language", "model", "x", "icant", "helpwith", "\n", "—"}
	rapid.Check(t, func(t *rapid.T) {
		content := strings.Join(rapid.SliceOfN(rapid.SampledFrom(words), 0, 40).Draw(t, "content"), " ")
		phrase := strings.Join(rapid.SliceOfN(rapid.SampledFrom([]string{"i", "can't", "help", "with", "as", "an", "ai", "sorry,", "but"}), 1, 4).Draw(t, "phrase"), " ")
		_, got := findPhrase(content, []string{phrase}, 0)
		want := referenceFind(content, phrase)
		if got != want {
			t.Fatalf("findPhrase(%q, %q) = %v, want %v", content, phrase, got, want)
		}
	})
}

func referenceFind(content, phrase string) bool {
	s := strings.ToLower(strings.ReplaceAll(content, "’", "'"))
	// ToLower may change non-ASCII; the content here is ASCII apart from ’ and —.
	for i := 0; i+len(phrase) <= len(s); i++ {
		if s[i:i+len(phrase)] != phrase {
			continue
		}
		if i == 0 || !isWordByte(s[i-1]) || !isWordByte(s[i]) {
			return true
		}
	}
	return false
}

// Observe never panics and its counts stay within the response's.
func TestObserveProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := &llm.Response{
			Content:      rapid.String().Draw(t, "content"),
			Refusal:      rapid.SampledFrom([]string{"", "no"}).Draw(t, "refusal"),
			FinishReason: rapid.SampledFrom([]llm.FinishReason{"", llm.FinishStop, llm.FinishLength, llm.FinishContentFilter}).Draw(t, "finish"),
			Usage:        llm.Usage{OutputTokens: rapid.IntRange(0, 5000).Draw(t, "tokens")},
		}
		for _, a := range rapid.SliceOfN(rapid.String(), 0, 3).Draw(t, "args") {
			r.ToolCalls = append(r.ToolCalls, llm.ToolCall{Name: "f", Arguments: a})
		}
		structured := rapid.Bool().Draw(t, "structured")
		o := Observe(r, structured, nil)
		if o.ToolCalls != len(r.ToolCalls) || o.EmptyToolArgs > o.ToolCalls {
			t.Fatalf("tool counts %d/%d for %d calls", o.EmptyToolArgs, o.ToolCalls, len(r.ToolCalls))
		}
		if o.JSONValid && !structured {
			t.Fatal("JSONValid set on an unstructured response")
		}
		if r.Refusal != "" && !o.Refusal {
			t.Fatal("provider refusal not observed")
		}
		if o.JSONValid != (structured && JSONValid().Run(r).Pass) {
			t.Fatalf("Observe and the json_valid check disagree on %q", r.Content)
		}
	})
}

func FuzzParseSuite(f *testing.F) {
	f.Add([]byte("version: 1\nname: s\nroute: r\ncases:\n  - name: a\n    prompt: hi\n    checks: [{type: json_valid}]\n"))
	f.Add([]byte("version: 1\nname: s\ncases:\n  - name: a\n    route: r\n    prompts: [x, y]\n    response_format: {type: json_schema, name: n, schema: {type: object}}\n    checks: [{type: json_schema}, {type: length, max_chars: 3}]\n"))
	f.Add([]byte("cases: [{checks: [{type: regex, pattern: '('}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSuite("fuzz.yaml", data)
		if err == nil && len(s.Cases) == 0 {
			t.Fatal("a suite without cases was accepted")
		}
	})
}
