package sse_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/llm/sse"
)

// readAll reads every event and the terminating error.
func readAll(r *sse.Reader) ([]sse.Event, error) {
	var evs []sse.Event
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
		if len(evs) > 10000 {
			return evs, errors.New("too many events")
		}
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []sse.Event
	}{
		{"empty", "", nil},
		{"one LF", "data: hello\n\n", []sse.Event{{Data: "hello"}}},
		{"one CRLF", "data: hello\r\n\r\n", []sse.Event{{Data: "hello"}}},
		{"one CR", "data: hello\r\r", []sse.Event{{Data: "hello"}}},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r\n", []sse.Event{{Data: "a\nb\nc"}, {Data: "d"}}},
		{"named", "event: message_start\ndata: {}\n\n", []sse.Event{{Event: "message_start", Data: "{}"}}},
		{"name resets per event", "event: a\ndata: 1\n\ndata: 2\n\n", []sse.Event{{Event: "a", Data: "1"}, {Data: "2"}}},
		{"multi-line data", "data: one\ndata: two\ndata:three\n\n", []sse.Event{{Data: "one\ntwo\nthree"}}},
		{"only one space stripped", "data:  two spaces\n\n", []sse.Event{{Data: " two spaces"}}},
		{"no space", "data:x\n\n", []sse.Event{{Data: "x"}}},
		{"empty data line", "data\n\n", []sse.Event{{Data: ""}}},
		{"empty data with colon", "data:\n\n", []sse.Event{{Data: ""}}},
		{"two empty data lines", "data\ndata\n\n", []sse.Event{{Data: "\n"}}},
		{"field without colon ignored", "event\ndata: x\n\n", []sse.Event{{Data: "x"}}},
		{"comments", ": keep-alive\n\n:another\ndata: x\n: inside\n\n", []sse.Event{{Data: "x"}}},
		{"colon in value", "data: {\"a\":\"b: c\"}\n\n", []sse.Event{{Data: `{"a":"b: c"}`}}},
		{"unknown field ignored", "foo: bar\ndata: x\n\n", []sse.Event{{Data: "x"}}},
		{"no data no dispatch", "event: ping\n\ndata: x\n\n", []sse.Event{{Data: "x"}}},
		{"final event without blank line", "data: a\n\ndata: b", []sse.Event{{Data: "a"}, {Data: "b"}}},
		{"final event with one newline", "data: a\ndata: b\n", []sse.Event{{Data: "a\nb"}}},
		{"final CR only", "data: a\r", []sse.Event{{Data: "a"}}},
		{"BOM", "\xEF\xBB\xBFdata: a\n\n", []sse.Event{{Data: "a"}}},
		{"BOM only once", "\xEF\xBB\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n", []sse.Event{{Data: "a"}}},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []sse.Event{{ID: "7", Data: "a"}, {ID: "7", Data: "b"}, {Data: "c"}}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []sse.Event{{ID: "1", Data: "a"}, {ID: "1", Data: "b"}}},
		{"retry", "retry: 1500\ndata: a\n\nretry: 1x\ndata: b\n\n", []sse.Event{{Data: "a", Retry: 1500}, {Data: "b"}}},
		{"openai done", "data: {\"x\":1}\n\ndata: [DONE]\n\n", []sse.Event{{Data: `{"x":1}`}, {Data: "[DONE]"}}},
		{"leading blank lines", "\n\n\r\ndata: a\n\n", []sse.Event{{Data: "a"}}},
		{"utf8", "data: héllo ✓\n\n", []sse.Event{{Data: "héllo ✓"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readers := map[string]io.Reader{
				"whole":   strings.NewReader(tt.input),
				"onebyte": iotest.OneByteReader(strings.NewReader(tt.input)),
				"half":    iotest.HalfReader(strings.NewReader(tt.input)),
			}
			for kind, in := range readers {
				got, err := readAll(sse.NewReader(in))
				if err != io.EOF {
					t.Fatalf("%s: error = %v, want io.EOF", kind, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s: events (-want +got):\n%s", kind, diff)
				}
			}
		})
	}
}

