package lifecycle

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/brownout-dev/brownout/llm"
)

// feed runs a fall-back's text deltas through a continuation and returns
// what the client received after sent, or the error.
func feed(t require.TestingT, mode Mode, sent string, deltas []string) (string, *Continuation, error) {
	c, err := NewContinuation(mode, sent, nil)
	require.NoError(t, err)
	var out strings.Builder
	for _, d := range deltas {
		s, err := c.Text(d)
		if err != nil {
			return "", c, err
		}
		checkPieces(t, c, s)
		out.WriteString(s)
	}
	s, err := c.End()
	if err != nil {
		return "", c, err
	}
	checkPieces(t, c, s)
	out.WriteString(s)
	return out.String(), c, nil
}

// checkPieces holds Pieces to the text the last call returned: its
// deltas, in order, nothing lost or repeated.
func checkPieces(t require.TestingT, c *Continuation, s string) {
	if ps := c.Pieces(); ps != nil {
		require.Equal(t, s, strings.Join(ps, ""), "the pieces are the text forwarded")
		for _, p := range ps {
			require.NotEmpty(t, p)
		}
	}
}

func TestContinuationText(t *testing.T) {
	const sent = "The cat sat on"
	tests := []struct {
		name    string
		mode    Mode
		sent    string
		deltas  []string
		want    string // what follows sent at the client
		how     string
		skipped int
		at      int  // divergence offset, when how is Failed
		join    Join // the join check's verdict, when how is Failed
	}{
		{name: "continues", mode: Prefill, sent: sent, deltas: []string{" the", " mat."}, want: " the mat.", how: Continued},
		{name: "continues mid-word", mode: Prefill, sent: "The cat sa", deltas: []string{"t on", " the mat."}, want: "t on the mat.", how: Continued},
		{name: "restart: overlap skipped", mode: Prefill, sent: sent, deltas: []string{"The cat sat on the mat."}, want: " the mat.", how: Continued, skipped: len(sent)},
		{name: "restart split over deltas", mode: Prefill, sent: sent, deltas: []string{"Th", "e c", "at s", "at", " on", " the", " mat."}, want: " the mat.", how: Continued, skipped: len(sent)},
		{name: "restart ends inside a delta", mode: Prefill, sent: sent, deltas: []string{"The cat ", "sat on the", " mat."}, want: " the mat.", how: Continued, skipped: len(sent)},
		{name: "restart with leading whitespace", mode: Prefill, sent: sent, deltas: []string{"\n\n", "The cat sat on the mat."}, want: " the mat.", how: Continued, skipped: 2 + len(sent)},
		{name: "restart of an answer that began with whitespace", mode: Prefill, sent: "\n" + sent, deltas: []string{"The cat sat on the mat."}, want: " the mat.", how: Continued, skipped: len(sent)},
		{name: "restart that diverges", mode: Prefill, sent: sent, deltas: []string{"The cat sat", " under the table."}, how: Failed, at: len("The cat sat ")},
		{name: "restart that diverges on whitespace", mode: Prefill, sent: sent, deltas: []string{"The  cat sat on the mat."}, how: Failed, at: len("The ")},
		{name: "restart that stops short", mode: Prefill, sent: sent, deltas: []string{"The cat"}, how: Failed, at: len("The cat")},
		{name: "a coincidence under four bytes is a continuation", mode: Prefill, sent: "The cat sat. ", deltas: []string{"Th", "ere it stayed."}, want: "There it stayed.", how: Continued},
		{name: "a fresh answer glued onto the cut word", mode: Prefill, sent: sent, deltas: []string{"Th", "ere it stayed."}, how: Failed, join: JoinGlued},
		{name: "an opener after a sentence", mode: Prefill, sent: "The cat sat. ", deltas: []string{"Sure", "! The mat."}, how: Failed, join: JoinOpener},
		{name: "a capital after a mid-sentence cut", mode: Prefill, sent: "The cat sat on ", deltas: []string{"Every", " cat sits."}, how: Failed, join: JoinCapital},
		{name: "a name the text already uses continues", mode: Prefill, sent: "The cat from Paris sat. It loved ", deltas: []string{"Paris", " most."}, want: "Paris most.", how: Continued},
		{name: "the start repeated after a preamble", mode: Prefill, sent: sent, deltas: []string{"\n\nHere you go: The cat sat on the mat."}, how: Failed, join: JoinRepeat},
		{name: "continuation starting with whitespace", mode: Prefill, sent: sent, deltas: []string{" ", " the mat."}, want: "  the mat.", how: Continued},
		{name: "the space the prefill ended with, written again", mode: Prefill, sent: sent + " ", deltas: []string{" the", " mat."}, want: "the mat.", how: Continued, skipped: 1},
		{name: "the blank line the prefill ended with, written again", mode: Prefill, sent: "# Guide\n\nIntro:\n\n", deltas: []string{"\n\n", "## Setup"}, want: "## Setup", how: Continued, skipped: 2},
		{name: "empty continuation", mode: Prefill, sent: sent, deltas: nil, want: "", how: Continued},
		{name: "nothing was sent", mode: Prefill, sent: "  ", deltas: []string{"Hello"}, want: "Hello", how: Continued},
		{name: "short committed text repeated", mode: Prefill, sent: "Hi", deltas: []string{"Hi there"}, want: " there", how: Continued, skipped: 2},
		{name: "short committed text: a one-byte coincidence continues", mode: Prefill, sent: "Hi.", deltas: []string{" H", "ow are you?"}, want: " How are you?", how: Continued},
		{name: "short committed text: a glued capital diverges", mode: Prefill, sent: "Hi", deltas: []string{"H", "ow are you?"}, how: Failed, join: JoinGlued},
		{name: "short committed text, restart diverges", mode: Prefill, sent: "Hi", deltas: []string{"Hi", "!"}, want: "!", how: Continued, skipped: 2},
		{name: "replay matches", mode: Replay, sent: sent, deltas: []string{"The cat", " sat on the mat."}, want: " the mat.", how: Replayed, skipped: len(sent)},
		{name: "replay with other leading whitespace", mode: Replay, sent: " " + sent, deltas: []string{"\n", "The cat sat on", " the mat."}, want: " the mat.", how: Replayed, skipped: 1 + len(sent)},
		{name: "replay diverges", mode: Replay, sent: sent, deltas: []string{"A cat sat on the mat."}, how: Failed, at: 0},
		{name: "replay diverges late", mode: Replay, sent: sent, deltas: []string{"The cat sat in the hat."}, how: Failed, at: len("The cat sat ")},
		{name: "replay shorter than what was sent", mode: Replay, sent: sent, deltas: []string{"The cat sat"}, how: Failed, at: len("The cat sat")},
		{name: "replay of nothing", mode: Replay, sent: "", deltas: []string{"Hello"}, want: "Hello", how: Replayed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, c, err := feed(t, tt.mode, tt.sent, tt.deltas)
			require.Equal(t, tt.how, c.Completion())
			if tt.how == Failed {
				require.ErrorIs(t, err, ErrDiverged)
				var de *DivergedError
				require.True(t, errors.As(err, &de))
				require.Equal(t, tt.at, de.At, "divergence offset")
				require.Equal(t, -1, de.Tool)
				require.Equal(t, tt.join, de.Join, "join verdict")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.skipped, c.Skipped())
			require.Equal(t, tt.skipped > len(tt.sent)/2 && tt.mode == Prefill, c.Restarted())
		})
	}
}

