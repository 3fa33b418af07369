package responses

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/sse"
)

// streamEncoder writes the Responses API's semantic events. It keeps the
// output items written so far: response.completed carries them all.
type streamEncoder struct {
	c       Codec
	w       *sse.Writer
	seq     int
	resp    wireResponse
	started bool
	errored bool
	// open is the index in resp.Output of the item being written, or -1.
	open int
	// calls maps a normalized tool call index to its output index.
	calls  map[int]int
	finish llm.FinishReason
	usage  *llm.Usage
}

func newStreamEncoder(c Codec, w io.Writer) *streamEncoder {
	return &streamEncoder{c: c, w: sse.NewWriter(w), open: -1}
}

// event writes one event: its type as the SSE event name, and a data object
// with type and sequence_number first.
func (e *streamEncoder) event(typ string, fields map[string]any) error {
	fields["type"] = typ
	fields["sequence_number"] = e.seq
	e.seq++
	b, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	return e.w.Event(typ, b)
}

func (e *streamEncoder) start(id, model string) error {
	e.started = true
	e.resp = e.c.envelope(id, model, 0)
	if err := e.event("response.created", map[string]any{"response": e.resp}); err != nil {
		return err
	}
	return e.event("response.in_progress", map[string]any{"response": e.resp})
}

// Encode writes one normalized event as the semantic events it stands for.
func (e *streamEncoder) Encode(ev llm.StreamEvent) error {
	if e.errored {
		return errors.New("responses: stream encoder: event after an error")
	}
	if ev.Type == llm.EventStart {
		return e.start(ev.ID, ev.Model)
	}
	if !e.started {
		if err := e.start("", ""); err != nil {
			return err
		}
	}
	switch ev.Type {
	case llm.EventTextDelta:
		if e.open < 0 || e.resp.Output[e.open].Type != "message" {
			if err := e.openMessage(); err != nil {
				return err
			}
		}
		it := &e.resp.Output[e.open]
		it.Content[0].Text += ev.Text
		return e.event("response.output_text.delta", map[string]any{"item_id": it.ID, "output_index": e.open,
			"content_index": 0, "delta": ev.Text, "logprobs": []any{}})
	case llm.EventToolCallDelta:
		d := ev.ToolCall
		if d == nil {
			return errors.New("responses: stream encoder: tool call event without a delta")
		}
		idx, ok := e.calls[d.Index]
		if !ok {
			if err := e.openCall(d); err != nil {
				return err
			}
			idx = e.open
		}
		if d.Arguments == "" {
			return nil
		}
		it := &e.resp.Output[idx]
		*it.Arguments += d.Arguments
		return e.event("response.function_call_arguments.delta", map[string]any{"item_id": it.ID, "output_index": idx, "delta": d.Arguments})
	case llm.EventFinish:
		e.finish = ev.FinishReason
		return e.closeOpen()
	case llm.EventUsage:
		if ev.Usage != nil {
			u := *ev.Usage
			e.usage = &u
		}
		return nil
	case llm.EventError:
		if ev.Err == nil {
			return errors.New("responses: stream encoder: error event without an error")
		}
		e.errored = true
		return e.event("error", errorFields(e.c, ev.Err))
	}
	return fmt.Errorf("responses: stream encoder: unknown event %q", ev.Type)
}

// errorFields are the fields of the in-band error event: OpenAI's code (or
// type), message and param.
func errorFields(c Codec, le *llm.Error) map[string]any {
	_, body := c.EncodeError(le)
	var w struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &w)
	code := w.Error.Type
	if w.Error.Code != nil {
		code = *w.Error.Code
	}
	return map[string]any{"code": code, "message": w.Error.Message, "param": w.Error.Param}
}

func (e *streamEncoder) openMessage() error {
	if err := e.closeOpen(); err != nil {
		return err
	}
	e.open = len(e.resp.Output)
	it := outputItem{Type: "message", ID: itemID("msg_", e.resp.ID, e.open), Status: "in_progress", Role: "assistant", Content: []outputPart{}}
	e.resp.Output = append(e.resp.Output, it)
	if err := e.event("response.output_item.added", map[string]any{"output_index": e.open, "item": it}); err != nil {
		return err
	}
	part := outputPart{Type: "output_text", Annotations: []any{}}
	e.resp.Output[e.open].Content = []outputPart{part}
	return e.event("response.content_part.added", map[string]any{"item_id": it.ID, "output_index": e.open, "content_index": 0,
		"part": part})
}

func (e *streamEncoder) openCall(d *llm.ToolCallDelta) error {
	if err := e.closeOpen(); err != nil {
		return err
	}
	e.open = len(e.resp.Output)
	if e.calls == nil {
		e.calls = map[int]int{}
	}
	e.calls[d.Index] = e.open
	args := ""
	it := outputItem{Type: "function_call", ID: itemID("fc_", e.resp.ID, e.open), Status: "in_progress",
		CallID: callID(d.ID, e.resp.ID, len(e.calls)-1), Name: d.Name, Arguments: &args}
	e.resp.Output = append(e.resp.Output, it)
	return e.event("response.output_item.added", map[string]any{"output_index": e.open, "item": it})
}

