package faults

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/brownout-dev/brownout/llm"
)

// Plan is what a provider will do with one request: the status and headers,
// the time of every output token, the content, and the fault steps the
// HTTP shell must perform. Plans are plain data: the mockprovider model
// builds them, faults transform them, and the servers (or the simulator)
// execute them. All durations are offsets from the moment the request arrived.
//
// Tokens: Chunks[i] is the text of output token i and TokenTimes[i] the
// moment it is due. Tokens before ToolStart[0] (all of them when there are
// no tool calls) are content text; tokens in [ToolStart[k], ToolStart[k+1])
// are the argument text of Response.ToolCalls[k], the first of which also
// announces the call's ID and name.
//
// Chunks is read-only: it may share its backing array with other plans (the
// mock model hands out windows of one pre-tokenized filler text, see
// SetTokenized), so no one writes Chunks[i]; a change replaces the slice
// (SetContent, SetToolCalls and TruncateAt do). TokenTimes and ToolStart
// belong to the plan and may be written in place.
type Plan struct {
	// Seq is the provider's attempt number; it links the plan to its journal
	// entry. 0 for plans built outside a provider.
	Seq uint64
	// Stream says whether the request asked for a stream.
	Stream bool

	// Status is the HTTP status; 200 for a normal answer. A non-2xx plan sends
	// Err (encoded by the provider's codec) after HeaderDelay.
	Status  int
	Headers map[string]string
	Err     *llm.Error

	// Reset closes the connection before any header is written.
	Reset bool
	// HoldFor keeps the connection open without answering, then closes it.
	HoldFor time.Duration
	// HeaderDelay delays the response headers.
	HeaderDelay time.Duration

	// TTFT is when the first token is due (TokenTimes[0] when there are tokens).
	TTFT       time.Duration
	TokenTimes []time.Duration
	Chunks     []string
	ToolStart  []int

	// Response is the full, final answer: content, tool calls, finish reason
	// and usage, consistent with Chunks.
	Response llm.Response

	// CutAfter closes the stream (or a non-streamed body) after that many
	// tokens, with no finish and no end marker; -1 for none.
	CutAfter int
	// StallAfter pauses the stream after that many tokens for StallFor, then
	// resumes (the pause is already in TokenTimes) or, with StallClose,
	// closes the connection. -1 for none.
	StallAfter int
	StallFor   time.Duration
	StallClose bool
	// MalformedAt replaces token event N with bytes that are not valid JSON;
	// -1 for none.
	MalformedAt int
	// InBandErr, when set on a 200 stream, is sent as an in-band error event
	// after InBandAfter tokens, and the stream ends there (Anthropic's
	// mid-stream overloaded_error, OpenAI's error chunk).
	InBandErr   *llm.Error
	InBandAfter int
	// NoDone ends a stream without its end marker (OpenAI data: [DONE],
	// Anthropic message_stop) after the finish and usage events.
	NoDone bool

	// Fault names the fault kinds applied, comma-separated; "" if none.
	Fault string
	// FaultIDs are the ids of the active faults applied (read-only: plans
	// share it).
	FaultIDs []string
	// Corrupted is true when a fault spoiled the content while the answer
	// still looks like a success (truncate, malformed_json_content,
	// empty_tool_args, refusal, quality_drop).
	Corrupted bool
	// Filler is the content as planned when it is a window of the
	// provider's filler corpus (mockprovider's Model.FillerCorpus), "" for
	// other answers. Content still equal to it is that window: what holds
	// for the whole corpus (it contains no refusal phrase) holds for it.
	Filler string
}

// NewPlan returns a 200 plan with no tokens and no fault steps.
func NewPlan() *Plan {
	return &Plan{Status: 200, CutAfter: -1, StallAfter: -1, MalformedAt: -1}
}

// Terminal reports whether the plan ends before any token: an error status,
// a reset or a hold.
func (p *Plan) Terminal() bool {
	return p.Reset || p.HoldFor > 0 || p.Status < 200 || p.Status > 299
}

// Cuts reports whether the answer is cut: CutAfter is set and within the
// answer (an answer shorter than CutAfter is not cut).
func (p *Plan) Cuts() bool { return p.CutAfter >= 0 && p.CutAfter <= len(p.Chunks) }

// StallCloses reports whether a stall closes the connection within the answer.
func (p *Plan) StallCloses() bool {
	return p.StallClose && p.StallAfter >= 0 && p.StallAfter <= len(p.Chunks)
}