// A decision is held until it can be made, and never more than the
// committed text is held.
func TestContinuationHolds(t *testing.T) {
	c, err := NewContinuation(Prefill, "The cat sat on", nil)
	require.NoError(t, err)
	for _, d := range []string{"The", " cat", " sat"} {
		out, err := c.Text(d)
		require.NoError(t, err)
		require.Empty(t, out, "undecided: nothing forwarded")
		require.Empty(t, c.Completion())
	}
	out, err := c.Text(" on the mat")
	require.NoError(t, err)
	require.Equal(t, " the mat", out)
	out, err = c.Text(".")
	require.NoError(t, err)
	require.Equal(t, ".", out, "decided: forwarded as it comes")

	// A continuation is held for the join check, then forwarded in the
	// deltas it came in.
	c, err = NewContinuation(Prefill, "The cat sat on", nil)
	require.NoError(t, err)
	for _, d := range []string{" the", " mat"} {
		out, err := c.Text(d)
		require.NoError(t, err)
		require.Empty(t, out, "held for the join check")
	}
	out, err = c.End()
	require.NoError(t, err)
	require.Equal(t, " the mat", out)
	require.Equal(t, []string{" the", " mat"}, c.Pieces())

	// More held deltas than the ring keeps: the oldest merge into the
	// first piece.
	c, err = NewContinuation(Prefill, "The cat sat on", nil)
	require.NoError(t, err)
	for range 100 {
		out, err := c.Text(" ")
		require.NoError(t, err)
		require.Empty(t, out)
	}
	out, err = c.End()
	require.NoError(t, err)
	ps := c.Pieces()
	require.Len(t, ps, pieceRing)
	require.Equal(t, out, strings.Join(ps, ""))

	c, err = NewContinuation(Replay, "x", nil)
	require.NoError(t, err)
	_, err = c.Text(strings.Repeat(" ", maxLeadingSpace+1))
	require.ErrorIs(t, err, ErrDiverged, "whitespace is held only so far")
	_, err = c.Text("x")
	require.ErrorIs(t, err, ErrDiverged, "a failed continuation stays failed")
}