// closeOpen writes the done events of the item being written: completed,
// or incomplete when the answer was cut by its token limit or a filter.
func (e *streamEncoder) closeOpen() error {
	if e.open < 0 {
		return nil
	}
	i := e.open
	e.open = -1
	it := &e.resp.Output[i]
	it.Status, _ = status(e.finish)
	switch it.Type {
	case "message":
		text := it.Content[0].Text
		if err := e.event("response.output_text.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "text": text, "logprobs": []any{}}); err != nil {
			return err
		}
		if err := e.event("response.content_part.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "part": it.Content[0]}); err != nil {
			return err
		}
	case "function_call":
		if err := e.event("response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": i, "name": it.Name, "arguments": *it.Arguments}); err != nil {
			return err
		}
	}
	return e.event("response.output_item.done", map[string]any{"output_index": i, "item": *it})
}

// Close writes the terminal event: response.completed, or
// response.incomplete for an answer cut by its token limit or a filter.
func (e *streamEncoder) Close() error {
	if e.errored {
		return nil
	}
	if !e.started {
		if err := e.start("", ""); err != nil {
			return err
		}
	}
	if err := e.closeOpen(); err != nil {
		return err
	}
	e.resp.Status, e.resp.IncompleteDetails = status(e.finish)
	if e.usage != nil {
		e.resp.Usage = toWireUsage(*e.usage)
	}
	typ := "response.completed"
	if e.resp.Status == "incomplete" {
		typ = "response.incomplete"
	}
	return e.event(typ, map[string]any{"response": e.resp})
}

// streamDecoder reads the semantic events back into normalized ones.
type streamDecoder struct {
	r *sse.Reader
	// calls maps an output index to its normalized tool call index.
	calls   map[int]int
	pending []llm.StreamEvent
	done    bool
}

func newStreamDecoder(r io.Reader) *streamDecoder { return &streamDecoder{r: sse.NewReader(r)} }

type wireEvent struct {
	Type        string          `json:"type"`
	Response    *wireResponse   `json:"response"`
	OutputIndex int             `json:"output_index"`
	Item        *outputItem     `json:"item"`
	Delta       string          `json:"delta"`
	Code        *string         `json:"code"`
	Message     string          `json:"message"`
	Param       *string         `json:"param"`
	Error       json.RawMessage `json:"error"`
}

// Next returns the next normalized event: response.created is EventStart,
// text and argument deltas are deltas, a function_call item's
// output_item.added opens a tool call, response.completed (or incomplete)
// is EventFinish then EventUsage, and "error" or response.failed is an
// EventError. The stream's end without a terminal event is
// io.ErrUnexpectedEOF.
func (d *streamDecoder) Next() (llm.StreamEvent, error) {
	for {
		if len(d.pending) > 0 {
			ev := d.pending[0]
			d.pending = d.pending[1:]
			return ev, nil
		}
		if d.done {
			return llm.StreamEvent{}, io.EOF
		}
		// The data is the reader's buffer, decoded at once by
		// encoding/json (which copies what it keeps): no string of it.
		_, data, err := d.r.NextBytes()
		if err == io.EOF {
			return llm.StreamEvent{}, io.ErrUnexpectedEOF
		}
		if err != nil {
			return llm.StreamEvent{}, err
		}
		var w wireEvent
		if err := json.Unmarshal(data, &w); err != nil {
			return llm.StreamEvent{}, &sse.EventError{Index: d.r.Index(), Err: err}
		}
		switch w.Type {
		case "response.created":
			if w.Response != nil {
				return llm.StreamEvent{Type: llm.EventStart, ID: w.Response.ID, Model: w.Response.Model}, nil
			}
		case "response.output_text.delta":
			return llm.StreamEvent{Type: llm.EventTextDelta, Text: w.Delta}, nil
		case "response.output_item.added":
			if w.Item != nil && w.Item.Type == "function_call" {
				if d.calls == nil {
					d.calls = map[int]int{}
				}
				n := len(d.calls)
				d.calls[w.OutputIndex] = n
				args := ""
				if w.Item.Arguments != nil {
					args = *w.Item.Arguments
				}
				return llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: n, ID: w.Item.CallID, Name: w.Item.Name, Arguments: args}}, nil
			}
		case "response.function_call_arguments.delta":
			if n, ok := d.calls[w.OutputIndex]; ok {
				return llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: n, Arguments: w.Delta}}, nil
			}
		case "response.completed", "response.incomplete":
			if w.Response == nil {
				return llm.StreamEvent{}, &sse.EventError{Index: d.r.Index(), Err: errors.New(w.Type + " without a response")}
			}
			r := w.Response.response()
			d.done = true
			u := r.Usage
			d.pending = append(d.pending, llm.StreamEvent{Type: llm.EventFinish, FinishReason: r.FinishReason},
				llm.StreamEvent{Type: llm.EventUsage, Usage: &u})
		case "response.failed":
			msg, code := "response failed", ""
			if w.Response != nil && w.Response.Error != nil {
				msg, code = w.Response.Error.Message, w.Response.Error.Code
			}
			return llm.StreamEvent{Type: llm.EventError, Err: decodeInBand(code, msg, nil)}, nil
		case "error":
			code := ""
			if w.Code != nil {
				code = *w.Code
			}
			return llm.StreamEvent{Type: llm.EventError, Err: decodeInBand(code, w.Message, w.Param)}, nil
		}
	}
}

// decodeInBand reads an in-band error as OpenAI's error body would be read.
func decodeInBand(code, msg string, param *string) *llm.Error {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "code": code, "param": param, "type": code}})
	var c Codec
	e := c.DecodeError(0, nil, body)
	return e
}
