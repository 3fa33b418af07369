package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/sse"

	"github.com/brownout-dev/brownout/internal/jsonstr"
)

// Errors of the stream encoder, for callers that misuse it.
var (
	ErrNotStarted     = errors.New("anthropic: stream event before EventStart")
	ErrAlreadyStarted = errors.New("anthropic: second EventStart")
)

// NewStreamEncoder returns an encoder writing the Messages streaming events
// to w: EventStart is message_start (with ev.Usage as its usage when set)
// followed by a ping; text and tool-call
// deltas open and close content blocks as they interleave (text_delta,
// input_json_delta); EventFinish and EventUsage together make message_delta;
// Close writes message_stop; EventError writes an error event.
func (Codec) NewStreamEncoder(w io.Writer) llm.StreamEncoder {
	return &streamEncoder{w: sse.NewWriter(w), open: -1}
}

type blockKind uint8

const (
	blockNone blockKind = iota
	blockText
	blockTool
	blockOther
)

type streamEncoder struct {
	w       *sse.Writer
	buf     []byte
	started bool
	// open is the content index of the open block, -1 when none.
	open     int
	openKind blockKind
	openTool int // normalized index of the open tool call
	next     int // next content index
	seen     map[int]bool

	finish    llm.FinishReason
	usage     *llm.Usage
	deltaSent bool
}

func (e *streamEncoder) Encode(ev llm.StreamEvent) error {
	if ev.Type == llm.EventStart {
		if e.started {
			return ErrAlreadyStarted
		}
		e.started = true
		u := outUsage{}
		if ev.Usage != nil {
			u = wireUsageOf(*ev.Usage)
		}
		msg := struct {
			Type    string      `json:"type"`
			Message outResponse `json:"message"`
		}{"message_start", outResponse{ID: ev.ID, Type: "message", Role: "assistant", Model: ev.Model, Content: []any{}, Usage: u}}
		b, err := marshal(msg)
		if err != nil {
			return err
		}
		if err := e.w.Event("message_start", b); err != nil {
			return err
		}
		return e.w.Event("ping", []byte(`{"type": "ping"}`))
	}
	if !e.started {
		return ErrNotStarted
	}
	switch ev.Type {
	case llm.EventTextDelta:
		if ev.Text == "" {
			return nil
		}
		if e.openKind != blockText {
			if err := e.closeBlock(); err != nil {
				return err
			}
			if err := e.startBlock(blockText, `{"type":"text","text":""}`); err != nil {
				return err
			}
		}
		b := e.deltaHead("text_delta", "text")
		b = appendString(b, ev.Text)
		return e.write("content_block_delta", append(b, "}}"...))
	case llm.EventToolCallDelta:
		tc := ev.ToolCall
		if tc == nil {
			return errors.New("anthropic: tool_call_delta event without ToolCall")
		}
		if e.openKind != blockTool || e.openTool != tc.Index || tc.ID != "" {
			if e.seen[tc.Index] && !(e.openKind == blockTool && e.openTool == tc.Index) {
				return unsupported("tool_call_delta", fmt.Sprintf("tool call %d resumed after another block: Anthropic content blocks do not interleave", tc.Index))
			}
			if e.openKind != blockTool || e.openTool != tc.Index {
				if err := e.closeBlock(); err != nil {
					return err
				}
				b := append(e.buf[:0], `{"type":"tool_use","id":`...)
				b = appendString(b, tc.ID)
				b = append(b, `,"name":`...)
				b = appendString(b, tc.Name)
				b = append(b, `,"input":{}}`...)
				if err := e.startBlock(blockTool, string(b)); err != nil {
					return err
				}
				if e.seen == nil {
					e.seen = map[int]bool{}
				}
				e.seen[tc.Index] = true
				e.openTool = tc.Index
			}
		}
		if tc.Arguments == "" {
			return nil
		}
		b := e.deltaHead("input_json_delta", "partial_json")
		b = appendString(b, tc.Arguments)
		return e.write("content_block_delta", append(b, "}}"...))
	case llm.EventFinish:
		if StopReason(ev.FinishReason) == "" {
			return unsupported("finish_reason."+string(ev.FinishReason), "Anthropic has no such stop_reason")
		}
		if err := e.closeBlock(); err != nil {
			return err
		}
		e.finish = ev.FinishReason
		if e.usage != nil {
			return e.messageDelta()
		}
		return nil
	case llm.EventUsage:
		if ev.Usage == nil {
			return errors.New("anthropic: usage event without Usage")
		}
		u := *ev.Usage
		e.usage = &u
		if e.finish != "" {
			return e.messageDelta()
		}
		return nil
	case llm.EventError:
		if ev.Err == nil {
			return errors.New("anthropic: error event without Err")
		}
		b, err := marshal(errorObject(ev.Err))
		if err != nil {
			return err
		}
		return e.w.Event("error", b)
	}
	return fmt.Errorf("anthropic: unknown stream event type %q", ev.Type)
}

