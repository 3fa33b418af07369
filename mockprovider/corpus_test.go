package mockprovider

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TestCorpus: the corpus is filler made of sentences that each begin on a
// token boundary, its tokens are Tokenize(text), and it depends on the seed
// only.
func TestCorpus(t *testing.T) {
	c := newCorpus(3, 4096)
	if len(c.text) < 4096*faults.BytesPerToken || len(c.text) != len(c.tokens)*faults.BytesPerToken {
		t.Fatalf("%d bytes, %d tokens", len(c.text), len(c.tokens))
	}
	if !slices.Equal(c.tokens, faults.Tokenize(c.text, nil)) {
		t.Fatal("tokens are not Tokenize(text)")
	}
	sentences := strings.SplitAfter(strings.TrimSuffix(c.text, " "), ". ")
	if len(sentences) != len(c.starts) {
		t.Fatalf("%d sentences, %d starts", len(sentences), len(c.starts))
	}
	at := 0
	for i, s := range sentences {
		if int(c.starts[i])*faults.BytesPerToken != at {
			t.Fatalf("sentence %d at byte %d, start %d", i, at, c.starts[i])
		}
		if s[0] < 'A' || s[0] > 'Z' || !strings.HasSuffix(strings.TrimSuffix(s, " "), ".") {
			t.Fatalf("sentence %d is %q", i, s)
		}
		if words := len(strings.Fields(s)); words < 8 || words > 15 {
			t.Fatalf("sentence %d has %d words: %q", i, words, s)
		}
		at += len(s)
	}
	if again := newCorpus(3, 4096); again.text != c.text {
		t.Fatal("the same seed gave another corpus")
	}
	if other := newCorpus(4, 4096); other.text == c.text {
		t.Fatal("another seed gave the same corpus")
	}
}

// TestCorpusWindow: a window is n tokens of the corpus beginning with a
// sentence, its chunks are its tokens capped at their length, and windows
// longer than half the corpus are refused.
func TestCorpusWindow(t *testing.T) {
	c := newCorpus(5, 4096)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 40, 160, 2048} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			seen := map[string]bool{}
			for range 50 {
				text, chunks, ok := c.window(r, n)
				if !ok || len(chunks) != n || cap(chunks) != n || len(text) != n*faults.BytesPerToken {
					t.Fatalf("ok %v, %d chunks (cap %d), %d bytes", ok, len(chunks), cap(chunks), len(text))
				}
				if strings.Join(chunks, "") != text || !strings.Contains(c.text, text) {
					t.Fatalf("chunks %q are not the window %q", chunks, text)
				}
				if text[0] < 'A' || text[0] > 'Z' {
					t.Fatalf("window %q does not begin a sentence", text)
				}
				seen[text] = true
			}
			if n < 2048 && len(seen) < 20 {
				t.Fatalf("%d distinct windows of 50", len(seen))
			}
		})
	}
	if _, _, ok := c.window(r, len(c.tokens)/2+1); ok {
		t.Fatal("a window longer than half the corpus")
	}
}

// faultSpecs has one spec per fault kind that transforms a filler answer.
var faultSpecs = map[faults.Kind]faults.Spec{
	faults.KindAuthFailure:          {Kind: faults.KindAuthFailure},
	faults.KindRejectParam:          {Kind: faults.KindRejectParam},
	faults.KindContextLength:        {Kind: faults.KindContextLength},
	faults.KindHTTPError:            {Kind: faults.KindHTTPError, Status: 529, After: intp(3)},
	faults.KindReset:                {Kind: faults.KindReset},
	faults.KindNoResponse:           {Kind: faults.KindNoResponse, For: yamlfile.Duration(time.Second)},
	faults.KindRefusal:              {Kind: faults.KindRefusal},
	faults.KindContentFilter:        {Kind: faults.KindContentFilter, After: intp(5)},
	faults.KindQualityDrop:          {Kind: faults.KindQualityDrop},
	faults.KindMalformedJSONContent: {Kind: faults.KindMalformedJSONContent},
	faults.KindEmptyToolArgs:        {Kind: faults.KindEmptyToolArgs},
	faults.KindTruncate:             {Kind: faults.KindTruncate},
	faults.KindTokenRate:            {Kind: faults.KindTokenRate, Rate: 10, Jitter: 0.5},
	faults.KindTTFT:                 {Kind: faults.KindTTFT, Delay: ptr(faults.Fixed(time.Second))},
	faults.KindSlowHeaders:          {Kind: faults.KindSlowHeaders, Delay: ptr(faults.Fixed(time.Second))},
	faults.KindStall:                {Kind: faults.KindStall, For: yamlfile.Duration(time.Second)},
	faults.KindCut:                  {Kind: faults.KindCut},
	faults.KindMalformedChunk:       {Kind: faults.KindMalformedChunk},
	faults.KindMissingDone:          {Kind: faults.KindMissingDone},
}