// Malformed reports whether a malformed event is sent (MalformedAt within
// the answer; at len(Chunks) it comes just before the finish).
func (p *Plan) Malformed() bool { return p.MalformedAt >= 0 && p.MalformedAt <= len(p.Chunks) }

// Tokens returns the number of output tokens the plan streams.
func (p *Plan) Tokens() int { return len(p.Chunks) }

// End returns when the last event is due: the last token (or TTFT when there
// is none), never before HeaderDelay. For a hold it is HoldFor.
func (p *Plan) End() time.Duration {
	if p.HoldFor > 0 {
		return p.HoldFor
	}
	end := p.TTFT
	if n := len(p.TokenTimes); n > 0 {
		end = p.TokenTimes[n-1]
	}
	if p.InBandErr != nil && p.InBandAfter < len(p.TokenTimes) {
		end = p.TTFT
		if p.InBandAfter > 0 {
			end = p.TokenTimes[p.InBandAfter-1]
		}
	}
	if p.StallCloses() {
		end = p.StallFor
		if p.StallAfter > 0 {
			end += p.TokenTimes[p.StallAfter-1]
		} else {
			end += p.TTFT
		}
	}
	if end < p.HeaderDelay {
		end = p.HeaderDelay
	}
	return end
}

// SetError turns the plan into an error answer.
func (p *Plan) SetError(e *llm.Error) {
	p.Status = e.Status
	if p.Status == 0 {
		p.Status = llm.StatusFor(e.Type)
	}
	p.Err = e
	if e.RetryAfter > 0 {
		p.SetHeader("retry-after", retryAfterSeconds(e.RetryAfter))
	}
}

// SetHeader sets a response header (lower-case names by convention).
func (p *Plan) SetHeader(k, v string) {
	if p.Headers == nil {
		p.Headers = make(map[string]string, 4)
	}
	p.Headers[k] = v
}

// Shift delays every token by d (d may be negative; times never go below 0).
func (p *Plan) Shift(d time.Duration) {
	p.TTFT = max(p.TTFT+d, 0)
	for i := range p.TokenTimes {
		p.TokenTimes[i] = max(p.TokenTimes[i]+d, 0)
	}
}

// SetContent replaces the plan's content text, keeping its tool calls:
// Chunks, ToolStart, TokenTimes (extended at the plan's average pace or cut)
// and Usage.OutputTokens follow.
func (p *Plan) SetContent(text string) {
	p.Response.Content = text
	p.rebuild()
}

// SetTokenized is SetContent for text already tokenized: chunks must be
// Tokenize(text) and hold no tool calls' arguments (the plan must have no
// tool calls). The plan keeps chunks as its Chunks without copying, so they
// may be a window of a longer tokenized text that other plans share; give it
// a slice whose capacity ends at its length (s[i:j:j]) so that no append
// writes past it.
func (p *Plan) SetTokenized(text string, chunks []string) {
	p.Response.Content = text
	p.Response.ToolCalls = nil
	p.Chunks = chunks
	p.ToolStart = p.ToolStart[:0]
	p.TokenTimes = resizeTimes(p.TokenTimes, len(chunks), p.TTFT)
	p.Response.Usage.OutputTokens = len(chunks)
	p.clampSteps()
}

// SetToolCalls replaces the plan's tool calls, keeping its content text.
func (p *Plan) SetToolCalls(calls []llm.ToolCall) {
	p.Response.ToolCalls = calls
	p.rebuild()
}

// TruncateAt keeps only the first n tokens; the content and tool-call
// arguments are cut at the same place and usage reports n output tokens.
// The finish reason is left to the caller.
func (p *Plan) TruncateAt(n int) {
	if n < 0 || n >= len(p.Chunks) {
		return
	}
	text, calls := p.assemble(n)
	p.Response.Content = text
	p.Response.ToolCalls = calls
	p.Chunks = p.Chunks[:n:n] // shared chunks: an append must not write past n
	p.TokenTimes = p.TokenTimes[:n]
	starts := p.ToolStart[:0]
	for _, s := range p.ToolStart {
		if s < n {
			starts = append(starts, s)
		}
	}
	p.ToolStart = starts
	p.Response.Usage.OutputTokens = n
	p.clampSteps()
}

// clampSteps keeps an in-band error within the answer when it shrinks.
func (p *Plan) clampSteps() {
	if p.InBandErr != nil && p.InBandAfter > len(p.Chunks) {
		p.InBandAfter = len(p.Chunks)
	}
}

