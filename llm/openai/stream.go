package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unsafe"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/sse"
)

var doneMarker = []byte("[DONE]")

// streamEncoder writes chat.completion.chunk events.
type streamEncoder struct {
	c       Codec
	w       sse.Writer // in the encoder: one allocation less per stream
	prefix  []byte     // {"id":...,"object":...,"created":...,"model":...
	buf     []byte
	started bool
	errored bool
}

// The prefix and the chunk being built share one allocation, made at the
// start of the stream and large enough for usual chunks (an ID and a model
// of a few dozen bytes, a delta of a few words; a usage chunk), so that
// neither grows during the stream. A larger one grows apart.
const (
	encPrefixCap = 192
	encBufCap    = 512
)

func newStreamEncoder(c Codec, w io.Writer) *streamEncoder {
	return &streamEncoder{c: c, w: *sse.NewWriter(w)}
}

func (e *streamEncoder) start(id, model string) {
	e.started = true
	if e.prefix == nil {
		b := make([]byte, encPrefixCap+encBufCap)
		e.prefix, e.buf = b[:0:encPrefixCap], b[encPrefixCap:encPrefixCap]
	}
	p := e.prefix[:0]
	p = append(p, `{"id":`...)
	p = appendString(p, id)
	p = append(p, `,"object":"chat.completion.chunk","created":`...)
	p = appendInt(p, e.c.now().Unix())
	p = append(p, `,"model":`...)
	p = appendString(p, model)
	e.prefix = p
}

// Encode writes one event as a chunk. EventStart writes the first chunk (the
// assistant role); a later EventStart writes nothing and names its ID and
// Model in the chunks that follow (another model continues the answer); an
// EventError writes OpenAI's in-band error object. The
// caller decides whether a usage event is wanted (stream_options).
func (e *streamEncoder) Encode(ev llm.StreamEvent) error {
	if e.errored {
		return errors.New("openai: stream encoder: event after an error")
	}
	if ev.Type == llm.EventError {
		if ev.Err == nil {
			return errors.New("openai: stream encoder: error event without an error")
		}
		e.errored = true
		_, body := e.c.EncodeError(ev.Err)
		return e.w.Data(body)
	}
	if ev.Type == llm.EventStart {
		if e.started {
			// Another model continues the answer: the chunks that follow
			// name it.
			e.start(ev.ID, ev.Model)
			return nil
		}
		e.start(ev.ID, ev.Model)
		e.buf = e.buf[:0]
		return e.write(`{"role":"assistant","content":"","refusal":null}`, nil)
	}
	if !e.started {
		e.start("", "")
	}
	b := e.buf[:0]
	switch ev.Type {
	case llm.EventTextDelta:
		b = append(b, `{"content":`...)
		b = appendString(b, ev.Text)
		b = append(b, '}')
		e.buf = b
		return e.write("", b)
	case llm.EventToolCallDelta:
		tc := ev.ToolCall
		if tc == nil {
			return errors.New("openai: stream encoder: tool call event without a tool call")
		}
		b = append(b, `{"tool_calls":[{"index":`...)
		b = appendInt(b, int64(tc.Index))
		if tc.ID != "" || tc.Name != "" {
			if tc.ID != "" {
				b = append(b, `,"id":`...)
				b = appendString(b, tc.ID)
			}
			b = append(b, `,"type":"function","function":{"name":`...)
			b = appendString(b, tc.Name)
			b = append(b, `,"arguments":`...)
		} else {
			b = append(b, `,"function":{"arguments":`...)
		}
		b = appendString(b, tc.Arguments)
		b = append(b, "}}]}"...)
		e.buf = b
		return e.write("", b)
	case llm.EventFinish:
		fr, err := finishReason(ev.FinishReason)
		if err != nil {
			return err
		}
		b = append(b, e.prefix...)
		b = append(b, `,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"`...)
		b = append(b, fr...)
		b = append(b, `"}]}`...)
		e.buf = b
		return e.w.Data(b)
	case llm.EventUsage:
		if ev.Usage == nil {
			return errors.New("openai: stream encoder: usage event without usage")
		}
		b = append(b, e.prefix...)
		b = append(b, `,"choices":[],"usage":`...)
		b = appendUsage(b, *ev.Usage)
		b = append(b, '}')
		e.buf = b
		return e.w.Data(b)
	default:
		return fmt.Errorf("openai: stream encoder: unknown event type %q", ev.Type)
	}
}

// write writes a content chunk whose delta is the constant s or the bytes d.
func (e *streamEncoder) write(s string, d []byte) error {
	// The delta may live in e.buf; build the chunk after it.
	n := len(e.buf)
	b := append(e.buf, e.prefix...)
	b = append(b, `,"choices":[{"index":0,"delta":`...)
	b = append(b, s...)
	b = append(b, d...)
	b = append(b, `,"logprobs":null,"finish_reason":null}]}`...)
	e.buf = b
	return e.w.Data(b[n:])
}

