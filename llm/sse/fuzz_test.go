package sse_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/brownout-dev/brownout/llm/sse"
)

// FuzzReader checks that the reader never panics, never returns an event
// larger than its bound, does not depend on how the input is chunked, and
// that what it reads survives a Writer round trip.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n",
		"event: x\r\ndata: 1\r\ndata: 2\r\n\r\n",
		"data: a\rdata: b\r\r: c\r",
		"\xEF\xBB\xBFid: 1\ndata\nretry: 10\n\n",
		"data: {\"choices\":[]}\n\ndata: [DONE]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const max = 256
		read := func(r io.Reader) ([]sse.Event, error) {
			rd := sse.NewReader(r)
			rd.SetMaxEventSize(max)
			var evs []sse.Event
			for {
				ev, err := rd.Next()
				if err != nil {
					return evs, err
				}
				if len(ev.Data) > max || len(ev.Event) > max {
					t.Fatalf("event over the bound: %d data bytes", len(ev.Data))
				}
				if rd.Index() != len(evs) {
					t.Fatalf("Index = %d, want %d", rd.Index(), len(evs))
				}
				evs = append(evs, ev)
			}
		}
		whole, err1 := read(bytes.NewReader(in))
		bytewise, err2 := read(iotest.OneByteReader(bytes.NewReader(in)))
		// NextBytes reads what Next reads.
		rb := sse.NewReader(iotest.HalfReader(bytes.NewReader(in)))
		rb.SetMaxEventSize(max)
		var raw []sse.Event
		var err3 error
		for {
			ev, data, err := rb.NextBytes()
			if err != nil {
				err3 = err
				break
			}
			if ev.Data != "" {
				t.Fatalf("NextBytes set Data %q", ev.Data)
			}
			ev.Data = string(data)
			raw = append(raw, ev)
		}
		if err3 != err1 {
			t.Fatalf("NextBytes ends with %v, Next with %v", err3, err1)
		}
		if diff := cmp.Diff(whole, raw); diff != "" {
			t.Fatalf("NextBytes differs from Next:\n%s", diff)
		}
		if err1 != err2 {
			t.Fatalf("errors differ by chunking: %v vs %v", err1, err2)
		}
		if diff := cmp.Diff(whole, bytewise); diff != "" {
			t.Fatalf("events differ by chunking:\n%s", diff)
		}
		if err1 != io.EOF {
			return
		}
		var buf bytes.Buffer
		w := sse.NewWriter(&buf)
		for _, ev := range whole {
			if strings.ContainsAny(ev.Event, "\r\n") {
				t.Fatalf("event name with a line break: %q", ev.Event)
			}
			if err := w.Event(ev.Event, []byte(ev.Data)); err != nil {
				t.Fatal(err)
			}
		}
		// The writer splits CR inside data into lines, which the reader
		// joins back with LF.
		want := make([]sse.Event, len(whole))
		for i, ev := range whole {
			want[i] = sse.Event{Event: ev.Event, Data: ev.Data}
		}
		rd := sse.NewReader(&buf)
		rd.SetMaxEventSize(4 * max) // the writer adds "data: " per line
		var got []sse.Event
		for {
			ev, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("reading back: %v", err)
			}
			got = append(got, sse.Event{Event: ev.Event, Data: ev.Data})
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip differs:\n%s", diff)
		}
	})
}

func BenchmarkReader(b *testing.B) {
	// A realistic OpenAI-style stream: 200 content chunks and [DONE].
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	chunk := []byte(`{"id":"chatcmpl-abc123","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}]}`)
	for range 200 {
		_ = w.Data(chunk)
		_ = w.Comment("keep-alive")
	}
	_ = w.Data([]byte("[DONE]"))
	input := buf.Bytes()
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	rd := bytes.NewReader(input)
	for b.Loop() {
		rd.Reset(input)
		r := sse.NewReader(rd)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}
