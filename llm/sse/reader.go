package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// DefaultMaxEventSize bounds the bytes of one event (its field lines, without
// line terminators) unless SetMaxEventSize says otherwise.
const DefaultMaxEventSize = 1 << 20

// ErrEventTooLarge is returned by [Reader.Next] when an event exceeds the
// reader's maximum event size. The reader is unusable afterwards.
var ErrEventTooLarge = errors.New("sse: event exceeds maximum size")

// Event is one server-sent event.
type Event struct {
	// ID is the last event ID seen so far in the stream (it persists across
	// events, as the standard says), or "".
	ID string
	// Event is the value of the "event:" field, or "" when absent.
	Event string
	// Data is the data lines of the event joined with "\n".
	Data string
	// Retry is the value of a valid "retry:" field in this event, in
	// milliseconds, or 0.
	Retry int
}

// EventError is a malformed event: one that is valid SSE but whose payload a
// codec cannot parse (bad JSON, an unknown shape). Index is the event's
// zero-based position in the stream.
type EventError struct {
	Index int
	Err   error
}

func (e *EventError) Error() string {
	return fmt.Sprintf("sse: malformed event %d: %v", e.Index, e.Err)
}

func (e *EventError) Unwrap() error { return e.Err }

// Reader reads events from a stream.
type Reader struct {
	br      *bufio.Reader
	max     int
	index   int
	started bool // BOM check done
	err     error
	// pendingCR is set when the last line ended with a CR: a LF right after
	// it belongs to the same terminator.
	pendingCR bool

	line []byte // a line longer than the buffered window, assembled here
	data []byte // the current event's data buffer
	id   string // last event ID
	name string // last event name, reused to avoid allocating per event
}

// ReadBufferSize is the reader's buffered window: what a Reader holds of
// its input besides the event in progress (whose line and data it keeps in
// buffers of their own, up to the maximum event size). Lines longer than
// it are assembled apart, so it bounds memory per open stream (many
// streams are held at once), not event size. 4 KiB holds the dozen or
// more provider chunks (a few hundred bytes each) a fast upstream sends
// between two reads, so a stream is read in few calls to the reader below
// (each of which may be a system call, and, in the gateway, a flush to the
// client); 1 KiB saved 3 KiB per held stream and cost about a fifth more
// CPU per relayed stream. It is exported for callers that account for the
// memory of the streams they hold.
const ReadBufferSize = 4 << 10

// dataBufSize is the least a Reader's buffer of an event's data holds
// once it reads one: the chunks of an LLM stream (a few hundred bytes, the
// last ones the largest) then fill it without growing it.
const dataBufSize = 512

// NewReader returns a reader of events from r with the default maximum event
// size.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, ReadBufferSize), max: DefaultMaxEventSize, index: -1}
}

// SetMaxEventSize sets the bound on one event's size in bytes; n <= 0
// restores the default.
func (r *Reader) SetMaxEventSize(n int) {
	if n <= 0 {
		n = DefaultMaxEventSize
	}
	r.max = n
}

// Index returns the zero-based index of the last event returned by Next, or
// -1 before the first.
func (r *Reader) Index() int { return r.index }

// Next returns the next event. It returns io.EOF at the clean end of the
// input; a final event not followed by a blank line is still delivered first.
// Blocks with no data field (comments, a lone "event:" or "retry:") dispatch
// nothing, as the standard says. Any other error of the underlying reader is
// returned as is.
func (r *Reader) Next() (Event, error) {
	ev, data, err := r.NextBytes()
	if err != nil {
		return Event{}, err
	}
	ev.Data = string(data)
	return ev, nil
}

// NextBytes is Next without the copy of the event's data into a string:
// the event's Data is empty and its data is returned as bytes of the
// reader's own buffer, valid until the next call to Next or NextBytes (as
// bufio.Scanner's Bytes). A decoder that parses an event's data at once
// and keeps little of it saves an allocation of the event's size per
// event.
func (r *Reader) NextBytes() (Event, []byte, error) {
	if r.err != nil {
		return Event{}, nil, r.err
	}
	if !r.started {
		r.started = true
		if b, err := r.br.Peek(3); err == nil && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
			_, _ = r.br.Discard(3)
		}
	}
	var (
		size    int
		hasData bool
		retry   int
		named   bool
	)
	r.data = r.data[:0]
	for {
		line, err := r.readLine(r.max - size)
		if err != nil && !(err == io.EOF && len(line) > 0) {
			if err == io.EOF && hasData {
				// A final event without its blank line: deliver it; the
				// next call returns io.EOF.
				r.err = io.EOF
				return r.dispatch(named, retry), r.data, nil
			}
			r.err = err
			return Event{}, nil, err
		}
		size += len(line)
		if len(line) == 0 {
			if hasData {
				return r.dispatch(named, retry), r.data, nil
			}
			// An empty block (or only comments, event, id or retry):
			// nothing to dispatch; reset the event name.
			named, retry, size = false, 0, 0
			continue
		}
		if line[0] == ':' {
			continue // comment
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if r.data == nil {
				r.data = make([]byte, 0, max(len(value)+len(value)/2, dataBufSize))
			}
			if hasData {
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			hasData = true
		case "event":
			named = true
			if string(value) != r.name {
				r.name = string(value)
			}
		case "id":
			if bytes.IndexByte(value, 0) < 0 && string(value) != r.id {
				r.id = string(value)
			}
		case "retry":
			if n, ok := digits(value); ok {
				retry = n
			}
		}
		if err == io.EOF {
			// Last line had no terminator.
			if hasData {
				r.err = io.EOF
				return r.dispatch(named, retry), r.data, nil
			}
			r.err = io.EOF
			return Event{}, nil, io.EOF
		}
	}
}

func (r *Reader) dispatch(named bool, retry int) Event {
	r.index++
	ev := Event{ID: r.id, Retry: retry}
	if named {
		ev.Event = r.name
	}
	return ev
}

// digits parses a non-empty run of ASCII digits.
func digits(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(string(b))
	return n, err == nil
}

// readLine returns the next line without its terminator. The slice is valid
// until the next call. At the end of input it returns the unterminated rest
// (possibly empty) with io.EOF. A line longer than limit is ErrEventTooLarge.
func (r *Reader) readLine(limit int) ([]byte, error) {
	r.line = r.line[:0]
	long := false
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				if err == io.EOF {
					return r.line, io.EOF
				}
				return nil, err
			}
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		if r.pendingCR {
			r.pendingCR = false
			if buf[0] == '\n' {
				_, _ = r.br.Discard(1)
				buf = buf[1:]
				if len(buf) == 0 {
					continue
				}
			}
		}
		end := bytes.IndexByte(buf, '\n')
		scan := buf
		if end >= 0 {
			scan = buf[:end]
		}
		if cr := bytes.IndexByte(scan, '\r'); cr >= 0 {
			end = cr
			r.pendingCR = true
		}
		if end < 0 {
			if len(r.line)+len(buf) > limit {
				return nil, ErrEventTooLarge
			}
			r.line = append(r.line, buf...)
			long = true
			_, _ = r.br.Discard(len(buf))
			continue
		}
		if len(r.line)+end > limit {
			return nil, ErrEventTooLarge
		}
		var line []byte
		if long {
			r.line = append(r.line, buf[:end]...)
			line = r.line
		} else {
			line = buf[:end]
		}
		_, _ = r.br.Discard(end + 1)
		return line, nil
	}
}