func ptr[T any](v T) *T { return &v }
func intp(v int) *int   { return &v }

// TestFaultsKeepCorpus: plans of filler answers share the corpus's tokens;
// no fault kind (nor an append to a plan's chunks) writes into them, and
// every plan's chunks still spell its content.
func TestFaultsKeepCorpus(t *testing.T) {
	for _, k := range faults.Kinds() {
		t.Run(string(k), func(t *testing.T) {
			fs, ok := faultSpecs[k]
			if !ok {
				t.Fatalf("no spec for fault kind %s: add one to faultSpecs", k)
			}
			s := ProviderSpec{Name: "p", Format: llm.FormatOpenAI, Seed: 9, Faults: []faults.Spec{fs},
				Models: []ModelSpec{{Name: "m", OutputTokens: Length{Min: 1, Max: 300}, TokensPerSecond: 50, Jitter: 0.2}}}
			m, err := NewModel(s, nil)
			if err != nil {
				t.Fatal(err)
			}
			req := func(i int) *llm.Request {
				r := &llm.Request{Model: "m", Stream: i%2 == 0, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}}}
				if i%3 == 0 {
					r.MaxTokens = 50
				}
				return r
			}
			// Make the corpus, then snapshot it.
			m.Finish(t0, m.Plan(t0, req(1), Meta{}))
			text, tokens := m.corpus.text, slices.Clone(m.corpus.tokens)
			for i := range 200 {
				p := m.Plan(t0, req(i), Meta{})
				if !p.Terminal() && strings.Join(p.Chunks, "") != p.Response.Content {
					t.Fatalf("plan %d: chunks do not spell the content", i)
				}
				p.Chunks = append(p.Chunks, "XXXX") // a careless writer
				m.Finish(t0, p)
			}
			if m.corpus.text != text || !slices.Equal(m.corpus.tokens, tokens) {
				t.Fatal("the corpus changed")
			}
		})
	}
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestPlanFiller: a filler answer records the corpus window it was cut from
// (a substring of FillerCorpus at the corpus's start or after a space);
// other answers record none, and a fault that rewrites the content leaves
// it different from the window.
func TestPlanFiller(t *testing.T) {
	spec := func(fs ...faults.Spec) ProviderSpec {
		return ProviderSpec{Name: "p", Format: llm.FormatOpenAI, Seed: 4, Faults: fs,
			Models: []ModelSpec{{Name: "m", OutputTokens: Length{Min: 20, Max: 200}}}}
	}
	user := []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}}
	m, err := NewModel(spec(), nil)
	if err != nil {
		t.Fatal(err)
	}
	corpus := m.FillerCorpus()
	for i := range 100 {
		p := m.Plan(t0, &llm.Request{Model: "m", Messages: user, MaxTokens: 30 + i}, Meta{})
		k := strings.Index(corpus, p.Filler)
		if p.Filler == "" || p.Response.Content != p.Filler || k < 0 || (k > 0 && corpus[k-1] != ' ') {
			t.Fatalf("plan %d: Filler %q at %d, content %q", i, p.Filler, k, p.Response.Content)
		}
		m.Finish(t0, p)
	}
	p := m.Plan(t0, &llm.Request{Model: "m", Messages: user, ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONObject}}, Meta{})
	if p.Filler != "" {
		t.Fatalf("a JSON answer records Filler %q", p.Filler)
	}
	m, err = NewModel(spec(faults.Spec{Kind: faults.KindRefusal}), nil)
	if err != nil {
		t.Fatal(err)
	}
	p = m.Plan(t0, &llm.Request{Model: "m", Messages: user}, Meta{})
	if p.Filler == "" || p.Response.Content == p.Filler {
		t.Fatalf("refusal fault: content %q, Filler %q", p.Response.Content, p.Filler)
	}
}

// TestCorpusFits: the cached count of starts a window can begin at is the
// plain count, for every length, whether cached or not, and windows drawn
// with the cache are the plain draws.
func TestCorpusFits(t *testing.T) {
	c := newCorpus(9, 1<<12)
	for n := 1; n <= len(c.tokens)/2; n++ {
		want := 0
		for _, s := range c.starts {
			if int(s)+n <= len(c.tokens) {
				want++
			}
		}
		if got := c.fitting(n); got != want {
			t.Fatalf("n=%d: %d starts, want %d", n, got, want)
		}
	}
	r1, r2 := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		n := 1 + r1.IntN(len(c.tokens)/2)
		r2.IntN(len(c.tokens) / 2)
		text, _, _ := c.window(r1, n)
		s := int(c.starts[r2.IntN(c.fitting(n))])
		if want := c.text[s*faults.BytesPerToken : (s+n)*faults.BytesPerToken]; text != want {
			t.Fatalf("n=%d: window %q, want %q", n, text, want)
		}
	}
}
