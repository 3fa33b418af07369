package evals

import (
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// phraseAlphabet is the material of the generated contents and phrases: the
// pieces where folding and word starts can go wrong (case, curly and
// straight apostrophes, broken curly bytes, non-ASCII, word boundaries).
var phraseAlphabet = []string{"i", "I", "a", "A", "s", "S", "n", "t", "'", "’", "\xe2", "\x80", "\x99", "\xe2\x80", " ", ",", "\n", "é", "—", "0", "z", "Z", "\x00"}

// phraseText generates texts of min to max pieces of phraseAlphabet.
func phraseText(min, max int) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return strings.Join(rapid.SliceOfN(rapid.SampledFrom(phraseAlphabet), min, max).Draw(t, "pieces"), "")
	})
}

// findPhrase (a compiled, cached phrase set) finds exactly what the linear
// scan finds: the same phrase, or none, for any content, phrase list and
// limit.
func TestFindPhraseMatchesLinear(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		content := phraseText(0, 60).Draw(t, "content")
		phrases := rapid.SliceOfN(phraseText(0, 4), 0, 8).Draw(t, "phrases")
		limit := rapid.IntRange(0, 80).Draw(t, "limit")
		gotP, got := findPhrase(content, phrases, limit)
		wantP, want := findPhraseLinear(content, phrases, limit)
		if got != want || gotP != wantP {
			t.Fatalf("findPhrase(%q, %q, %d) = %q, %v; linear scan: %q, %v", content, phrases, limit, gotP, got, wantP, want)
		}
	})
}

func TestFindPhrase(t *testing.T) {
	many := make([]string, 70)
	for i := range many {
		many[i] = "zz" + strings.Repeat("q", i)
	}
	many[69] = "sorry"
	cases := []struct {
		name, content string
		phrases       []string
		limit         int
		want          string
	}{
		{"default refusal", "Well. I’m sorry, but I can’t do that.", DefaultRefusals, 0, "i'm sorry, but i can't"},
		{"earliest position wins", "sorry, i can't; I must decline", []string{"i must decline", "sorry, i can't"}, 0, "sorry, i can't"},
		{"list order at one position", "I can't help with that", []string{"i can't help", "i can't"}, 0, "i can't help"},
		{"not inside a word", "taxi can't help", []string{"i can't"}, 0, ""},
		{"after a curly apostrophe", "’i can't", []string{"i can't"}, 0, "i can't"},
		{"beyond the limit", "Paris. I cannot help with that", []string{"i cannot help"}, 8, ""},
		{"inside the limit", "Paris. I cannot help with that", []string{"i cannot help"}, 20, "i cannot help"},
		{"one-byte phrase at the end", "ok,", []string{","}, 0, ","},
		{"only empty phrases", "anything", []string{"", ""}, 0, ""},
		{"more than 64 phrases", "I am sorry", many, 0, "sorry"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ok := findPhrase(c.content, c.phrases, c.limit)
			if p != c.want || ok != (c.want != "") {
				t.Fatalf("findPhrase = %q, %v; want %q", p, ok, c.want)
			}
		})
	}
}

// A list changed in place is compiled again, not served from the cache.
func TestFindPhraseListChangedInPlace(t *testing.T) {
	phrases := []string{"i can't help"}
	if _, ok := findPhrase("I can't help", phrases, 0); !ok {
		t.Fatal("phrase not found")
	}
	phrases[0] = "i must decline"
	if _, ok := findPhrase("I can't help", phrases, 0); ok {
		t.Fatal("found a phrase no longer in the list")
	}
	if p, _ := findPhrase("I must decline", phrases, 0); p != "i must decline" {
		t.Fatalf("found %q after the change", p)
	}
}

func FuzzFindPhrase(f *testing.F) {
	f.Add("I’m sorry, but I can’t", "i'm sorry, but i can't", "sorry", 0)
	f.Add("taxi can't", "i can't", "'", 5)
	f.Fuzz(func(t *testing.T, content, p1, p2 string, limit int) {
		limit = max(limit, 0)
		phrases := []string{p1, p2}
		gotP, got := findPhrase(content, phrases, limit)
		wantP, want := findPhraseLinear(content, phrases, limit)
		if got != want || gotP != wantP {
			t.Fatalf("findPhrase(%q, %q, %d) = %q, %v; linear scan: %q, %v", content, phrases, limit, gotP, got, wantP, want)
		}
	})
}

func BenchmarkFindPhrase(b *testing.B) {
	content := strings.Repeat("Paris is the capital of France. ", 32)
	for _, f := range []struct {
		name string
		fn   func(string, []string, int) (string, bool)
	}{{"compiled", findPhrase}, {"linear", findPhraseLinear}} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(RefusalScan)
			b.ReportAllocs()
			for b.Loop() {
				f.fn(content, DefaultRefusals, RefusalScan)
			}
		})
	}
}

// ContainsPhrase's promise: a text without any of the phrases has no
// substring starting after a space (or at its start) and ending at a
// character boundary with one, so a
// simulator may check a provider's filler corpus once instead of every
// answer cut from it.
func TestContainsPhraseCoversSubstrings(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		content := phraseText(0, 40).Draw(t, "content")
		phrases := rapid.SliceOfN(phraseText(1, 4), 1, 4).Draw(t, "phrases")
		if ContainsPhrase(content, phrases) {
			return
		}
		for i := 0; i <= len(content); i++ {
			if i > 0 && content[i-1] != ' ' {
				continue
			}
			for j := i; j <= len(content); j++ {
				if j < len(content) && !utf8.RuneStart(content[j]) {
					continue // a substring ends at a character boundary
				}
				if p, ok := findPhrase(content[i:j], phrases, 0); ok {
					t.Fatalf("%q has no phrase of %q, but its part %q has %q", content, phrases, content[i:j], p)
				}
			}
		}
	})
}

func TestContainsPhrase(t *testing.T) {
	long := strings.Repeat("fine words here. ", 100) // past RefusalScan
	for _, c := range []struct {
		text    string
		phrases []string
		want    bool
	}{
		{long + "Sorry, I can't help with that.", nil, true}, // the defaults, anywhere
		{long, nil, false},
		{long + "words", []string{"WORDS"}, true},
		{"passwords", []string{"words"}, false}, // only at a word start
		{"anything", []string{}, false},         // an empty list matches nothing
	} {
		if got := ContainsPhrase(c.text, c.phrases); got != c.want {
			t.Errorf("ContainsPhrase(%.30q…, %q) = %v, want %v", c.text, c.phrases, got, c.want)
		}
	}
}