// Close writes "data: [DONE]" unless the stream ended with an error.
func (e *streamEncoder) Close() error {
	if e.errored {
		return nil
	}
	return e.w.Data(doneMarker)
}

// Wire shape of a chat.completion.chunk (and of an in-band error).
type wireChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// streamDecoder reads chat.completion.chunk events.
type streamDecoder struct {
	r        sse.Reader // in the decoder: one allocation less per stream
	queue    []llm.StreamEvent
	queue0   [2]llm.StreamEvent // queue's first backing: a chunk makes one or two events
	next     int
	started  bool
	finished bool // a finish_reason or an in-band error was seen
	done     bool // the input is over
	fast     chunk
	choices0 [1]choice // fast.choices' first backing: a chunk has one choice
	// A text chunk's bytes around its content string (and its obfuscation
	// string, when it has one), learned from the last text chunk the
	// parser read (see textChunk).
	textPrefix, textMid, textTail []byte
	textObf                       bool   // textMid is followed by the obfuscation string, then textTail
	learned                       []byte // backs textPrefix, textMid and textTail
	// block holds the copies of the strings the events keep (own), cut
	// one after the other from blocks of ownBlock bytes: a stream's
	// deltas cost an allocation per block, not one each.
	block []byte
}

func newStreamDecoder(r io.Reader) *streamDecoder {
	d := &streamDecoder{r: *sse.NewReader(r)}
	d.queue, d.fast.choices = d.queue0[:0], d.choices0[:0]
	return d
}

// ownBlock is the size of the decoder's blocks of kept strings (own): the
// ID, the model and the deltas of a short answer, or of a few dozen
// tokens of a long one. A string longer than a quarter of it is copied
// apart.
const ownBlock = 512

// own returns a copy of s that an event keeps (s views the reader's
// buffer). The copy is cut from the current block; the bytes of a block
// are written once and never changed, so the strings that view it stay
// valid (and keep it alive) whatever the decoder reads next.
func (d *streamDecoder) own(s string) string {
	if len(s) == 0 {
		return ""
	}
	if len(s) > ownBlock/4 {
		return strings.Clone(s)
	}
	if cap(d.block)-len(d.block) < len(s) {
		d.block = make([]byte, 0, ownBlock)
	}
	n := len(d.block)
	d.block = append(d.block, s...)
	return unsafe.String(&d.block[n], len(s))
}

// Next returns the next event: EventStart first, then deltas, the finish,
// usage. It returns io.EOF after [DONE], or at the end of input after a
// finish reason or an in-band error; io.ErrUnexpectedEOF when the input ends
// before either (a cut stream). A chunk that is not valid JSON is an
// *sse.EventError; decoding may continue after it.
func (d *streamDecoder) Next() (llm.StreamEvent, error) {
	for {
		if d.next < len(d.queue) {
			ev := d.queue[d.next]
			d.queue[d.next] = llm.StreamEvent{}
			d.next++
			return ev, nil
		}
		d.queue, d.next = d.queue[:0], 0
		if d.done {
			return llm.StreamEvent{}, d.endErr()
		}
		_, raw, err := d.r.NextBytes()
		if err == io.EOF {
			d.done = true
			return llm.StreamEvent{}, d.endErr()
		}
		if err != nil {
			return llm.StreamEvent{}, err
		}
		// data views the reader's buffer, which the next event overwrites:
		// the fast parser slices it without copying, and emit copies what
		// the events keep (a token's text, a few bytes), so a chunk costs
		// no copy of its whole data.
		data := unsafe.String(unsafe.SliceData(raw), len(raw))
		if data == "[DONE]" {
			d.done, d.finished = true, true
			return llm.StreamEvent{}, io.EOF
		}
		if data == "" {
			continue
		}
		if err := d.decodeChunk(data); err != nil {
			return llm.StreamEvent{}, &sse.EventError{Index: d.r.Index(), Err: err}
		}
	}
}

func (d *streamDecoder) endErr() error {
	if d.finished {
		return io.EOF
	}
	return io.ErrUnexpectedEOF
}

func (d *streamDecoder) decodeChunk(data string) error {
	if d.textChunk(data) {
		return nil
	}
	if parseChunk(data, &d.fast) {
		var usage *llm.Usage
		if d.fast.hasUsage {
			u := d.fast.usage
			usage = &u
		}
		d.learn(data, &d.fast, usage)
		d.emit(&d.fast, usage, d.own)
		return nil
	}
	c, usage, inband, err := slowChunk(data)
	if err != nil {
		return err
	}
	if inband != nil {
		d.finished = true
		d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventError, Err: inband})
		return nil
	}
	d.emit(c, usage, func(s string) string { return s }) // encoding/json's own strings
	return nil
}

// A stream's text chunks differ only in their content string (and in
// OpenAI's obfuscation padding, a random string at the end of each): the
// id, created, model, index and the rest are the same from one to the
// next (the upstream writes them from one template). When a chunk the
// parser read was a plain text chunk (one choice, index 0, a content
// string and nothing else that makes an event), the bytes around its
// content string (and its obfuscation string) are kept; a chunk with the
// same bytes around such strings is then the same chunk with another text,
// and only the strings are read. Anything else (another shape, a finish
// reason, usage, another field that varies per chunk) differs in those
// bytes and takes the parser.

