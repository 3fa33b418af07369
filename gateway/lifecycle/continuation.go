package lifecycle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/llm"
)

// Mode is how a fall-back was asked to complete an answer that part of
// already reached the client.
type Mode uint8

const (
	// Prefill: the committed text was sent as a trailing assistant message.
	// The target continues it, or restarts its answer from the beginning
	// (OpenAI-compatible models often do).
	Prefill Mode = iota + 1
	// Replay: the original request was sent (the target cannot take a
	// prefill, or rejected it). Its answer must begin with exactly what the
	// client already has.
	Replay
)

func (m Mode) String() string {
	switch m {
	case Prefill:
		return "prefill"
	case Replay:
		return "replay"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// How a partial answer was completed: the Outcome of a stream.continuation
// event.
const (
	Continued = events.OutcomeContinued // a prefill continuation, any repeated overlap skipped
	Replayed  = events.OutcomeReplayed  // a replay that matched what was sent
	Failed    = events.OutcomeFailed    // the fall-back diverged: the stream ends with an in-band error
)

// restartSignal is how many characters of the committed text (leading whitespace
// aside) a prefill continuation must repeat to be taken as a restart. Fewer
// matching bytes are a coincidence ("Therefore" after "The cat."); four are
// the first word of most answers ("The ", `{"a"`), and a restart must then
// repeat everything that was sent.
const restartSignal = 4

// maxLeadingSpace bounds the whitespace held before the first other byte of
// a fall-back's output.
const maxLeadingSpace = 256

// ErrDiverged is the error every DivergedError matches with errors.Is.
var ErrDiverged = errors.New("the fall-back's answer diverges from what the client already received")

// DivergedError says where a fall-back's output stopped matching the
// answer the client already has. Offsets count bytes of the committed
// text, leading whitespace aside; no content is quoted (it is the user's).
type DivergedError struct {
	Mode Mode
	// At is the offset of the first byte that differs, or of the end of the
	// fall-back's text when it ended (or turned to tool calls) too soon.
	At int
	// Of is the length of the committed text.
	Of int
	// Tool is the index of the tool call that diverged, -1 for text.
	Tool int
	// Join is the join check's verdict when a prefill continuation's
	// output cannot follow the text sent (At is then 0); Joins otherwise.
	Join Join
}

func (e *DivergedError) Error() string {
	if e.Join != Joins {
		return fmt.Sprintf("%s continuation: the output does not join the %d bytes sent: %s", e.Mode, e.Of, e.Join)
	}
	what := "text"
	if e.Tool >= 0 {
		what = fmt.Sprintf("tool call %d", e.Tool)
	}
	return fmt.Sprintf("%s continuation: %s diverges at byte %d of %d", e.Mode, what, e.At, e.Of)
}

// Is makes errors.Is(err, ErrDiverged) true.
func (e *DivergedError) Is(target error) bool { return target == ErrDiverged }

// PrefillText is the assistant prefill to send for the partial answer the
// client has: the text without its trailing whitespace (some providers
// reject a prefill that ends with whitespace, and a model writes the space
// before its next word itself). A Prefill Continuation expects it: the
// whitespace its output opens with, up to what was trimmed, is skipped.
func PrefillText(partial string) string { return strings.TrimRight(partial, spaces) }

// ErrPrefillTools: an answer whose tool-call deltas reached the client
// cannot be continued from a prefill (a partial tool call is no assistant
// message); replay it instead.
var ErrPrefillTools = errors.New("a prefill cannot continue an answer with tool calls; replay it")

// Continuation checks a fall-back's output against the answer that already
// reached the client, before a byte of it is forwarded: the client's final
// text is what it had plus the continuation, with no repeated overlap, or
// the stream ends with an error. Never two answers spliced together.
//
// Feed it the fall-back's stream in order: Text for text deltas, ToolCall
// for tool-call deltas, End when the output is over (a finish reason or the
// end of the stream). Each returns what to forward to the client now;
// output that cannot be judged yet is held (at most the length of the
// committed text, or joinLook characters and the leading whitespace). An error
// means the answer cannot be completed by this fall-back: forward nothing
// more and end with the in-band error. The rule:
//
//   - Prefill (the target was sent PrefillText of the committed text):
//     output that repeats the committed text's first four characters
//     (leading whitespace aside) is a restart: once it has repeated the
//     whole committed text exactly, the overlap is skipped and the rest
//     forwarded; if it differs before that, it diverged. Other output is a
//     continuation if it passes the join check (JudgeJoin) on its first
//     joinLook characters: it is held until then (or its end), and forwarded as
//     is. A join the check rejects (an answer opener, a capital glued to a
//     cut word, a heading mid-line, ...) diverged: a fresh answer is never
//     glued onto the cut one.
//   - Replay: the output (leading whitespace aside) must repeat the whole
//     committed text exactly, then its rest is forwarded. Committed tool
//     calls must be repeated too, each with the same name and the arguments
//     already sent as a prefix; only what follows is forwarded.
//
// A Continuation is a value of the lifecycle: no I/O, no clock, one
// goroutine.
type Continuation struct {
	mode Mode
	sent string // committed text, leading whitespace trimmed
	// signal is the byte length of sent's first restartSignal characters:
	// output that repeats them is a restart.
	signal int
	tools  []llm.ToolCall

	names []string // texts of the conversation, for the join check
	held  []byte   // output not forwarded yet, while undecided
	// ends holds where the last len(ends) deltas in held end (a ring,
	// nends deltas in all): what is forwarded once decided is at most
	// joinLook characters and the delta that completed them, or a
	// restart's rest.
	ends    [pieceRing]int32
	nends   int
	pieces  []string
	lead    int  // leading whitespace in held
	matched int  // bytes after lead known to match sent
	decided bool // the text's fate is known: forward what comes
	restart bool // decided as a restart (overlap skipped)
	skipped int  // bytes of output dropped as overlap
	err     error

	// Replay of committed tool calls: bytes of arguments received per
	// committed call, and whether the text is over.
	toolArgs []int
	textDone bool
}

// NewContinuation starts checking a fall-back's output against the text
// and tool calls that reached the client. Tool calls are in index order;
// the last may be partial.
func NewContinuation(mode Mode, text string, tools []llm.ToolCall) (*Continuation, error) {
	if mode != Prefill && mode != Replay {
		return nil, fmt.Errorf("lifecycle: unknown continuation mode %d", mode)
	}
	if mode == Prefill && len(tools) > 0 {
		return nil, ErrPrefillTools
	}
	c := &Continuation{mode: mode, sent: strings.TrimLeft(text, spaces), tools: tools}
	c.signal = runesLen(c.sent, restartSignal)
	if len(tools) > 0 {
		c.toolArgs = make([]int, len(tools))
	}
	return c, nil
}

const spaces = " \t\r\n"

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// Names gives the join check other texts of the conversation (the user's
// question): a capitalised word they use as a name ("France") may follow
// a cut in the middle of a sentence. Call it before the first output.
func (c *Continuation) Names(texts ...string) { c.names = texts }

// Mode returns how the fall-back was asked.
func (c *Continuation) Mode() Mode { return c.mode }

// Completion returns Continued or Replayed once the output was judged
// good, Failed after an error, "" while undecided.
func (c *Continuation) Completion() string {
	switch {
	case c.err != nil:
		return Failed
	case !c.decided:
		return ""
	case c.mode == Replay:
		return Replayed
	}
	return Continued
}

// Restarted reports whether a prefill continuation restarted the answer
// (its repeated overlap was skipped).
func (c *Continuation) Restarted() bool { return c.restart }

// Skipped returns the bytes of the fall-back's output dropped as overlap
// with what was sent (leading whitespace included).
func (c *Continuation) Skipped() int { return c.skipped }

// Reason says how the output was judged, for the stream.continuation
// event: the restart's skipped overlap, the replay's match, or where it
// diverged; "" while undecided.
func (c *Continuation) Reason() string {
	switch {
	case c.err != nil:
		return c.err.Error()
	case !c.decided:
		return ""
	case c.restart:
		return fmt.Sprintf("restart: %d bytes of overlap skipped", c.skipped)
	case c.mode == Replay:
		return fmt.Sprintf("replay: %d bytes matched", c.skipped)
	}
	return "prefill"
}

// Err returns the divergence, nil if none (yet).
func (c *Continuation) Err() error { return c.err }

// Text takes the next text delta of the fall-back and returns the text to
// forward now (possibly empty).
func (c *Continuation) Text(delta string) (string, error) {
	if c.err != nil {
		return "", c.err
	}
	c.pieces = c.pieces[:0]
	if c.decided {
		return c.more(delta)
	}
	c.held = append(c.held, delta...)
	c.ends[c.nends%pieceRing] = int32(len(c.held))
	c.nends++
	for c.lead < len(c.held) && isSpace(c.held[c.lead]) {
		c.lead++
	}
	out, err := c.judge(false)
	if err != nil {
		return "", err
	}
	return c.more(out)
}

// more checks text that follows the matched overlap. A replay of an answer
// with tool calls may write text only after repeating them: the client's
// text ended where its tool calls began.
func (c *Continuation) more(text string) (string, error) {
	if text != "" && len(c.tools) > 0 && (!c.textDone || !c.toolsCovered()) {
		return "", c.fail(len(c.sent), -1)
	}
	return text, nil
}

// judge decides the held output if it can; end: no more text will come.
func (c *Continuation) judge(end bool) (string, error) {
	f := c.held[c.lead:]
	p := c.sent
	if len(p) == 0 {
		return c.decide(0), nil // nothing to match: everything continues
	}
	if len(f) == 0 && c.lead <= maxLeadingSpace && !end {
		return "", nil // whitespace so far
	}
	// While undecided, held output is a prefix of p up to c.matched: the
	// comparison resumes there (each byte is compared once).
	k := c.matched + commonPrefix(f[c.matched:], p[c.matched:])
	c.matched = k
	switch {
	case k == len(p):
		// The output repeats everything sent: skip the overlap.
		c.restart = c.mode == Prefill
		return c.decide(c.lead + len(p)), nil
	case c.mode == Replay:
		if k < len(f) || end || c.lead > maxLeadingSpace {
			return "", c.fail(k, -1)
		}
		return "", nil
	case k >= c.signal:
		// A restart: it must repeat all of it.
		if k < len(f) || end {
			return "", c.fail(k, -1)
		}
		return "", nil
	case k < len(f) || end || c.lead > maxLeadingSpace:
		// Not a restart: a continuation if it joins what was sent, judged
		// on its first joinLook characters.
		if c.mode == Prefill && !end && c.lead <= maxLeadingSpace && completeRunes(f) < joinLook {
			return "", nil
		}
		if j := JudgeJoin(c.sent, string(c.held), c.names...); j != Joins {
			c.err = &DivergedError{Mode: c.mode, Of: len(c.sent), Tool: -1, Join: j}
			c.held = nil
			return "", c.err
		}
		if c.mode == Prefill {
			// The target was sent PrefillText: whitespace its output opens
			// with that repeats the whitespace trimmed from it is already
			// at the client.
			tail := c.sent[len(PrefillText(c.sent)):]
			return c.decide(commonPrefix(c.held[:c.lead], tail)), nil
		}
		return c.decide(0), nil
	}
	return "", nil // a prefix of what was sent, too short to tell
}

// decide settles the text: the first skip bytes of the held output are
// overlap, the rest is returned for forwarding (Pieces: in the deltas it
// came in).
func (c *Continuation) decide(skip int) string {
	out := string(c.held[skip:])
	from := skip // deltas older than the ring merge into the first piece
	for k := max(c.nends-pieceRing, 0); k < c.nends; k++ {
		e := int(c.ends[k%pieceRing])
		if e > skip {
			if c.pieces == nil {
				c.pieces = make([]string, 0, c.nends-k)
			}
			c.pieces = append(c.pieces, out[max(from, skip)-skip:e-skip])
		}
		from = e
	}
	c.decided, c.skipped, c.held, c.nends = true, skip, nil, 0
	return out
}

// pieceRing bounds the deltas of held output that are forwarded apart.
const pieceRing = 64

// Pieces returns the fall-back's deltas that the text the last call
// returned was held from, in order (their concatenation is that text), so
// that the client receives them as they came; nil when it is one delta.
// The slice is valid until the next call.
func (c *Continuation) Pieces() []string {
	if len(c.pieces) < 2 {
		return nil
	}
	return c.pieces
}

func (c *Continuation) fail(at, tool int) error {
	c.err = &DivergedError{Mode: c.mode, At: at, Of: len(c.sent), Tool: tool}
	c.held = nil
	return c.err
}

// endText settles the text before non-text output; it returns the held
// text to forward.
func (c *Continuation) endText() (string, error) {
	c.pieces = c.pieces[:0]
	if c.err != nil {
		return "", c.err
	}
	c.textDone = true
	if c.decided {
		return "", nil
	}
	return c.judge(true)
}

// ToolCall takes a tool-call delta of the fall-back. It returns the text
// held until now to forward first, then the delta to forward (nil when
// nothing of it is new to the client).
func (c *Continuation) ToolCall(d llm.ToolCallDelta) (string, *llm.ToolCallDelta, error) {
	text, err := c.endText()
	if err != nil {
		return "", nil, err
	}
	if c.mode == Replay && len(c.tools) > 0 {
		if len(text) > 0 {
			// The replay wrote more text than the client had before its
			// tool calls began.
			return "", nil, c.fail(len(c.sent), -1)
		}
		out, err := c.replayTool(d)
		return "", out, err
	}
	return text, &d, nil
}

// replayTool checks a replayed tool-call delta against the committed tool
// calls and returns what is new to the client.
func (c *Continuation) replayTool(d llm.ToolCallDelta) (*llm.ToolCallDelta, error) {
	i := d.Index
	if i < 0 || i >= len(c.tools) {
		// A call the client has not seen: the committed ones come first.
		if j := c.uncovered(len(c.tools)); j >= 0 {
			return nil, c.fail(c.toolArgs[j], j)
		}
		return &d, nil
	}
	want := c.tools[i].Arguments
	if d.Name != "" && d.Name != c.tools[i].Name {
		return nil, c.fail(0, i)
	}
	got := c.toolArgs[i]
	args := d.Arguments
	n := min(len(args), len(want)-got)
	if k := commonPrefix(args[:n], want[got:got+n]); k < n {
		return nil, c.fail(got+k, i)
	}
	c.toolArgs[i] += n
	c.skipped += n
	args = args[n:]
	if args == "" {
		return nil, nil
	}
	// Arguments the client has not seen: only the last committed call may
	// have been cut, and the calls before it must be complete.
	if j := c.uncovered(i); i < len(c.tools)-1 || j >= 0 {
		if j < 0 {
			j = i
		}
		return nil, c.fail(c.toolArgs[j], j)
	}
	c.toolArgs[i] += len(args)
	return &llm.ToolCallDelta{Index: i, Arguments: args}, nil
}

// uncovered returns the first of the committed tool calls before n whose
// arguments the replay has not repeated in full, -1 if none.
func (c *Continuation) uncovered(n int) int {
	for j := range n {
		if c.toolArgs[j] < len(c.tools[j].Arguments) {
			return j
		}
	}
	return -1
}

// toolsCovered reports whether the replay repeated every committed tool
// call in full.
func (c *Continuation) toolsCovered() bool { return c.uncovered(len(c.tools)) < 0 }

// End is called when the fall-back's output is over (its finish reason, or
// the end of its stream). It returns the held text to forward, or the
// error when the output stopped before matching what was sent.
func (c *Continuation) End() (string, error) {
	text, err := c.endText()
	if err != nil {
		return "", err
	}
	if j := c.uncovered(len(c.tools)); j >= 0 {
		return "", c.fail(c.toolArgs[j], j)
	}
	return c.more(text)
}

// commonPrefix returns the length of the common prefix of a and b.
func commonPrefix[T string | []byte](a T, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Verify runs a whole output through c at once (tests and tools; the
// engines feed an Attempt delta by delta): chunks are the text deltas the
// attempt delivered, in order; ended says the output finished after them.
// It returns the text forwarded to the client, the number of deltas that
// carried it (a delta per chunk that lets text through, held ones as they
// came: Pieces) and, when the output diverged, the index of the chunk that
// showed it (-1 when it did not).
func Verify(c *Continuation, chunks []string, ended bool) (forwarded string, deltas, diverged int) {
	var b strings.Builder
	for i, ch := range chunks {
		s, err := c.Text(ch)
		if err != nil {
			return b.String(), deltas, i
		}
		if s != "" {
			deltas += max(len(c.Pieces()), 1)
		}
		b.WriteString(s)
	}
	if ended {
		s, err := c.End()
		if err != nil {
			return b.String(), deltas, max(len(chunks)-1, 0)
		}
		if s != "" {
			deltas += max(len(c.Pieces()), 1)
		}
		b.WriteString(s)
	}
	return b.String(), deltas, -1
}

// runesLen returns the byte length of s's first n characters (all of a
// shorter s).
func runesLen(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}
