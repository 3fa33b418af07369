package openai_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/openai"
	"github.com/brownout-dev/brownout/llm/sse"
)

// decodeAll reads a stream to its end.
func decodeAll(in string) ([]llm.StreamEvent, error) {
	d := openai.Codec{}.NewStreamDecoder(strings.NewReader(in))
	var evs []llm.StreamEvent
	for {
		ev, err := d.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

const (
	chunkRole   = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}]}` + "\n\n"
	chunkHello  = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}` + "\n\n"
	chunkLo     = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}` + "\n\n"
	chunkStop   = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	chunkUsage  = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":1}}}` + "\n\n"
	chunkDone   = "data: [DONE]\n\n"
	chunkBroken = `data: {"id":"c1","choices":[{"delta":{"content":"x"` + "\n\n"
)

var (
	evStart = llm.StreamEvent{Type: llm.EventStart, ID: "c1", Model: "gpt-4o"}
	evHel   = llm.StreamEvent{Type: llm.EventTextDelta, Text: "Hel"}
	evLo    = llm.StreamEvent{Type: llm.EventTextDelta, Text: "lo"}
	evStop  = llm.StreamEvent{Type: llm.EventFinish, FinishReason: llm.FinishStop}
	evUsage = llm.StreamEvent{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 9, OutputTokens: 2, CachedInputTokens: 3, ReasoningTokens: 1}}
)