// learn keeps the bytes around c's content string when c is a plain text
// chunk read from data, and forgets them otherwise.
func (d *streamDecoder) learn(data string, c *chunk, usage *llm.Usage) {
	d.textPrefix, d.textMid, d.textTail, d.textObf = nil, nil, nil, false
	if !d.started || usage != nil || len(c.choices) != 1 {
		return
	}
	ch := &c.choices[0]
	if ch.index != 0 || ch.contentEnd == 0 || ch.refusal != "" || len(ch.toolCalls) > 0 || ch.finish != "" {
		return
	}
	// The three in one buffer, kept for the next chunk learned.
	if n := ch.contentAt + len(data) - ch.contentEnd; cap(d.learned) < n {
		d.learned = make([]byte, 0, n+n/4)
	}
	b := append(d.learned[:0], data[:ch.contentAt]...)
	d.textPrefix = b
	if c.obfEnd > 0 && c.obfAt >= ch.contentEnd {
		d.textObf = true
		b = append(b, data[ch.contentEnd:c.obfAt]...)
		d.textMid = b[len(d.textPrefix):]
		b = append(b, data[c.obfEnd:]...)
		d.textTail = b[len(d.textPrefix)+len(d.textMid):]
		return
	}
	b = append(b, data[ch.contentEnd:]...)
	d.textMid = b[len(d.textPrefix):]
}

// textChunk decodes data when it is a text chunk with the learned bytes
// around its strings.
func (d *streamDecoder) textChunk(data string) bool {
	pre := d.textPrefix
	if len(pre) == 0 || len(data) < len(pre) || data[:len(pre)] != string(pre) {
		return false
	}
	p := chunkParser{s: data, i: len(pre)}
	text, ok := p.str()
	if !ok {
		return false
	}
	rest := data[p.i:]
	if !d.textObf {
		if rest != string(d.textMid) {
			return false
		}
	} else {
		mid := d.textMid
		if len(rest) < len(mid) || rest[:len(mid)] != string(mid) {
			return false
		}
		p.i += len(mid)
		if _, ok := p.str(); !ok || data[p.i:] != string(d.textTail) {
			return false
		}
	}
	if text != "" {
		d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventTextDelta, Text: d.own(text)})
	}
	return true
}

// slowChunk decodes a chunk with encoding/json: the reference the fast path
// must agree with, and the path for usage and in-band errors.
func slowChunk(data string) (*chunk, *llm.Usage, *llm.Error, error) {
	var w wireChunk
	if err := json.Unmarshal([]byte(data), &w); err != nil {
		return nil, nil, nil, err
	}
	if !isNull(w.Error) {
		return nil, nil, Codec{}.DecodeError(0, nil, []byte(data)), nil
	}
	c := &chunk{id: w.ID, model: w.Model}
	for _, wc := range w.Choices {
		ch := choice{index: wc.Index}
		if wc.Delta.Content != nil {
			ch.content = *wc.Delta.Content
		}
		if wc.Delta.Refusal != nil {
			ch.refusal = *wc.Delta.Refusal
		}
		if wc.FinishReason != nil {
			ch.finish = *wc.FinishReason
		}
		for _, tc := range wc.Delta.ToolCalls {
			ch.toolCalls = append(ch.toolCalls, toolCallDelta{index: tc.Index, id: tc.ID, name: tc.Function.Name, args: tc.Function.Arguments})
		}
		c.choices = append(c.choices, ch)
	}
	var usage *llm.Usage
	if w.Usage != nil {
		u := fromWireUsage(w.Usage)
		usage = &u
	}
	return c, usage, nil, nil
}

// emit queues the events of one chunk.
// emit queues the events of chunk c; own gives a string of c that an event
// keeps a life of its own (c may view the reader's buffer).
func (d *streamDecoder) emit(c *chunk, usage *llm.Usage, own func(string) string) {
	if !d.started {
		d.started = true
		d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventStart, ID: own(c.id), Model: own(c.model)})
	}
	for i := range c.choices {
		ch := &c.choices[i]
		if ch.index != 0 {
			continue // the normalized model has one choice
		}
		if ch.content != "" {
			d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventTextDelta, Text: own(ch.content)})
		}
		if ch.refusal != "" {
			d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventTextDelta, Text: own(ch.refusal)})
		}
		for _, tc := range ch.toolCalls {
			d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{
				Index: tc.index, ID: own(tc.id), Name: own(tc.name), Arguments: own(tc.args),
			}})
		}
		if ch.finish != "" {
			d.finished = true
			d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventFinish, FinishReason: fromFinishReason(own(ch.finish))})
		}
	}
	if usage != nil {
		d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventUsage, Usage: usage})
	}
}
