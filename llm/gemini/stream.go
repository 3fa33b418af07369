package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/sse"
)

// NewStreamEncoder returns an encoder writing streamGenerateContent?alt=sse
// chunks to w: one "data: {GenerateContentResponse}" event per chunk, with no
// event names, comments or end marker, since the official SDKs read nothing
// else.
//
// EventStart writes nothing (ID and Model are repeated in every chunk as
// responseId and modelVersion). A text delta is one chunk. Gemini sends a
// function call whole, so tool-call deltas are gathered and the call is
// written as one chunk when the next call, any other event, or Close comes.
// EventFinish and EventUsage are written together as the final chunk (Gemini
// puts finishReason and usageMetadata in the same chunk), when the second of
// them arrives or at Close. EventError writes Google's {"error": {...}} object
// as a chunk, as the API does when a stream fails after it started.
func (Codec) NewStreamEncoder(w io.Writer) llm.StreamEncoder {
	return &streamEncoder{w: sse.NewWriter(w)}
}

type streamEncoder struct {
	w         *sse.Writer
	buf       []byte
	id, model string
	// call is a tool call being gathered from its deltas; index is its
	// ToolCallDelta.Index.
	call    *llm.ToolCall
	index   int
	finish  string // a finish reason waiting for its usage
	usage   *llm.Usage
	written bool // the final chunk is out
}

func (e *streamEncoder) Encode(ev llm.StreamEvent) error {
	switch ev.Type {
	case llm.EventStart:
		e.id, e.model = responseID(ev.ID), ev.Model
		return nil
	case llm.EventTextDelta:
		if err := e.flush(false); err != nil {
			return err
		}
		return e.write(&chunk{hasText: true, text: ev.Text})
	case llm.EventToolCallDelta:
		d := ev.ToolCall
		if d == nil {
			return errors.New("gemini: tool_call_delta event without a tool call")
		}
		if e.call != nil && d.Index == e.index {
			e.call.Arguments += d.Arguments
			if e.call.ID == "" {
				e.call.ID = d.ID
			}
			if e.call.Name == "" {
				e.call.Name = d.Name
			}
			return nil
		}
		if err := e.flush(false); err != nil {
			return err
		}
		e.call = &llm.ToolCall{ID: d.ID, Name: d.Name, Arguments: d.Arguments}
		e.index = d.Index
		return nil
	case llm.EventFinish:
		if err := e.flushCall(); err != nil {
			return err
		}
		e.finish = finishTo(ev.FinishReason)
		if e.finish == "" {
			return errors.New("gemini: finish event without a finish reason")
		}
		if e.usage != nil {
			return e.flush(true)
		}
		return nil
	case llm.EventUsage:
		if ev.Usage == nil {
			return errors.New("gemini: usage event without usage")
		}
		if err := e.flushCall(); err != nil {
			return err
		}
		u := *ev.Usage
		e.usage = &u
		if e.finish != "" || e.written {
			return e.flush(true)
		}
		return nil
	case llm.EventError:
		if err := e.flush(false); err != nil {
			return err
		}
		if ev.Err == nil {
			return errors.New("gemini: error event without an error")
		}
		_, body := Codec{}.EncodeError(ev.Err)
		return e.w.Data(body)
	default:
		return fmt.Errorf("gemini: unknown stream event type %q", ev.Type)
	}
}

// Close writes what is still held back: a gathered tool call and the final
// chunk.
func (e *streamEncoder) Close() error {
	return e.flush(true)
}

func (e *streamEncoder) flushCall() error {
	if e.call == nil {
		return nil
	}
	c := chunk{calls: []llm.ToolCall{*e.call}}
	e.call = nil
	return e.write(&c)
}

// flush writes the pending call and, if final or other content comes after
// it, the pending finish and usage.
func (e *streamEncoder) flush(final bool) error {
	if err := e.flushCall(); err != nil {
		return err
	}
	if e.finish == "" && (e.usage == nil || !final) {
		return nil
	}
	c := chunk{finish: e.finish, usage: e.usage}
	e.finish, e.usage = "", nil
	e.written = true
	return e.write(&c)
}

