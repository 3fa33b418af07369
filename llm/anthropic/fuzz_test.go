package anthropic_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/sse"
)

// The seed corpora live in testdata/fuzz (real request, response and
// stream shapes); these targets add a few degenerate inputs.

// FuzzDecodeRequest: any body either decodes or is a 400 *llm.Error; what
// decodes encodes (or is reported unsupported), and the encoding decodes to
// the same request.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := codec.DecodeRequest(body)
		if err != nil {
			var e *llm.Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("decode error %v is not a 400 *llm.Error", err)
			}
			return
		}
		wire, err := codec.EncodeRequest(req)
		if err != nil {
			var ue *llm.UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("EncodeRequest of a decoded request: %v", err)
			}
			return
		}
		again, err := codec.DecodeRequest(wire)
		if err != nil {
			t.Fatalf("DecodeRequest(EncodeRequest(req)): %v\n%s", err, wire)
		}
		if diff := cmp.Diff(req, again, jsonEqual); diff != "" {
			t.Fatalf("round trip differs:\n%s", diff)
		}
	})
}

// FuzzDecodeResponse: never panics; what decodes round-trips.
func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(`{"type":"message","content":null}`))
	f.Add([]byte(`{"type":"error","error":{"type":"overloaded_error"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := codec.DecodeResponse(body)
		if err != nil {
			return
		}
		wire, err := codec.EncodeResponse(resp)
		if err != nil {
			var ue *llm.UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("EncodeResponse of a decoded response: %v", err)
			}
			return
		}
		again, err := codec.DecodeResponse(wire)
		if err != nil {
			t.Fatalf("DecodeResponse(EncodeResponse(resp)): %v\n%s", err, wire)
		}
		if diff := cmp.Diff(resp, again); diff != "" {
			t.Fatalf("round trip differs:\n%s", diff)
		}
	})
}

// FuzzStreamDecoder: never panics, always ends, EventStart (when any) comes
// first and once, and nothing follows the end.
func FuzzStreamDecoder(f *testing.F) {
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{}}\n\n"))
	f.Add([]byte("event: error\ndata: null\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		dec := codec.NewStreamDecoder(bytes.NewReader(in))
		starts, n := 0, 0
		for i := 0; ; i++ {
			if i > 4*len(in)+16 {
				t.Fatal("decoder does not end")
			}
			ev, err := dec.Next()
			var ee *sse.EventError
			if errors.As(err, &ee) {
				continue
			}
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.Is(err, sse.ErrEventTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				if _, err2 := dec.Next(); err2 != err {
					t.Fatalf("end not sticky: %v then %v", err, err2)
				}
				return
			}
			if ev.Type == llm.EventStart {
				starts++
				if n != 0 || starts > 1 {
					t.Fatalf("EventStart at position %d (start #%d)", n, starts)
				}
			}
			if ev.Type == llm.EventToolCallDelta && ev.ToolCall == nil || ev.Type == llm.EventUsage && ev.Usage == nil || ev.Type == llm.EventError && ev.Err == nil {
				t.Fatalf("event %s without its payload", ev.Type)
			}
			if ev.Type != llm.EventError {
				n++
			}
		}
	})
}

// textDeltaEvents decodes one text_delta whose JSON string body is raw,
// either in the API's exact compact shape (the decoder's fast path) or with
// a space that sends it down the encoding/json path.
func textDeltaEvents(raw string, compact bool) string {
	sep := ":"
	if !compact {
		sep = ": "
	}
	in := "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\"" + sep + "0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + raw + "\"}}\n\n"
	dec := codec.NewStreamDecoder(bytes.NewReader([]byte(in)))
	var out bytes.Buffer
	for range 10 {
		ev, err := dec.Next()
		if err != nil {
			var ee *sse.EventError
			if errors.As(err, &ee) {
				out.WriteString("malformed\n")
				continue
			}
			out.WriteString(err.Error())
			break
		}
		out.WriteString(string(ev.Type) + " " + ev.Text + "\n")
	}
	return out.String()
}

// FuzzTextDeltaFastPath checks the hand-written text_delta path against
// encoding/json on the same string body.
func FuzzTextDeltaFastPath(f *testing.F) {
	for _, s := range []string{`plain`, `a\"b\\c\/d\n\r\t\b\f`, `\u00e9\ud83d\ude00`, `\ud800x`, `\udc00\ud800\udc00`, `\ud83d\u0041`, "caf\xc3", `\x`, `\u12`, `trailing\`, "é✓"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if strings.ContainsAny(raw, "\r\n") {
			return // a line break ends the SSE data line: not this test
		}
		fast, slow := textDeltaEvents(raw, true), textDeltaEvents(raw, false)
		if fast != slow {
			t.Fatalf("body %q:\nfast path %q\njson path %q", raw, fast, slow)
		}
	})
}