// Close ends a cleanly finished stream: it closes the open block, writes
// message_delta if not written yet (stop_reason end_turn when no EventFinish
// came) and message_stop.
func (e *streamEncoder) Close() error {
	if !e.started {
		return ErrNotStarted
	}
	if err := e.closeBlock(); err != nil {
		return err
	}
	if e.finish == "" {
		e.finish = llm.FinishStop
	}
	if err := e.messageDelta(); err != nil {
		return err
	}
	return e.w.Event("message_stop", []byte(`{"type":"message_stop"}`))
}

func (e *streamEncoder) write(name string, b []byte) error {
	e.buf = b
	return e.w.Event(name, b)
}

// deltaHead starts a content_block_delta up to the opening quote-less value
// of its field.
func (e *streamEncoder) deltaHead(typ, field string) []byte {
	b := append(e.buf[:0], `{"type":"content_block_delta","index":`...)
	b = strconv.AppendInt(b, int64(e.open), 10)
	b = append(b, `,"delta":{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","`...)
	b = append(b, field...)
	return append(b, `":`...)
}

func (e *streamEncoder) startBlock(kind blockKind, block string) error {
	e.open, e.openKind = e.next, kind
	e.next++
	b := append(e.buf[:0], `{"type":"content_block_start","index":`...)
	b = strconv.AppendInt(b, int64(e.open), 10)
	b = append(b, `,"content_block":`...)
	b = append(b, block...)
	return e.write("content_block_start", append(b, '}'))
}

func (e *streamEncoder) closeBlock() error {
	if e.open < 0 {
		return nil
	}
	b := append(e.buf[:0], `{"type":"content_block_stop","index":`...)
	b = strconv.AppendInt(b, int64(e.open), 10)
	e.open, e.openKind = -1, blockNone
	return e.write("content_block_stop", append(b, '}'))
}