func (e *streamEncoder) write(c *chunk) error {
	c.id, c.model = e.id, e.model
	b, err := c.append(e.buf[:0])
	if err != nil {
		return err
	}
	e.buf = b
	return e.w.Data(b)
}

// NewStreamDecoder returns a decoder of streamGenerateContent?alt=sse
// chunks. It emits EventStart first (ID from responseId, Model from
// modelVersion), then per chunk its text deltas and one ToolCallDelta per
// function call (whole: ID, Name and all Arguments; a call without an id gets
// "call_N", N counting the stream's calls from 0), then, at the chunk with a
// finishReason, EventFinish and EventUsage (the last usageMetadata seen: the
// API repeats running totals in every chunk). A usageMetadata after the
// finish is another EventUsage. An {"error": {...}} chunk is an EventError.
//
// Gemini streams have no end marker: Next returns io.EOF when the input ends
// after a finish reason or an error, and io.ErrUnexpectedEOF when it ends
// without either (a cut stream). A chunk that is not JSON, or holds parts
// brownout does not model, is an *sse.EventError with the event's index.
func (Codec) NewStreamDecoder(r io.Reader) llm.StreamDecoder {
	return &streamDecoder{r: sse.NewReader(r)}
}

type streamDecoder struct {
	r        *sse.Reader
	queue    []llm.StreamEvent
	head     int
	started  bool
	finished bool // a finish reason or an error was seen
	calls    int
	usage    *llm.Usage
}

func (d *streamDecoder) Next() (llm.StreamEvent, error) {
	for d.head == len(d.queue) {
		d.queue, d.head = d.queue[:0], 0
		// The data is the reader's buffer, decoded at once by
		// encoding/json (which copies what it keeps): no string of it.
		_, data, err := d.r.NextBytes()
		if err == io.EOF {
			if d.finished {
				return llm.StreamEvent{}, io.EOF
			}
			return llm.StreamEvent{}, io.ErrUnexpectedEOF
		}
		if err != nil {
			return llm.StreamEvent{}, err
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		if err := d.chunk(data); err != nil {
			d.queue = d.queue[:0]
			return llm.StreamEvent{}, &sse.EventError{Index: d.r.Index(), Err: err}
		}
	}
	ev := d.queue[d.head]
	d.queue[d.head] = llm.StreamEvent{}
	d.head++
	return ev, nil
}

func (d *streamDecoder) chunk(data []byte) error {
	var c response
	if err := json.Unmarshal(data, &c); err != nil {
		return err
	}
	if c.Error != nil {
		d.finished = true
		d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventError, Err: fromErrorObject(0, c.Error)})
		return nil
	}
	if !d.started {
		d.started = true
		d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventStart, ID: c.ResponseID, Model: c.ModelVersion})
	}
	if c.UsageMetadata != nil {
		u := usageFrom(c.UsageMetadata)
		d.usage = &u
	}
	var reason string
	if len(c.Candidates) > 0 {
		cand := &c.Candidates[0]
		reason = cand.FinishReason
		if cand.Content != nil {
			for j, p := range cand.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					id := p.FunctionCall.ID
					if id == "" {
						id = syntheticID(d.calls)
					}
					args, err := argsText(p.FunctionCall.Args)
					if err != nil {
						return fmt.Errorf("candidates[0].content.parts[%d].functionCall.args: %w", j, err)
					}
					d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventToolCallDelta,
						ToolCall: &llm.ToolCallDelta{Index: d.calls, ID: id, Name: p.FunctionCall.Name, Arguments: args}})
					d.calls++
				case p.Text != nil:
					if !p.Thought && *p.Text != "" {
						d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventTextDelta, Text: *p.Text})
					}
				default:
					return fmt.Errorf("candidates[0].content.parts[%d]: only text and functionCall parts are supported", j)
				}
			}
		}
	} else if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" {
		reason = "SAFETY"
	}
	switch fr := finishFrom(reason, d.calls > 0); {
	case fr != "" && !d.finished:
		d.finished = true
		d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventFinish, FinishReason: fr})
		if d.usage != nil {
			d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventUsage, Usage: d.usage})
		}
	case d.finished && c.UsageMetadata != nil:
		d.queue = append(d.queue, llm.StreamEvent{Type: llm.EventUsage, Usage: d.usage})
	}
	return nil
}
