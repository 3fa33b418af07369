package gemini_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/gemini"
	"github.com/brownout-dev/brownout/llm/sse"
)

// addFixtures adds every testdata/dir file as a seed, next to the corpus Go
// reads from testdata/fuzz/<FuzzName>.
func addFixtures(f *testing.F, dir string) {
	names, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeRequest: any body either decodes or is a 400 *llm.Error; a body
// that decodes re-encodes, and the re-encoded body decodes to the same request.
func FuzzDecodeRequest(f *testing.F) {
	addFixtures(f, "requests")
	f.Fuzz(func(t *testing.T, body []byte) {
		c := gemini.Codec{}
		req, err := c.DecodeRequest(body)
		if err != nil {
			var e *llm.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Type != llm.ErrInvalidRequest || e.Message == "" {
				t.Fatalf("error %v (%T) is not a 400 *llm.Error", err, err)
			}
			return
		}
		enc, err := c.EncodeRequest(req)
		if err != nil {
			t.Fatalf("EncodeRequest of a decoded request: %v", err)
		}
		again, err := c.DecodeRequest(enc)
		if err != nil {
			t.Fatalf("DecodeRequest of the re-encoded body: %v\n%s", err, enc)
		}
		// Ids of the synthetic form are not written, so they may be renumbered.
		if !bytes.Contains(body, []byte("call_")) {
			if diff := cmp.Diff(req, again, cmp.Comparer(rawEqual)); diff != "" {
				t.Fatalf("round trip changed the request (-first +second):\n%s", diff)
			}
		}
	})
}

// FuzzDecodeResponse: no panic; a response that decodes re-encodes and decodes
// the same.
func FuzzDecodeResponse(f *testing.F) {
	addFixtures(f, "responses")
	f.Fuzz(func(t *testing.T, body []byte) {
		c := gemini.Codec{}
		resp, err := c.DecodeResponse(body)
		if err != nil {
			return
		}
		enc, err := c.EncodeResponse(resp)
		if err != nil {
			t.Fatalf("EncodeResponse of a decoded response: %v", err)
		}
		again, err := c.DecodeResponse(enc)
		if err != nil {
			t.Fatalf("DecodeResponse of the re-encoded body: %v\n%s", err, enc)
		}
		if !bytes.Contains(body, []byte("call_")) {
			if diff := cmp.Diff(resp, again); diff != "" {
				t.Fatalf("round trip changed the response (-first +second):\n%s", diff)
			}
		}
	})
}

// FuzzStreamDecoder: the decoder ends (io.EOF, io.ErrUnexpectedEOF or an
// *sse.EventError) without panicking, and the events it returned re-encode to
// a stream that decodes to the same events.
func FuzzStreamDecoder(f *testing.F) {
	addFixtures(f, "streams")
	f.Fuzz(func(t *testing.T, in []byte) {
		d := gemini.Codec{}.NewStreamDecoder(bytes.NewReader(in))
		var evs []llm.StreamEvent
		var end error
		for range len(in) + 2 {
			ev, err := d.Next()
			if err != nil {
				end = err
				break
			}
			evs = append(evs, ev)
		}
		var ee *sse.EventError
		switch {
		case end == nil:
			t.Fatalf("decoder returned more events than input bytes: %d", len(evs))
		case end == io.EOF, end == io.ErrUnexpectedEOF, errors.As(end, &ee), errors.Is(end, sse.ErrEventTooLarge):
		default:
			t.Fatalf("unexpected end %v (%T)", end, end)
		}
		var buf bytes.Buffer
		e := gemini.Codec{}.NewStreamEncoder(&buf)
		for _, ev := range evs {
			if err := e.Encode(ev); err != nil {
				t.Fatalf("Encode(%+v): %v", ev, err)
			}
		}
		if end == io.EOF {
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if strings.Contains(string(in), "call_") {
			return
		}
		again, end2 := decodeAll(&buf)
		want := evs
		if end != io.EOF {
			// A cut stream loses what the encoder holds back (a tool call
			// still gathering deltas, a finish waiting for usage): the
			// re-encoded stream decodes to a prefix.
			if len(again) > len(want) {
				t.Fatalf("cut stream re-encoded to more events: %d > %d", len(again), len(want))
			}
			want = want[:len(again)]
		}
		// EventStart writes nothing (Gemini has no opening chunk; ID and Model
		// ride on every chunk), so a start followed only by an error chunk or
		// by nothing does not come back: compare starts apart.
		want, wantStart := splitStart(want)
		again, gotStart := splitStart(again)
		if gotStart != nil && (wantStart == nil || *gotStart != *wantStart) {
			t.Fatalf("start %+v, after re-encoding %+v", wantStart, gotStart)
		}
		if diff := cmp.Diff(want, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("re-encoded stream decodes differently (-first +second):\n%s\n%s", diff, buf.Bytes())
		}
		if end == io.EOF && end2 != io.EOF {
			t.Fatalf("clean stream re-encoded ends with %v", end2)
		}
	})
}

// splitStart removes the EventStart from evs and returns it apart.
func splitStart(evs []llm.StreamEvent) ([]llm.StreamEvent, *llm.StreamEvent) {
	var start *llm.StreamEvent
	out := evs[:0:0]
	for _, ev := range evs {
		if ev.Type == llm.EventStart {
			start = &ev
			continue
		}
		out = append(out, ev)
	}
	return out, start
}