func TestContinuationToolCalls(t *testing.T) {
	committed := []llm.ToolCall{
		{ID: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`},
		{ID: "call_2", Name: "time", Arguments: `{"tz":"Eu`},
	}
	type step struct {
		text string
		tc   *llm.ToolCallDelta
		end  bool
	}
	tc := func(i int, id, name, args string) step {
		return step{tc: &llm.ToolCallDelta{Index: i, ID: id, Name: name, Arguments: args}}
	}
	tests := []struct {
		name  string
		mode  Mode
		text  string
		tools []llm.ToolCall
		steps []step
		want  []llm.ToolCallDelta // forwarded tool deltas
		text2 string              // forwarded text
		fail  int                 // tool index that diverged, -1 text; -2 no failure
	}{
		{
			name: "replay repeats both calls and completes the cut one", text: "Let me check.", tools: committed,
			steps: []step{{text: "Let me check."}, tc(0, "call_x", "weather", `{"city":`), tc(0, "", "", `"Paris"}`),
				tc(1, "call_y", "time", `{"tz":"Europe/Paris"}`), tc(2, "call_z", "news", `{}`), {end: true}},
			want: []llm.ToolCallDelta{{Index: 1, Arguments: `rope/Paris"}`}, {Index: 2, ID: "call_z", Name: "news", Arguments: `{}`}},
			fail: -2,
		},
		{
			name: "replay calls another tool", tools: committed,
			steps: []step{tc(0, "call_x", "search", `{}`)}, fail: 0,
		},
		{
			name: "replay with other arguments", tools: committed,
			steps: []step{tc(0, "call_x", "weather", `{"city":"Rome"}`)}, fail: 0,
		},
		{
			name: "replay adds to a call the client saw complete", tools: committed,
			steps: []step{tc(0, "call_x", "weather", `{"city":"Paris"},`)}, fail: 0,
		},
		{
			name: "replay skips a committed call", tools: committed,
			steps: []step{tc(1, "call_y", "time", `{"tz":"Europe/Paris"}`)}, fail: 0,
		},
		{
			name: "replay ends before repeating the calls", tools: committed,
			steps: []step{tc(0, "call_x", "weather", `{"city":"Paris"}`), {end: true}}, fail: 1,
		},
		{
			name: "replay writes more text before its calls", text: "Let me check.", tools: committed,
			steps: []step{{text: "Let me check. One moment."}, tc(0, "call_x", "weather", `{"city":"Paris"}`)}, fail: -1,
		},
		{
			name: "text after the replayed calls", tools: committed[:1],
			steps: []step{tc(0, "call_x", "weather", `{"city":"Paris"}`), {text: "Done."}, {end: true}},
			text2: "Done.", fail: -2,
		},
		{
			name: "a continuation that calls a tool forwards its text first", mode: Prefill, text: "The weather",
			steps: []step{{text: " in Paris:"}, tc(0, "call_1", "weather", `{}`), {end: true}},
			text2: " in Paris:", want: []llm.ToolCallDelta{{Index: 0, ID: "call_1", Name: "weather", Arguments: `{}`}}, fail: -2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mode := tt.mode
			if mode == 0 {
				mode = Replay
			}
			c, err := NewContinuation(mode, tt.text, tt.tools)
			require.NoError(t, err)
			var got []llm.ToolCallDelta
			var text strings.Builder
			for _, s := range tt.steps {
				var out string
				var d *llm.ToolCallDelta
				switch {
				case s.tc != nil:
					out, d, err = c.ToolCall(*s.tc)
				case s.end:
					out, err = c.End()
				default:
					out, err = c.Text(s.text)
				}
				if err != nil {
					break
				}
				text.WriteString(out)
				if d != nil {
					got = append(got, *d)
				}
			}
			if tt.fail == -2 {
				require.NoError(t, err)
				require.NotEqual(t, Failed, c.Completion())
				require.Equal(t, tt.want, got)
				require.Equal(t, tt.text2, text.String())
				return
			}
			var de *DivergedError
			require.ErrorAs(t, err, &de)
			require.Equal(t, tt.fail, de.Tool)
			require.Equal(t, Failed, c.Completion())
		})
	}
	_, err := NewContinuation(Prefill, "x", committed)
	require.ErrorIs(t, err, ErrPrefillTools)
}

// split cuts s into deltas at drawn points.
func split(t *rapid.T, s, label string) []string {
	var out []string
	for s != "" {
		n := rapid.IntRange(1, len(s)).Draw(t, label)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// word draws texts from a small alphabet so that overlaps are common.
var word = rapid.StringMatching(`[ \n]{0,2}[ab ]{0,12}`)

// For any committed text and any fall-back output, split any way: the
// client's final text is the committed text followed by the output (a
// continuation) or by what follows an exact repetition of the committed
// text, or the continuation fails. Never the committed text followed by a
// restart that repeats part of it (a splice), and the split never matters.
func TestContinuationNeverSplices(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sent := word.Draw(t, "sent")
		var out string
		switch rapid.IntRange(0, 3).Draw(t, "shape") {
		case 0: // a restart
			out = rapid.StringMatching(`[ \n]{0,2}`).Draw(t, "lead") + strings.TrimLeft(sent, spaces) + word.Draw(t, "rest")
		case 1: // a restart that diverges
			p := strings.TrimLeft(sent, spaces)
			out = p[:rapid.IntRange(0, len(p)).Draw(t, "cut")] + word.Draw(t, "other")
		default:
			out = word.Draw(t, "out")
		}
		mode := rapid.SampledFrom([]Mode{Prefill, Replay}).Draw(t, "mode")
		got, c, err := feed(t, mode, sent, split(t, out, "delta"))
		whole, _, wholeErr := feed(t, mode, sent, []string{out})
		if (err == nil) != (wholeErr == nil) || got != whole {
			t.Fatalf("the split changed the result: %q (%v) vs %q (%v)", got, err, whole, wholeErr)
		}
		p, o := strings.TrimLeft(sent, spaces), strings.TrimLeft(out, spaces)
		repeats := strings.HasPrefix(o, p)
		if err != nil {
			if repeats {
				t.Fatalf("a repetition of all that was sent failed: %v", err)
			}
			return
		}
		switch {
		case p == "":
			if got != out {
				t.Fatalf("nothing sent: forwarded %q, want %q", got, out)
			}
		case repeats:
			if got != o[len(p):] {
				t.Fatalf("restart: forwarded %q, want %q", got, o[len(p):])
			}
		case mode == Replay:
			t.Fatalf("a replay that does not repeat %q succeeded with %q", p, got)
		default:
			// The whitespace the output opens with, up to what PrefillText
			// trimmed from sent, is already at the client.
			tail := sent[len(PrefillText(sent)):]
			want := out[commonPrefix(out[:len(out)-len(strings.TrimLeft(out, spaces))], tail):]
			if got != want {
				t.Fatalf("continuation: forwarded %q, want %q", got, want)
			}
			// A continuation is never a restart: it does not repeat the
			// first bytes of what was sent.
			if n := min(len(p), restartSignal); n > 0 && len(o) >= n && o[:n] == p[:n] {
				t.Fatalf("spliced: %q after %q", out, sent)
			}
		}
		if c.Completion() == Failed {
			t.Fatalf("completion %q after success", c.Completion())
		}
	})
}

// BenchmarkContinuation: a restart of a 400-token answer cut after 200
// tokens, delta by delta (the overlap is held, then skipped).
func BenchmarkContinuation(b *testing.B) {
	deltas := make([]string, 400)
	for i := range deltas {
		deltas[i] = fmt.Sprintf(" w%d", i)
	}
	sent := strings.Join(deltas[:200], "")
	b.ReportAllocs()
	for b.Loop() {
		c, _ := NewContinuation(Prefill, sent, nil)
		for _, d := range deltas {
			if _, err := c.Text(d); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := c.End(); err != nil {
			b.Fatal(err)
		}
	}
}