func TestStreamDecoder(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []llm.StreamEvent
		wantErr error
	}{
		{"complete", chunkRole + chunkHello + chunkLo + chunkStop + chunkUsage + chunkDone, []llm.StreamEvent{evStart, evHel, evLo, evStop, evUsage}, io.EOF},
		{"CRLF", strings.ReplaceAll(chunkRole+chunkHello+chunkStop+chunkDone, "\n", "\r\n"), []llm.StreamEvent{evStart, evHel, evStop}, io.EOF},
		{"keep-alive comments", ": ping\n\n" + chunkRole + ": ping\n\n" + chunkHello + chunkStop + chunkDone, []llm.StreamEvent{evStart, evHel, evStop}, io.EOF},
		{"missing DONE after finish", chunkRole + chunkHello + chunkStop, []llm.StreamEvent{evStart, evHel, evStop}, io.EOF},
		{"missing DONE after usage", chunkRole + chunkStop + chunkUsage, []llm.StreamEvent{evStart, evStop, evUsage}, io.EOF},
		{"cut mid-answer", chunkRole + chunkHello + chunkLo, []llm.StreamEvent{evStart, evHel, evLo}, io.ErrUnexpectedEOF},
		{"cut mid-event", chunkRole + chunkHello + `data: {"id":"c1","choi`, []llm.StreamEvent{evStart, evHel}, &sse.EventError{Index: 2}},
		{"empty body", "", nil, io.ErrUnexpectedEOF},
		{"nothing after DONE is read", chunkRole + chunkStop + chunkDone + chunkBroken, []llm.StreamEvent{evStart, evStop}, io.EOF},
		{
			"content and finish in one chunk",
			`data: {"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}` + "\n\n",
			[]llm.StreamEvent{evStart, evHel, {Type: llm.EventFinish, FinishReason: llm.FinishLength}, {Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 9, OutputTokens: 2}}},
			io.EOF,
		},
		{
			"parallel tool calls",
			chunkRole +
				`data: {"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}},{"index":1,"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":null}]}` + "\n\n" +
				`data: {"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]},"finish_reason":null}]}` + "\n\n" +
				`data: {"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" + chunkDone,
			[]llm.StreamEvent{evStart,
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "call_a", Name: "f"}},
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 1, ID: "call_b", Name: "g", Arguments: "{}"}},
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: `{"a":1}`}},
				{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls}},
			io.EOF,
		},
		{
			"refusal delta is text",
			chunkRole + `data: {"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"refusal":"I can't"},"finish_reason":null}]}` + "\n\n" + chunkStop,
			[]llm.StreamEvent{evStart, {Type: llm.EventTextDelta, Text: "I can't"}, evStop},
			io.EOF,
		},
		{
			"content filter",
			chunkRole + `data: {"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}` + "\n\n",
			[]llm.StreamEvent{evStart, {Type: llm.EventFinish, FinishReason: llm.FinishContentFilter}},
			io.EOF,
		},
		{
			"in-band error then end",
			chunkRole + chunkHello + `data: {"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}` + "\n\n",
			[]llm.StreamEvent{evStart, evHel, {Type: llm.EventError, Err: &llm.Error{Status: 500, Type: llm.ErrServer, Message: "The server had an error", ProviderType: "server_error"}}},
			io.EOF,
		},
		{
			"in-band rate limit first",
			`data: {"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}` + "\n\n",
			[]llm.StreamEvent{{Type: llm.EventError, Err: &llm.Error{Status: 429, Type: llm.ErrRateLimit, Code: "rate_limit_exceeded", Message: "slow down", ProviderType: "requests"}}},
			io.EOF,
		},
		{"malformed chunk", chunkRole + chunkHello + chunkBroken + chunkStop, []llm.StreamEvent{evStart, evHel}, &sse.EventError{Index: 2}},
		{"chunk not an object", chunkRole + "data: 42\n\n", []llm.StreamEvent{evStart}, &sse.EventError{Index: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeAll(tt.in)
			var wantEE *sse.EventError
			if errors.As(tt.wantErr, &wantEE) {
				var ee *sse.EventError
				if !errors.As(err, &ee) || ee.Index != wantEE.Index || ee.Err == nil {
					t.Fatalf("error = %v, want *sse.EventError at index %d", err, wantEE.Index)
				}
			} else if err != tt.wantErr {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStreamDecoderContinuesAfterMalformed: a malformed chunk is reported
// and the decoder can go on.
func TestStreamDecoderContinuesAfterMalformed(t *testing.T) {
	d := openai.Codec{}.NewStreamDecoder(strings.NewReader(chunkRole + chunkBroken + chunkLo + chunkStop + chunkDone))
	var got []llm.StreamEvent
	var malformed []int
	for {
		ev, err := d.Next()
		if err == io.EOF {
			break
		}
		var ee *sse.EventError
		if errors.As(err, &ee) {
			malformed = append(malformed, ee.Index)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if diff := cmp.Diff([]llm.StreamEvent{evStart, evLo, evStop}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !cmp.Equal(malformed, []int{1}) {
		t.Errorf("malformed indexes = %v, want [1]", malformed)
	}
}

// TestStreamRoundTrip: what the encoder writes, the decoder reads back.
func TestStreamRoundTrip(t *testing.T) {
	for _, resp := range []*llm.Response{textResponse, toolResponse, lengthResponse} {
		t.Run(resp.ID, func(t *testing.T) {
			evs := streamOf(resp, true)
			var buf bytes.Buffer
			enc := codec().NewStreamEncoder(&buf)
			for _, ev := range evs {
				if err := enc.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := enc.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := decodeAll(buf.String())
			if err != io.EOF {
				t.Fatalf("error = %v", err)
			}
			if diff := cmp.Diff(evs, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamEncoderErrors(t *testing.T) {
	tests := []struct {
		name string
		ev   llm.StreamEvent
		want error
	}{
		{"finish error", llm.StreamEvent{Type: llm.EventFinish, FinishReason: llm.FinishError}, &llm.UnsupportedError{}},
		{"tool call without payload", llm.StreamEvent{Type: llm.EventToolCallDelta}, nil},
		{"usage without payload", llm.StreamEvent{Type: llm.EventUsage}, nil},
		{"error without payload", llm.StreamEvent{Type: llm.EventError}, nil},
		{"unknown type", llm.StreamEvent{Type: "thinking"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := codec().NewStreamEncoder(io.Discard).Encode(tt.ev)
			if err == nil {
				t.Fatal("no error")
			}
			var ue *llm.UnsupportedError
			if _, want := tt.want.(*llm.UnsupportedError); want && !errors.As(err, &ue) {
				t.Errorf("error = %v, want *llm.UnsupportedError", err)
			}
		})
	}
}

// TestStreamEncoderAfterError: an in-band error ends the stream: no [DONE],
// no more events.
func TestStreamEncoderAfterError(t *testing.T) {
	var buf bytes.Buffer
	enc := codec().NewStreamEncoder(&buf)
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: "c", Model: "m"})
	if err := enc.Encode(llm.StreamEvent{Type: llm.EventError, Err: &llm.Error{Type: llm.ErrOverloaded, Message: "busy"}}); err != nil {
		t.Fatal(err)
	}
	if err := enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: "x"}); err == nil {
		t.Error("no error for an event after an error")
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "[DONE]") {
		t.Errorf("stream with an error ends with [DONE]:\n%s", buf.String())
	}
}

// TestStreamDecoderKeepsTexts: the events' strings stay as they were read
// while the decoder reads on (they are copied out of the reader's buffer,
// which the next events overwrite), short and long, over many chunks.
func TestStreamDecoderKeepsTexts(t *testing.T) {
	var in strings.Builder
	in.WriteString(chunkRole)
	var texts []string
	for i := range 400 {
		text := strings.Repeat(string(rune('a'+i%26)), 1+(i*37)%300)
		texts = append(texts, text)
		in.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}]}` + "\n\n")
	}
	in.WriteString(chunkStop + chunkDone)
	evs, err := decodeAll(in.String())
	if err != io.EOF {
		t.Fatalf("err = %v, want EOF", err)
	}
	if len(evs) != len(texts)+2 || evs[0] != evStart {
		t.Fatalf("got %d events, first %+v; want %d, first %+v", len(evs), evs[0], len(texts)+2, evStart)
	}
	for i, text := range texts {
		if ev := evs[1+i]; ev.Type != llm.EventTextDelta || ev.Text != text {
			t.Fatalf("event %d = %+v, want the text delta %q", 1+i, ev, text)
		}
	}
}
