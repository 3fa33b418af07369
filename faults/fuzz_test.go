package faults_test

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "a", "hello world", "héllo", "日本語テキスト", "a\x80b", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := faults.Tokenize(s, nil)
		if strings.Join(toks, "") != s {
			t.Fatalf("tokens of %q do not join back: %q", s, toks)
		}
		if len(toks) != faults.CountTokens(s) {
			t.Fatalf("count %d, tokens %d", faults.CountTokens(s), len(toks))
		}
		for _, tok := range toks {
			if tok == "" || (len(tok) > faults.BytesPerToken && utf8.RuneCountInString(tok) > 1) {
				t.Fatalf("bad token %q in %q", tok, toks)
			}
		}
	})
}

// genSpec draws a valid fault spec of any kind.
func genSpec(t *rapid.T) faults.Spec {
	kind := rapid.SampledFrom(faults.Kinds()).Draw(t, "kind")
	s := faults.Spec{Kind: kind}
	n := rapid.IntRange(0, 60).Draw(t, "n")
	d := yamlfile.Duration(rapid.Int64Range(1, int64(10*time.Second)).Draw(t, "d"))
	lat := faults.Fixed(d.D())
	switch kind {
	case faults.KindHTTPError:
		s.Status = rapid.SampledFrom([]int{429, 500, 502, 503, 529}).Draw(t, "status")
		if rapid.Bool().Draw(t, "in-band") {
			s.After = &n
		}
	case faults.KindNoResponse:
		s.For = d
	case faults.KindSlowHeaders:
		s.Delay = &lat
	case faults.KindTTFT:
		s.Delay = &lat
		s.Mode = rapid.SampledFrom([]string{"add", "set"}).Draw(t, "mode")
	case faults.KindTokenRate:
		s.Rate = rapid.Float64Range(0.5, 500).Draw(t, "rate")
	case faults.KindStall:
		s.After, s.For, s.Close = &n, d, rapid.Bool().Draw(t, "close")
	case faults.KindCut:
		s.After = &n
	case faults.KindTruncate, faults.KindMalformedChunk:
		if rapid.Bool().Draw(t, "explicit") {
			s.At = &n
		}
	case faults.KindContentFilter:
		s.After = &n
	}
	return s
}

// TestPlanInvariants applies random stacks of faults to random plans and
// checks what every executor relies on.
func TestPlanInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tokens := rapid.IntRange(0, 80).Draw(t, "tokens")
		p := plan(tokens)
		p.Stream = rapid.Bool().Draw(t, "stream")
		// shared chunks are a window of a longer tokenized text, as the
		// mock model's filler answers are (faults.Plan: Chunks is read-only).
		var shared, sharedCopy []string
		if rapid.Bool().Draw(t, "shared") {
			shared = faults.Tokenize(strings.Repeat("Some filler text. ", 30), nil)
			sharedCopy = append([]string(nil), shared...)
			i := rapid.IntRange(0, len(shared)).Draw(t, "from")
			j := i + rapid.IntRange(0, len(shared)-i).Draw(t, "len")
			p.SetTokenized(strings.Join(shared[i:j], ""), shared[i:j:j])
		} else if rapid.Bool().Draw(t, "tool") {
			p.SetToolCalls([]llm.ToolCall{{ID: "call_1", Name: "f", Arguments: `{"city":"Paris","days":3}`}})
		}
		defer func() {
			p.Chunks = append(p.Chunks, "XXXX") // a careless writer
			if !slices.Equal(shared, sharedCopy) {
				t.Fatalf("the shared chunks changed")
			}
		}()
		var set faults.Set
		for i, k := 0, rapid.IntRange(1, 4).Draw(t, "faults"); i < k; i++ {
			if _, err := set.Add(t0, genSpec(t)); err != nil {
				t.Fatalf("generated an invalid spec: %v", err)
			}
		}
		e := env(llm.FormatOpenAI)
		e.Request.Tools = []llm.Tool{{Name: "f"}}
		e.Request.ResponseFormat = &llm.ResponseFormat{Type: llm.ResponseJSONObject}
		set.Apply(t0, p, e)
		if p.Terminal() {
			if p.Status >= 400 && p.Err == nil {
				t.Fatalf("error status %d without an error", p.Status)
			}
			return
		}
		if len(p.Chunks) != len(p.TokenTimes) || p.Response.Usage.OutputTokens != len(p.Chunks) {
			t.Fatalf("%d chunks, %d times, usage %d", len(p.Chunks), len(p.TokenTimes), p.Response.Usage.OutputTokens)
		}
		for i := 1; i < len(p.TokenTimes); i++ {
			if p.TokenTimes[i] < p.TokenTimes[i-1] {
				t.Fatalf("token %d due before token %d: %v", i, i-1, p.TokenTimes)
			}
		}
		if len(p.TokenTimes) > 0 && (p.TokenTimes[0] < p.TTFT || p.TokenTimes[0] < p.HeaderDelay) {
			t.Fatalf("first token at %v before TTFT %v / headers %v", p.TokenTimes[0], p.TTFT, p.HeaderDelay)
		}
		if len(p.ToolStart) != len(p.Response.ToolCalls) {
			t.Fatalf("%d tool starts for %d calls", len(p.ToolStart), len(p.Response.ToolCalls))
		}
		text, start := "", len(p.Chunks)
		if len(p.ToolStart) > 0 {
			start = p.ToolStart[0]
		}
		for _, c := range p.Chunks[:start] {
			text += c
		}
		if text != p.Response.Content {
			t.Fatalf("chunks spell %q, content is %q", text, p.Response.Content)
		}
		for k, s := range p.ToolStart {
			end := len(p.Chunks)
			if k+1 < len(p.ToolStart) {
				end = p.ToolStart[k+1]
			}
			if got := strings.Join(p.Chunks[s:end], ""); got != p.Response.ToolCalls[k].Arguments {
				t.Fatalf("call %d: chunks spell %q, arguments %q", k, got, p.Response.ToolCalls[k].Arguments)
			}
		}
		if p.InBandErr != nil && (!p.Stream || p.InBandAfter > len(p.Chunks)) {
			t.Fatalf("in-band error after %d of %d tokens (stream %v)", p.InBandAfter, len(p.Chunks), p.Stream)
		}
		if p.End() < p.HeaderDelay {
			t.Fatalf("end %v before headers %v", p.End(), p.HeaderDelay)
		}
	})
}

// TestCountTokensIsTokenize: CountTokens, which skips ASCII eight bytes at
// a time, counts the tokens Tokenize makes, for text mixing ASCII runs of
// every length with multi-byte and invalid UTF-8.
func TestCountTokensIsTokenize(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var b strings.Builder
		for range rapid.IntRange(0, 12).Draw(rt, "pieces") {
			switch rapid.IntRange(0, 3).Draw(rt, "piece") {
			case 0:
				b.WriteString(strings.Repeat("a", rapid.IntRange(0, 20).Draw(rt, "ascii")))
			case 1:
				b.WriteString(rapid.SampledFrom([]string{"é", "日本", "’", "😀"}).Draw(rt, "utf8"))
			case 2:
				b.WriteByte(0x80 | byte(rapid.IntRange(0, 127).Draw(rt, "invalid")))
			default:
				b.WriteString(rapid.String().Draw(rt, "any"))
			}
		}
		s := b.String()
		if got, want := faults.CountTokens(s), len(faults.Tokenize(s, nil)); got != want {
			rt.Fatalf("CountTokens(%q) = %d, Tokenize makes %d", s, got, want)
		}
	})
}
