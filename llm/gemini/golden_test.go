package gemini_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/internal/golden"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/gemini"
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
	names, err := filepath.Glob(filepath.Join("testdata", dir, "*"+ext))
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixtures in testdata/%s: %v", dir, err)
	}
	return names
}

// TestGoldenRequests decodes real-shaped request bodies, re-encodes them, and
// checks that the re-encoded body decodes to the same request.
func TestGoldenRequests(t *testing.T) {
	c := gemini.Codec{}
	for _, path := range fixtures(t, "requests", ".json") {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			req, err := c.DecodeRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/golden/requests/"+name+".llm.json", indent(t, req))
			enc, err := c.EncodeRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/golden/requests/"+name+".gemini.json", append(enc, '\n'))
			again, err := c.DecodeRequest(enc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(req, again, cmp.Comparer(rawEqual)); diff != "" {
				t.Errorf("decode(encode(decode(x))) != decode(x) (-first +second):\n%s", diff)
			}
		})
	}
}

func TestGoldenResponses(t *testing.T) {
	c := gemini.Codec{}
	for _, path := range fixtures(t, "responses", ".json") {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.DecodeResponse(body)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/golden/responses/"+name+".llm.json", indent(t, resp))
			enc, err := c.EncodeResponse(resp)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/golden/responses/"+name+".gemini.json", append(enc, '\n'))
			again, err := c.DecodeResponse(enc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(resp, again); diff != "" {
				t.Errorf("decode(encode(decode(x))) != decode(x) (-first +second):\n%s", diff)
			}
		})
	}
}

// decodeAll reads a stream to its end: the events and the error that ended it.
func decodeAll(r io.Reader) ([]llm.StreamEvent, error) {
	d := gemini.Codec{}.NewStreamDecoder(r)
	var evs []llm.StreamEvent
	for range 10000 {
		ev, err := d.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, errors.New("stream did not end")
}

// TestGoldenStreams decodes recorded-shaped SSE streams (CRLF, usage in every
// chunk, thought signatures, a cut, a malformed chunk, an in-band error),
// re-encodes the events, and checks the re-encoded stream decodes the same.
func TestGoldenStreams(t *testing.T) {
	for _, path := range fixtures(t, "streams", ".sse") {
		name := strings.TrimSuffix(filepath.Base(path), ".sse")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			evs, end := decodeAll(bytes.NewReader(body))
			var out bytes.Buffer
			for _, ev := range evs {
				out.Write(mustJSON(t, ev))
				out.WriteByte('\n')
			}
			out.WriteString("end: " + end.Error() + "\n")
			golden.Check(t, "testdata/golden/streams/"+name+".events", out.Bytes())

			var enc bytes.Buffer
			e := gemini.Codec{}.NewStreamEncoder(&enc)
			for _, ev := range evs {
				if err := e.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			if end == io.EOF {
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
			}
			golden.Check(t, "testdata/golden/streams/"+name+".encoded.sse", enc.Bytes())
			again, end2 := decodeAll(&enc)
			if diff := cmp.Diff(evs, again); diff != "" {
				t.Errorf("re-encoded stream decodes differently (-first +second):\n%s", diff)
			}
			if (end == io.EOF) != (end2 == io.EOF) {
				t.Errorf("stream end %v, after re-encoding %v", end, end2)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
