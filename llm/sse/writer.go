package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
)

// Writer writes events to a stream. Each method issues exactly one Write to
// the underlying writer, so a caller can flush after every event.
type Writer struct {
	w   io.Writer
	buf []byte
}

// writerBufSize is the least a Writer's buffer holds once it writes: an
// event of a few hundred bytes (an LLM stream's chunk) then costs it no
// allocation, where growing by append cost a few in each stream.
const writerBufSize = 512

// NewWriter returns a writer of events to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

var errBadName = errors.New("sse: event name contains a line break")

// Event writes an event: an "event: name" line (omitted when name is ""),
// one "data: " line per line of data (LF, CRLF and CR all break lines), and
// the blank line that ends the event.
func (w *Writer) Event(name string, data []byte) error {
	if strings.ContainsAny(name, "\r\n") {
		return errBadName
	}
	b := w.buf[:0]
	if need := len("event: \ndata: \n\n") + len(name) + len(data); cap(b) < need {
		b = make([]byte, 0, max(need+need/4, writerBufSize))
	}
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	for {
		i := indexBreak(data)
		b = append(b, "data: "...)
		if i < 0 {
			b = append(b, data...)
			b = append(b, '\n')
			break
		}
		b = append(b, data[:i]...)
		b = append(b, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b = append(b, '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// Data writes an unnamed event; it is Event("", data).
func (w *Writer) Data(data []byte) error { return w.Event("", data) }

// Comment writes a comment block (": text" per line, then a blank line),
// which readers ignore; servers send it as a keep-alive.
func (w *Writer) Comment(text string) error {
	b := w.buf[:0]
	for {
		i := strings.IndexAny(text, "\r\n")
		b = append(b, ": "...)
		if i < 0 {
			b = append(b, text...)
			b = append(b, '\n')
			break
		}
		b = append(b, text[:i]...)
		b = append(b, '\n')
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
	b = append(b, '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// indexBreak returns the index of the first CR or LF in b, or -1. Event
// data is JSON, where a raw line break is rare: two vectorized searches
// (bytes.IndexByte) cost less than one byte-by-byte loop over a chunk.
func indexBreak(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	return i
}