func (e *streamEncoder) messageDelta() error {
	if e.deltaSent {
		return nil
	}
	e.deltaSent = true
	var u llm.Usage
	if e.usage != nil {
		u = *e.usage
	}
	msg := struct {
		Type  string `json:"type"`
		Delta struct {
			StopReason   string  `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
		} `json:"delta"`
		Usage outUsage `json:"usage"`
	}{Type: "message_delta", Usage: wireUsageOf(u)}
	msg.Delta.StopReason = StopReason(e.finish)
	b, err := marshal(msg)
	if err != nil {
		return err
	}
	return e.w.Event("message_delta", b)
}

const textDeltaPrefix = `{"type":"content_block_delta","index":`

// fastTextDelta handles the most frequent event, a text_delta in the exact
// compact shape the API writes, without reflection. It reports false, having
// done nothing, for anything else, which then takes the general path.
func (d *streamDecoder) fastTextDelta(data string) bool {
	rest, ok := strings.CutPrefix(data, textDeltaPrefix)
	if !ok {
		return false
	}
	n := 0
	i := 0
	for i < len(rest) && i < 9 && rest[i] >= '0' && rest[i] <= '9' {
		n = n*10 + int(rest[i]-'0')
		i++
	}
	if i == 0 || (rest[0] == '0' && i > 1) {
		return false
	}
	rest, ok = strings.CutPrefix(rest[i:], `,"delta":{"type":"text_delta","text":"`)
	if !ok {
		return false
	}
	end, escaped := -1, false
	for j := 0; j < len(rest); j++ {
		c := rest[j]
		if c == '"' {
			end = j
			break
		}
		if c < 0x20 {
			return false
		}
		if c == '\\' {
			escaped = true
			j++
		}
	}
	if end < 0 || rest[end:] != `"}}` {
		return false
	}
	text := rest[:end]
	if escaped {
		if text, ok = unescape(text); !ok {
			return false
		}
	} else if !utf8.ValidString(text) {
		return false
	} else {
		text = strings.Clone(text) // data is the reader's buffer
	}
	b, ok := d.blocks[n]
	if !ok || b.kind != blockText {
		return false // the general path reports the protocol error
	}
	if text != "" {
		d.push(llm.StreamEvent{Type: llm.EventTextDelta, Text: text})
	}
	return true
}

// unescape decodes the body of a JSON string (between the quotes) as
// encoding/json does; ok is false for a malformed escape or invalid UTF-8,
// which the general path then handles.
func unescape(s string) (string, bool) {
	if !utf8.ValidString(s) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", false
		}
		switch s[i] {
		case '"', '\\', '/':
			b.WriteByte(s[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(s[i+1:])
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if strings.HasPrefix(s[i+1:], `\u`) {
					r2, ok = hex4(s[i+3:])
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	return b.String(), true
}

func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// appendString appends s as a JSON string the way encoding/json writes it
// with HTML escaping off.
func appendString(b []byte, s string) []byte { return jsonstr.Append(b, s, false) }

// NewStreamDecoder returns a decoder of the Messages streaming events read
// from r. It emits EventStart first (from message_start, with its usage so
// far — input and cache counts — in Usage; synthesized if the stream starts
// with a content event), text and tool-call deltas (tool calls
// numbered 0, 1, ... in stream order; a call that got no input deltas
// gets "{}" when its block stops), EventFinish and EventUsage from
// message_delta (usage cumulative, with the counts of message_start), and
// EventError for an error event. It returns io.EOF after message_stop, or at
// the end of input after a stop_reason or an error event; io.ErrUnexpectedEOF
// when the input ends before any of these (a cut stream). An event whose data
// does not parse, or that breaks the protocol (a delta for a block that was
// never started), is an *sse.EventError with the event's index; the decoder
// goes on with the next event. ping and unknown event types are skipped, as
// are thinking and other blocks the normalized model cannot carry.
func (Codec) NewStreamDecoder(r io.Reader) llm.StreamDecoder {
	return &streamDecoder{r: sse.NewReader(r)}
}

type wireEvent struct {
	Type         string        `json:"type"`
	Index        int           `json:"index"`
	Message      *wireResponse `json:"message"`
	ContentBlock *wireBlock    `json:"content_block"`
	Delta        *wireDelta    `json:"delta"`
	Usage        *wireUsage    `json:"usage"`
	Error        *wireError    `json:"error"`
}

type wireDelta struct {
	Type        string  `json:"type"`
	Text        string  `json:"text"`
	PartialJSON string  `json:"partial_json"`
	StopReason  *string `json:"stop_reason"`
}

type blockState struct {
	kind    blockKind
	tool    int
	hasArgs bool // a tool block received input
}

type streamDecoder struct {
	r       *sse.Reader
	queue   []llm.StreamEvent
	head    int
	started bool
	// ended is set when the decoder will read no more (message_stop or end
	// of input); err is then what Next returns.
	ended    bool
	err      error
	finished bool // a stop_reason or an error event was seen
	blocks   map[int]blockState
	tools    int
	usage    wireUsage
	ev       wireEvent
}

func (d *streamDecoder) push(ev llm.StreamEvent) { d.queue = append(d.queue, ev) }

func (d *streamDecoder) Next() (llm.StreamEvent, error) {
	for {
		if d.head < len(d.queue) {
			ev := d.queue[d.head]
			d.queue[d.head] = llm.StreamEvent{}
			d.head++
			if d.head == len(d.queue) {
				d.queue, d.head = d.queue[:0], 0
			}
			return ev, nil
		}
		if d.ended {
			return llm.StreamEvent{}, d.err
		}
		ev, raw, err := d.r.NextBytes()
		if err != nil {
			if err != io.EOF {
				return llm.StreamEvent{}, err
			}
			d.ended = true
			d.err = io.EOF
			if !d.finished {
				d.err = io.ErrUnexpectedEOF
			}
			continue
		}
		// The event's data views the reader's buffer, which the next event
		// overwrites: handle copies what the events keep (the fast path a
		// token's text; encoding/json its own strings), so an event costs
		// no copy of its whole data.
		if err := d.handle(ev.Event, unsafe.String(unsafe.SliceData(raw), len(raw))); err != nil {
			return llm.StreamEvent{}, &sse.EventError{Index: d.r.Index(), Err: err}
		}
	}
}

func (d *streamDecoder) start() {
	if !d.started {
		d.started = true
		d.push(llm.StreamEvent{Type: llm.EventStart})
	}
}

// handle decodes one event, name and its data (a view of the reader's
// buffer).
func (d *streamDecoder) handle(name, raw string) error {
	if name != "error" && d.fastTextDelta(raw) {
		return nil
	}
	data := bytes.TrimSpace([]byte(raw))
	if len(data) == 0 {
		return nil
	}
	d.ev = wireEvent{}
	we := &d.ev
	if err := json.Unmarshal(data, we); err != nil {
		return err
	}
	typ := we.Type
	if name == "error" || typ == "" {
		typ = name
	}
	switch typ {
	case "message_start":
		if d.started {
			return errors.New("message_start after the stream started")
		}
		if we.Message == nil {
			return errors.New("message_start without message")
		}
		d.started = true
		start := llm.StreamEvent{Type: llm.EventStart, ID: we.Message.ID, Model: we.Message.Model}
		if we.Message.Usage != nil {
			d.usage.merge(we.Message.Usage)
			u := d.usage.normalize()
			start.Usage = &u
		}
		d.push(start)
	case "content_block_start":
		cb := we.ContentBlock
		if cb == nil {
			return errors.New("content_block_start without content_block")
		}
		if _, dup := d.blocks[we.Index]; dup {
			return fmt.Errorf("content block %d started twice", we.Index)
		}
		if d.blocks == nil {
			d.blocks = map[int]blockState{}
		}
		d.start()
		switch cb.Type {
		case "text":
			d.blocks[we.Index] = blockState{kind: blockText}
			if cb.Text != nil && *cb.Text != "" {
				d.push(llm.StreamEvent{Type: llm.EventTextDelta, Text: *cb.Text})
			}
		case "tool_use":
			n := d.tools
			d.tools++
			d.blocks[we.Index] = blockState{kind: blockTool, tool: n}
			d.push(llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: n, ID: cb.ID, Name: cb.Name}})
			if in := bytes.TrimSpace(cb.Input); len(in) > 0 && string(in) != "{}" && string(in) != "null" {
				d.blocks[we.Index] = blockState{kind: blockTool, tool: n, hasArgs: true}
				d.push(llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: n, Arguments: compact(in)}})
			}
		default:
			d.blocks[we.Index] = blockState{kind: blockOther}
		}
	case "content_block_delta":
		if we.Delta == nil {
			return errors.New("content_block_delta without delta")
		}
		b, ok := d.blocks[we.Index]
		if !ok {
			return fmt.Errorf("content_block_delta for content block %d, which was never started", we.Index)
		}
		switch we.Delta.Type {
		case "text_delta":
			if b.kind != blockText {
				return fmt.Errorf("text_delta for content block %d, which is not a text block", we.Index)
			}
			if we.Delta.Text != "" {
				d.push(llm.StreamEvent{Type: llm.EventTextDelta, Text: we.Delta.Text})
			}
		case "input_json_delta":
			if b.kind != blockTool {
				return fmt.Errorf("input_json_delta for content block %d, which is not a tool_use block", we.Index)
			}
			if we.Delta.PartialJSON != "" {
				b.hasArgs = true
				d.blocks[we.Index] = b
				d.push(llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: b.tool, Arguments: we.Delta.PartialJSON}})
			}
		}
	case "content_block_stop":
		b, ok := d.blocks[we.Index]
		if !ok {
			return fmt.Errorf("content_block_stop for content block %d, which was never started", we.Index)
		}
		if b.kind == blockTool && !b.hasArgs {
			// A call without input deltas has the empty object as input,
			// as the SDKs accumulate it.
			b.hasArgs = true
			d.blocks[we.Index] = b
			d.push(llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: b.tool, Arguments: "{}"}})
		}
	case "message_delta":
		d.start()
		if we.Delta != nil && we.Delta.StopReason != nil {
			fr := FinishReason(*we.Delta.StopReason)
			if fr == "" {
				return fmt.Errorf("unknown stop_reason %q", *we.Delta.StopReason)
			}
			d.finished = true
			d.push(llm.StreamEvent{Type: llm.EventFinish, FinishReason: fr})
		}
		d.usage.merge(we.Usage)
		u := d.usage.normalize()
		d.push(llm.StreamEvent{Type: llm.EventUsage, Usage: &u})
	case "message_stop":
		d.start()
		d.ended, d.err = true, io.EOF
	case "error":
		if we.Error == nil {
			return errors.New("error event without error object")
		}
		d.finished = true
		status := providerStatus[we.Error.Type]
		if status == 0 {
			status = 500
		}
		d.push(llm.StreamEvent{Type: llm.EventError, Err: &llm.Error{
			Status:       status,
			Type:         normalType(we.Error.Type, we.Error.Message, status),
			Message:      we.Error.Message,
			ProviderType: we.Error.Type,
		}})
	}
	return nil
}