func TestReaderIndex(t *testing.T) {
	r := sse.NewReader(strings.NewReader(": c\n\ndata: a\n\nevent: x\n\ndata: b\n\n"))
	if got := r.Index(); got != -1 {
		t.Fatalf("Index before Next = %d, want -1", got)
	}
	for want := 0; want < 2; want++ {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if got := r.Index(); got != want {
			t.Fatalf("Index = %d, want %d", got, want)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("second err = %v, want io.EOF (sticky)", err)
	}
	if got := r.Index(); got != 1 {
		t.Fatalf("Index after EOF = %d, want 1", got)
	}
}

func TestReaderMaxEventSize(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		input   string
		want    []sse.Event
		wantErr error
	}{
		{"fits exactly", 8, "data: 12\n\n", []sse.Event{{Data: "12"}}, io.EOF},
		{"one line too long", 8, "data: 123\n\n", nil, sse.ErrEventTooLarge},
		{"lines add up", 12, "data: 1\ndata: 2\n\n", nil, sse.ErrEventTooLarge},
		{"bound is per event", 8, "data: 12\n\ndata: 34\n\n", []sse.Event{{Data: "12"}, {Data: "34"}}, io.EOF},
		{"after a good event", 8, "data: 1\n\ndata: 123456789\n\n", []sse.Event{{Data: "1"}}, sse.ErrEventTooLarge},
		{"unterminated huge line", 16, "data: " + strings.Repeat("x", 100), nil, sse.ErrEventTooLarge},
		{"beyond the buffer", 1 << 20, "data: " + strings.Repeat("x", 100<<10) + "\n\n", []sse.Event{{Data: strings.Repeat("x", 100<<10)}}, io.EOF},
		{"huge beyond the buffer", 64 << 10, "data: " + strings.Repeat("x", 100<<10) + "\n\n", nil, sse.ErrEventTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sse.NewReader(strings.NewReader(tt.input))
			r.SetMaxEventSize(tt.max)
			got, err := readAll(r)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReaderDefaultMax(t *testing.T) {
	big := strings.Repeat("y", sse.DefaultMaxEventSize)
	_, err := readAll(sse.NewReader(strings.NewReader("data: " + big + "\n\n")))
	if !errors.Is(err, sse.ErrEventTooLarge) {
		t.Fatalf("error = %v, want ErrEventTooLarge", err)
	}
}

func TestReaderUnderlyingError(t *testing.T) {
	boom := errors.New("connection reset")
	in := io.MultiReader(strings.NewReader("data: a\n\ndata: partial"), iotest.ErrReader(boom))
	got, err := readAll(sse.NewReader(in))
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v, want %v", err, boom)
	}
	if diff := cmp.Diff([]sse.Event{{Data: "a"}}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestEventError(t *testing.T) {
	inner := errors.New("invalid character 'x'")
	var err error = &sse.EventError{Index: 3, Err: inner}
	if !errors.Is(err, inner) {
		t.Error("EventError does not unwrap to its cause")
	}
	var ee *sse.EventError
	if !errors.As(fmt.Errorf("decode: %w", err), &ee) || ee.Index != 3 {
		t.Errorf("errors.As failed or wrong index: %+v", ee)
	}
	if got, want := err.Error(), "sse: malformed event 3: invalid character 'x'"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestWriter(t *testing.T) {
	tests := []struct {
		name  string
		write func(w *sse.Writer) error
		want  string
	}{
		{"data", func(w *sse.Writer) error { return w.Data([]byte(`{"a":1}`)) }, "data: {\"a\":1}\n\n"},
		{"named", func(w *sse.Writer) error { return w.Event("ping", []byte(`{}`)) }, "event: ping\ndata: {}\n\n"},
		{"multi-line", func(w *sse.Writer) error { return w.Data([]byte("a\nb\r\nc\rd")) }, "data: a\ndata: b\ndata: c\ndata: d\n\n"},
		{"trailing newline", func(w *sse.Writer) error { return w.Data([]byte("a\n")) }, "data: a\ndata: \n\n"},
		{"empty", func(w *sse.Writer) error { return w.Data(nil) }, "data: \n\n"},
		{"comment", func(w *sse.Writer) error { return w.Comment("keep-alive") }, ": keep-alive\n\n"},
		{"multi-line comment", func(w *sse.Writer) error { return w.Comment("a\nb") }, ": a\n: b\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(sse.NewWriter(&buf)); err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != tt.want {
				t.Errorf("wrote %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWriterBadName(t *testing.T) {
	var buf bytes.Buffer
	if err := sse.NewWriter(&buf).Event("a\nb", nil); err == nil {
		t.Fatal("no error for a name with a line break")
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %q on error", buf.String())
	}
}

// countingWriter counts Write calls.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.Buffer.Write(p)
}

func TestWriterOneWritePerEvent(t *testing.T) {
	var cw countingWriter
	w := sse.NewWriter(&cw)
	_ = w.Event("a", []byte("1\n2\n3"))
	_ = w.Comment("x")
	_ = w.Data([]byte("y"))
	if cw.writes != 3 {
		t.Errorf("Write called %d times for 3 events, want 3", cw.writes)
	}
}

func TestRoundTrip(t *testing.T) {
	events := []sse.Event{
		{Event: "message_start", Data: `{"type":"message_start"}`},
		{Data: "line one\nline two\n\nafter blank"},
		{Data: ""},
		{Event: "x", Data: " leading space"},
		{Data: "[DONE]"},
	}
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	for _, ev := range events {
		if err := w.Event(ev.Event, []byte(ev.Data)); err != nil {
			t.Fatal(err)
		}
		_ = w.Comment("between")
	}
	got, err := readAll(sse.NewReader(&buf))
	if err != io.EOF {
		t.Fatalf("error = %v", err)
	}
	if diff := cmp.Diff(events, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestNextBytesAllocations: NextBytes hands each event's data over in the
// reader's buffer, without allocating per event once its buffers have
// grown, where Next allocates the data's string.
func TestNextBytesAllocations(t *testing.T) {
	const ev = "data: {\"choices\":[{\"delta\":{\"content\":\"Prov\"}}]}\n\n"
	in := strings.NewReader(strings.Repeat(ev, 2000))
	rd := sse.NewReader(in)
	for range 10 { // buffers grow to the event's size
		if _, _, err := rd.NextBytes(); err != nil {
			t.Fatal(err)
		}
	}
	var data []byte
	allocs := testing.AllocsPerRun(500, func() {
		var err error
		if _, data, err = rd.NextBytes(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("NextBytes: %.1f allocations per event, want 0", allocs)
	}
	if want := strings.TrimSuffix(strings.TrimPrefix(ev, "data: "), "\n\n"); string(data) != want {
		t.Errorf("data = %q, want %q", data, want)
	}
	allocs = testing.AllocsPerRun(500, func() {
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 1 {
		t.Errorf("Next: %.1f allocations per event, want 1 (its data)", allocs)
	}
}
