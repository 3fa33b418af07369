package openai_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/sse"
)

// FuzzDecodeRequest: no panic; every failure is a 400 *llm.Error; what
// decodes re-encodes and decodes to the same request.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"x"}]}],"parallel_tool_calls":false,"n":2}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := codec().DecodeRequest(body)
		if err != nil {
			var e *llm.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Type != llm.ErrInvalidRequest {
				t.Fatalf("error %v is not a 400 *llm.Error", err)
			}
			return
		}
		out, err := codec().EncodeRequest(req)
		if err != nil {
			t.Fatalf("a decoded request does not re-encode: %v", err)
		}
		back, err := codec().DecodeRequest(out)
		if err != nil {
			t.Fatalf("re-encoded request does not decode: %v\n%s", err, out)
		}
		if diff := cmp.Diff(req, back, rawJSONEqual, equateEmpty); diff != "" {
			t.Fatalf("round trip differs (-first +second):\n%s\n%s", diff, out)
		}
	})
}

// FuzzDecodeResponse: no panic; what decodes re-encodes (unless its finish
// reason is not OpenAI's) and decodes to the same response.
func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(`{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	f.Add([]byte(`{"error":{"message":"bad","type":"invalid_request_error"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := codec().DecodeResponse(body)
		if err != nil {
			return
		}
		if resp.Created == 0 {
			resp.Created = fixedNow.Unix()
		}
		out, err := codec().EncodeResponse(resp)
		if err != nil {
			var ue *llm.UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("encode: %v", err)
			}
			return
		}
		back, err := codec().DecodeResponse(out)
		if err != nil {
			t.Fatalf("re-encoded response does not decode: %v\n%s", err, out)
		}
		if resp.FinishReason == "" {
			resp.FinishReason = llm.FinishStop
		}
		if diff := cmp.Diff(resp, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip differs (-first +second):\n%s", diff)
		}
	})
}

// FuzzStreamDecoder: no panic; only the documented errors; EventStart or an
// error comes first; re-encoding what was decoded reads back the same.
func FuzzStreamDecoder(f *testing.F) {
	f.Add([]byte(chunkRole + chunkHello + chunkStop + chunkUsage + chunkDone))
	f.Add([]byte(chunkRole + chunkBroken))
	f.Add([]byte(`data: {"error":{"message":"x","type":"server_error"}}` + "\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		d := codec().NewStreamDecoder(bytes.NewReader(in))
		var evs []llm.StreamEvent
		var end error
		for {
			ev, err := d.Next()
			if err != nil {
				end = err
				break
			}
			if len(evs) == 0 && ev.Type != llm.EventStart && ev.Type != llm.EventError {
				t.Fatalf("first event is %s", ev.Type)
			}
			evs = append(evs, ev)
		}
		var ee *sse.EventError
		if end != io.EOF && end != io.ErrUnexpectedEOF && !errors.As(end, &ee) && !errors.Is(end, sse.ErrEventTooLarge) {
			t.Fatalf("undocumented error %v", end)
		}
		var buf bytes.Buffer
		enc := codec().NewStreamEncoder(&buf)
		for i, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				evs = evs[:i] // an unknown finish reason, an event after an error
				break
			}
		}
		_ = enc.Close()
		got, err := decodeAll(buf.String())
		if err != io.EOF {
			t.Fatalf("re-encoded stream ends with %v:\n%s", err, buf.String())
		}
		byMessage := cmp.Comparer(func(a, b *llm.Error) bool { return (a == nil) == (b == nil) && (a == nil || a.Message == b.Message) })
		if diff := cmp.Diff(evs, got, byMessage, cmpopts.EquateEmpty()); diff != "" && !strings.Contains(buf.String(), "\x00") {
			t.Fatalf("re-encoded stream differs (-first +second):\n%s\n%s", diff, buf.String())
		}
	})
}

// FuzzTextChunkTemplate: a chunk decodes to the same events (or the same
// error) right after a plain text chunk, whose bytes around its content
// string the decoder keeps to read the next text chunks by their string
// alone, as after a chunk that teaches it nothing (the role chunk).
func FuzzTextChunkTemplate(f *testing.F) {
	const pre, suf = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":`, `},"finish_reason":null}]}`
	// OpenAI's chunks end with a random "obfuscation" string by default.
	const sufObf = `},"finish_reason":null}],"obfuscation":"Zq3"}`
	for _, s := range []string{
		pre + `"lo"` + `},"finish_reason":null}],"obfuscation":"x"}`,
		pre + `"lo"` + `},"finish_reason":null}],"obfuscation":""}`,
		pre + `"lo"` + `},"finish_reason":null}],"obfuscation":"\u00e9\"x"}`,
		pre + `"lo"` + `},"finish_reason":null}],"obfuscation":"x","obfuscation":"y"}`,
		pre + `"lo"` + `},"finish_reason":null}],"obfuscation":"x"} `,
		pre + `"lo"` + `},"finish_reason":null}],"obfuscation":1}`,
		pre + `"lo"` + "},\"finish_reason\":null}],\"obfuscation\":\"\xff\"}",
		pre + `"a"` + `},"finish_reason":"stop"}],"obfuscation":"x"}`,
		pre + `"lo"` + suf,
		pre + `"a\"b\\c\n\u00e9\ud83d\ude00"` + suf,
		pre + `""` + suf,
		pre + `"x","content":"y"` + suf,
		pre + `"x" ` + suf,
		pre + `"x\u0000"` + suf,
		pre + "\"\xff\"" + suf,
		pre + `"a"` + `},"finish_reason":"stop"}]}`,
		pre + `"a"},"finish_reason":null}],"usage":{"prompt_tokens":1}}`,
		pre + `null` + suf,
		pre + `"a" , "b"` + suf,
		pre + `"a"}},{"index":0,"delta":{"content":"b"` + suf,
		strings.Replace(pre, `"c1"`, `"c2"`, 1) + `"lo"` + suf,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, chunk string, obf bool) {
		if strings.ContainsAny(chunk, "\r\n") {
			return // one data line
		}
		tail := func(lead string) ([]llm.StreamEvent, error) {
			d := codec().NewStreamDecoder(strings.NewReader(chunkRole + lead + "data: " + chunk + "\n\n" + chunkDone))
			var evs []llm.StreamEvent
			for {
				ev, err := d.Next()
				if err != nil {
					var ee *sse.EventError
					if errors.As(err, &ee) {
						err = errors.New("event error")
					}
					return evs, err
				}
				evs = append(evs, ev)
			}
		}
		teach := pre + `"Hel"` + suf
		if obf {
			teach = pre + `"Hel"` + sufObf
		}
		learned, err1 := tail("data: " + teach + "\n\n")
		fresh, err2 := tail("")
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("after a text chunk: %v; after the role chunk: %v", err1, err2)
		}
		if len(learned) < 2 || learned[1].Text != "Hel" {
			t.Fatalf("the text chunk decoded to %+v", learned)
		}
		// learned: start, "Hel", the chunk's events; fresh: start, the chunk's.
		learned = append(learned[:1], learned[2:]...)
		byMessage := cmp.Comparer(func(a, b *llm.Error) bool { return (a == nil) == (b == nil) && (a == nil || a.Message == b.Message) })
		if diff := cmp.Diff(fresh, learned, byMessage); diff != "" {
			t.Fatalf("the chunk decodes differently after a text chunk (-fresh +learned):\n%s", diff)
		}
	})
}