// assemble rebuilds content and tool calls from the first n chunks.
func (p *Plan) assemble(n int) (string, []llm.ToolCall) {
	textEnd := n
	if len(p.ToolStart) > 0 && p.ToolStart[0] < textEnd {
		textEnd = p.ToolStart[0]
	}
	var text []byte
	for _, c := range p.Chunks[:textEnd] {
		text = append(text, c...)
	}
	var calls []llm.ToolCall
	for k, s := range p.ToolStart {
		if s >= n {
			break
		}
		e := n
		if k+1 < len(p.ToolStart) && p.ToolStart[k+1] < e {
			e = p.ToolStart[k+1]
		}
		var args []byte
		for _, c := range p.Chunks[s:e] {
			args = append(args, c...)
		}
		tc := p.Response.ToolCalls[k]
		tc.Arguments = string(args)
		calls = append(calls, tc)
	}
	return string(text), calls
}

// rebuild re-chunks Response content and tool calls and resizes TokenTimes.
func (p *Plan) rebuild() {
	chunks := Tokenize(p.Response.Content, p.Chunks[:0:0])
	p.ToolStart = p.ToolStart[:0]
	for _, tc := range p.Response.ToolCalls {
		p.ToolStart = append(p.ToolStart, len(chunks))
		before := len(chunks)
		chunks = Tokenize(tc.Arguments, chunks)
		if len(chunks) == before {
			chunks = append(chunks, "") // every call has at least one event
		}
	}
	p.Chunks = chunks
	p.TokenTimes = resizeTimes(p.TokenTimes, len(chunks), p.TTFT)
	p.Response.Usage.OutputTokens = len(chunks)
	p.clampSteps()
}

// resizeTimes cuts times to n or extends it at its average gap.
func resizeTimes(times []time.Duration, n int, ttft time.Duration) []time.Duration {
	if n <= len(times) {
		return times[:n]
	}
	if len(times) == 0 { // no pace to extend: every token at ttft
		out := make([]time.Duration, n)
		if ttft != 0 {
			for i := range out {
				out[i] = ttft
			}
		}
		return out
	}
	gap := time.Duration(0)
	if len(times) >= 2 {
		gap = (times[len(times)-1] - times[0]) / time.Duration(len(times)-1)
	}
	last := ttft - gap
	if len(times) > 0 {
		last = times[len(times)-1]
	}
	out := make([]time.Duration, len(times), n)
	copy(out, times)
	for len(out) < n {
		last += gap
		out = append(out, max(last, ttft))
	}
	return out
}

// BytesPerToken is the tokens-from-text estimate: one token per 4 bytes of
// UTF-8 text. Tokenize never splits a character, so a run of multi-byte
// characters can make tokens shorter than 4 bytes.
const BytesPerToken = 4

// Tokenize appends the tokens of s to dst: greedy pieces of at most
// BytesPerToken bytes, each holding at least one whole character.
func Tokenize(s string, dst []string) []string {
	if dst == nil {
		dst = make([]string, 0, len(s)/BytesPerToken+1)
	}
	for len(s) > 0 {
		n := BytesPerToken // the ASCII fast path of tokenLen, inlined
		if len(s) < BytesPerToken || (s[0]|s[1]|s[2]|s[3]) >= utf8.RuneSelf {
			n = tokenLen(s)
		}
		dst = append(dst, s[:n])
		s = s[n:]
	}
	return dst
}

// tokenLen returns the byte length of the first token of a non-empty s.
func tokenLen(s string) int {
	if len(s) >= BytesPerToken && s[0] < utf8.RuneSelf && s[1] < utf8.RuneSelf && s[2] < utf8.RuneSelf && s[3] < utf8.RuneSelf {
		return BytesPerToken
	}
	n := 0
	for n < len(s) {
		size := 1
		if s[n] >= utf8.RuneSelf {
			_, size = utf8.DecodeRuneInString(s[n:])
		}
		if n > 0 && n+size > BytesPerToken {
			break
		}
		n += size
	}
	return n
}

// CountTokens returns len(Tokenize(s)) without allocating.
func CountTokens(s string) int {
	count := 0
	for len(s) > 0 {
		// Eight ASCII bytes are two tokens: test them at once (one load).
		for len(s) >= 2*BytesPerToken {
			w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
				uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
			if w&0x8080808080808080 != 0 {
				break
			}
			s = s[2*BytesPerToken:]
			count += 2
		}
		if len(s) == 0 {
			break
		}
		s = s[tokenLen(s):]
		count++
	}
	return count
}

func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}
