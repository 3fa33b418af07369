package anthropic_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/internal/golden"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/sse"
)

func indent(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func fixtures(t *testing.T, dir, ext string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*"+ext))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in testdata/%s: %v", dir, err)
	}
	return paths
}

func base(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// TestGoldenRequests decodes each request fixture into the normalized model
// and encodes it back; both are golden, and decoding the encoding must give
// the same request again.
func TestGoldenRequests(t *testing.T) {
	for _, path := range fixtures(t, "requests", ".json") {
		t.Run(base(path), func(t *testing.T) {
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			req, err := codec.DecodeRequest(body)
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			golden.Check(t, "testdata/golden/requests/"+base(path)+".llm.json", indent(t, req))
			wire, err := codec.EncodeRequest(req)
			if err != nil {
				t.Fatalf("EncodeRequest: %v", err)
			}
			golden.Check(t, "testdata/golden/requests/"+base(path)+".wire.json", append(wire, '\n'))
			again, err := codec.DecodeRequest(wire)
			if err != nil {
				t.Fatalf("DecodeRequest(EncodeRequest): %v", err)
			}
			if diff := cmp.Diff(req, again, jsonEqual); diff != "" {
				t.Errorf("decode(encode(req)) != req (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGoldenResponses does the same for response fixtures.
func TestGoldenResponses(t *testing.T) {
	for _, path := range fixtures(t, "responses", ".json") {
		t.Run(base(path), func(t *testing.T) {
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := codec.DecodeResponse(body)
			if err != nil {
				t.Fatalf("DecodeResponse: %v", err)
			}
			golden.Check(t, "testdata/golden/responses/"+base(path)+".llm.json", indent(t, resp))
			wire, err := codec.EncodeResponse(resp)
			if err != nil {
				t.Fatalf("EncodeResponse: %v", err)
			}
			golden.Check(t, "testdata/golden/responses/"+base(path)+".wire.json", append(wire, '\n'))
			again, err := codec.DecodeResponse(wire)
			if err != nil {
				t.Fatalf("DecodeResponse(EncodeResponse): %v", err)
			}
			if diff := cmp.Diff(resp, again); diff != "" {
				t.Errorf("decode(encode(resp)) != resp (-want +got):\n%s", diff)
			}
		})
	}
}

// transcript decodes a whole stream into one line per event, then the way
// it ended.
func transcript(t *testing.T, r io.Reader) ([]llm.StreamEvent, []byte) {
	t.Helper()
	dec := codec.NewStreamDecoder(r)
	var buf bytes.Buffer
	var events []llm.StreamEvent
	for range 1000 {
		ev, err := dec.Next()
		var ee *sse.EventError
		switch {
		case err == nil:
			events = append(events, ev)
			b, _ := json.Marshal(ev)
			buf.Write(b)
			buf.WriteByte('\n')
			continue
		case errors.As(err, &ee):
			fmt.Fprintf(&buf, "malformed event %d: %v\n", ee.Index, ee.Err)
			continue
		}
		fmt.Fprintf(&buf, "end: %v\n", err)
		// The end is sticky.
		if _, err2 := dec.Next(); err2 != err {
			t.Errorf("Next after the end returned %v, then %v", err, err2)
		}
		return events, buf.Bytes()
	}
	t.Fatal("stream did not end")
	return nil, nil
}

// TestGoldenStreams decodes stream fixtures (real event shapes: ping,
// thinking blocks, CRLF, an error event, a cut stream, malformed events)
// into event transcripts.
func TestGoldenStreams(t *testing.T) {
	for _, path := range fixtures(t, "streams", ".sse") {
		t.Run(base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			events, got := transcript(t, f)
			golden.Check(t, "testdata/golden/streams/"+base(path)+".events", got)
			if bytes.Contains(got, []byte("malformed event")) {
				return
			}
			// Re-encoding what we decoded must decode the same, end included
			// (the gateway's Anthropic-to-Anthropic path).
			var out bytes.Buffer
			enc := codec.NewStreamEncoder(&out)
			errored := false
			for _, ev := range events {
				errored = errored || ev.Type == llm.EventError
				if err := enc.Encode(ev); err != nil {
					t.Fatalf("re-encode %+v: %v", ev, err)
				}
			}
			if bytes.HasSuffix(got, []byte("end: EOF\n")) && !errored {
				if err := enc.Close(); err != nil {
					t.Fatal(err)
				}
			}
			events2, got2 := transcript(t, &out)
			if diff := cmp.Diff(normalizeEvents(events), normalizeEvents(events2)); diff != "" {
				t.Errorf("decode(encode(events)) differs (-want +got):\n%s", diff)
			}
			if end, end2 := got[bytes.LastIndex(got, []byte("end: ")):], got2[bytes.LastIndex(got2, []byte("end: ")):]; !bytes.Equal(end, end2) {
				t.Errorf("re-encoded stream ends with %q, want %q", end2, end)
			}
		})
	}
}

// TestGoldenEncodeStreams encodes normalized event sequences (a "close"
// line calls Close) and checks the bytes; decoding them must give back the
// events, merged the way the format merges them.
func TestGoldenEncodeStreams(t *testing.T) {
	for _, path := range fixtures(t, "events", ".jsonl") {
		t.Run(base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var out bytes.Buffer
			enc := codec.NewStreamEncoder(&out)
			var in []llm.StreamEvent
			sc := bufio.NewScanner(f)
			closed := false
			for sc.Scan() {
				var ev llm.StreamEvent
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Fatalf("%s: %v", sc.Text(), err)
				}
				if ev.Type == "close" {
					if err := enc.Close(); err != nil {
						t.Fatalf("Close: %v", err)
					}
					closed = true
					continue
				}
				in = append(in, ev)
				if err := enc.Encode(ev); err != nil {
					t.Fatalf("Encode(%s): %v", sc.Text(), err)
				}
			}
			golden.Check(t, "testdata/golden/events/"+base(path)+".sse", out.Bytes())

			events, tr := transcript(t, bytes.NewReader(out.Bytes()))
			if want := "end: EOF\n"; !bytes.HasSuffix(tr, []byte(want)) && closed {
				t.Errorf("a closed stream must end with io.EOF; transcript:\n%s", tr)
			}
			if diff := cmp.Diff(normalizeEvents(in), normalizeEvents(events)); diff != "" {
				t.Errorf("decoded events differ from the encoded ones (-want +got):\n%s", diff)
			}
		})
	}
}

// normalizeEvents merges adjacent text deltas and argument deltas, orders a
// finish before the usage, drops empty usage, and drops the error status details the format
// does not carry, so that two event sequences meaning the same compare
// equal.
func normalizeEvents(in []llm.StreamEvent) []llm.StreamEvent {
	var out []llm.StreamEvent
	for _, ev := range in {
		if ev.Usage != nil && *ev.Usage == (llm.Usage{}) {
			if ev.Type == llm.EventUsage {
				continue
			}
			ev.Usage = nil
		}
		if ev.Err != nil {
			e := *ev.Err
			e.ProviderType = ""
			ev.Err = &e
		}
		if n := len(out); n > 0 {
			last := &out[n-1]
			if ev.Type == llm.EventTextDelta && last.Type == llm.EventTextDelta {
				last.Text += ev.Text
				continue
			}
			if ev.Type == llm.EventToolCallDelta && last.Type == llm.EventToolCallDelta &&
				ev.ToolCall.ID == "" && last.ToolCall.Index == ev.ToolCall.Index {
				tc := *last.ToolCall
				tc.Arguments += ev.ToolCall.Arguments
				last.ToolCall = &tc
				continue
			}
			if ev.Type == llm.EventFinish && last.Type == llm.EventUsage {
				out = append(out[:n-1], ev, *last)
				continue
			}
		}
		out = append(out, ev)
	}
	return out
}
