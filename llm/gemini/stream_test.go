package gemini_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/gemini"
	"github.com/brownout-dev/brownout/llm/sse"
)

func TestStreamDecoder(t *testing.T) {
	start := llm.StreamEvent{Type: llm.EventStart, ID: "r", Model: "m"}
	text := func(s string) llm.StreamEvent { return llm.StreamEvent{Type: llm.EventTextDelta, Text: s} }
	chunk := func(body string) string {
		return `data: {"candidates":[{"content":{"role":"model","parts":[` + body + `]},"index":0}],"modelVersion":"m","responseId":"r"}` + "\n\n"
	}
	tests := []struct {
		name      string
		in        string
		want      []llm.StreamEvent
		wantErr   error // io.EOF, io.ErrUnexpectedEOF, or an *sse.EventError with this index
		wantIndex int
	}{
		{name: "empty input", in: "", wantErr: io.ErrUnexpectedEOF},
		{name: "only comments", in: ": keep-alive\n\n: again\n\n", wantErr: io.ErrUnexpectedEOF},
		{
			name:    "comments, event names and empty text ignored",
			in:      ": hi\n\n" + chunk(`{"text":""}`) + "event: message\n" + chunk(`{"text":"a"}`) + `data: {"candidates":[{"finishReason":"STOP"}]}` + "\n\n",
			want:    []llm.StreamEvent{start, text("a"), {Type: llm.EventFinish, FinishReason: llm.FinishStop}},
			wantErr: io.EOF,
		},
		{
			name: "thoughts are not text",
			in:   chunk(`{"text":"hmm","thought":true},{"text":"yes"}`) + `data: {"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"thoughtsTokenCount":4}}` + "\n\n",
			want: []llm.StreamEvent{start, text("yes"), {Type: llm.EventFinish, FinishReason: llm.FinishStop},
				{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 3, OutputTokens: 5, ReasoningTokens: 4}}},
			wantErr: io.EOF,
		},
		{
			name: "usage after the finish",
			in:   chunk(`{"text":"a"}`) + `data: {"candidates":[{"finishReason":"MAX_TOKENS"}]}` + "\n\n" + `data: {"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":1}}` + "\n\n",
			want: []llm.StreamEvent{start, text("a"), {Type: llm.EventFinish, FinishReason: llm.FinishLength},
				{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 2, OutputTokens: 1}}},
			wantErr: io.EOF,
		},
		{
			name: "call ids: given, then synthesized by position",
			in: chunk(`{"functionCall":{"id":"x1","name":"f","args":{"a":1}}}`) + chunk(`{"functionCall":{"name":"g"}}`) +
				`data: {"candidates":[{"finishReason":"STOP"}]}` + "\n\n",
			want: []llm.StreamEvent{start,
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "x1", Name: "f", Arguments: `{"a":1}`}},
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 1, ID: "call_1", Name: "g", Arguments: `{}`}},
				{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls}},
			wantErr: io.EOF,
		},
		{
			name:    "unspecified finish is no finish",
			in:      chunk(`{"text":"a"}`) + `data: {"candidates":[{"finishReason":"FINISH_REASON_UNSPECIFIED"}]}` + "\n\n",
			want:    []llm.StreamEvent{start, text("a")},
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:    "malformed function call finish is an error finish",
			in:      `data: {"candidates":[{"finishReason":"MALFORMED_FUNCTION_CALL"}],"responseId":"r","modelVersion":"m"}` + "\n\n",
			want:    []llm.StreamEvent{start, {Type: llm.EventFinish, FinishReason: llm.FinishError}},
			wantErr: io.EOF,
		},
		{name: "not JSON", in: chunk(`{"text":"a"}`) + "data: [DONE]\n\n", want: []llm.StreamEvent{start, text("a")}, wantIndex: 1},
		{name: "wrong shape", in: "data: []\n\n", wantIndex: 0},
		{name: "inline data output", in: chunk(`{"text":"a"}`) + chunk(`{"inlineData":{"mimeType":"image/png","data":"AA=="}}`), want: []llm.StreamEvent{start, text("a")}, wantIndex: 1},
		{name: "args not an object", in: chunk(`{"functionCall":{"name":"f","args":"x"}}`), wantIndex: 0},
		{
			name:    "error first",
			in:      `data: {"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}` + "\n\n",
			want:    []llm.StreamEvent{{Type: llm.EventError, Err: &llm.Error{Status: 429, Type: llm.ErrRateLimit, Message: "quota", ProviderType: "RESOURCE_EXHAUSTED"}}},
			wantErr: io.EOF,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeAll(strings.NewReader(tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if tt.wantErr != nil {
				if err != tt.wantErr {
					t.Errorf("end = %v, want %v", err, tt.wantErr)
				}
				return
			}
			var ee *sse.EventError
			if !errors.As(err, &ee) || ee.Index != tt.wantIndex {
				t.Errorf("end = %v (%T), want *sse.EventError at index %d", err, err, tt.wantIndex)
			}
		})
	}
}

// TestStreamDecoderContinuesAfterMalformed checks that a caller may skip a
// malformed chunk and keep reading.
func TestStreamDecoderContinuesAfterMalformed(t *testing.T) {
	in := "data: {\"responseId\":\"r\"}\n\ndata: {oops\n\ndata: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"b\"}]},\"finishReason\":\"STOP\"}]}\n\n"
	d := gemini.Codec{}.NewStreamDecoder(strings.NewReader(in))
	var got []string
	for range 10 {
		ev, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			got = append(got, "err")
			continue
		}
		got = append(got, string(ev.Type)+ev.Text)
	}
	want := []string{"start", "err", "text_deltab", "finish"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStreamEncoder(t *testing.T) {
	u := &llm.Usage{InputTokens: 5, OutputTokens: 2}
	tests := []struct {
		name   string
		events []llm.StreamEvent
		close  bool
		want   string
	}{
		{
			name:   "finish held until usage, start writes nothing",
			events: []llm.StreamEvent{{Type: llm.EventStart, ID: "i", Model: "m"}, {Type: llm.EventFinish, FinishReason: llm.FinishStop}, {Type: llm.EventUsage, Usage: u}},
			want:   `data: {"candidates":[{"content":{"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,"totalTokenCount":7},"modelVersion":"m","responseId":"i"}` + "\n\n",
		},
		{
			name:   "finish flushed by close",
			events: []llm.StreamEvent{{Type: llm.EventFinish, FinishReason: llm.FinishLength}},
			close:  true,
			want:   `data: {"candidates":[{"content":{"role":"model"},"finishReason":"MAX_TOKENS","index":0}]}` + "\n\n",
		},
		{
			name:   "cut stream: nothing held is written without close",
			events: []llm.StreamEvent{{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{ID: "c", Name: "f", Arguments: `{"a":`}}},
			want:   "",
		},
		{
			name: "call gathered and flushed by the next call",
			events: []llm.StreamEvent{
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "call_0", Name: "f", Arguments: `{"a":`}},
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: `1}`}},
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 1, ID: "id-2", Name: "g"}},
			},
			close: true,
			want: `data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1}}}],"role":"model"},"index":0}]}` + "\n\n" +
				`data: {"candidates":[{"content":{"parts":[{"functionCall":{"id":"id-2","name":"g","args":{}}}],"role":"model"},"index":0}]}` + "\n\n",
		},
		{
			name:   "text escaping",
			events: []llm.StreamEvent{{Type: llm.EventTextDelta, Text: "a\"b\\c\n\t<é>\u2028\x01\xff"}},
			want:   `data: {"candidates":[{"content":{"parts":[{"text":"a\"b\\c\n\t\u003cé\u003e\u2028\u0001\ufffd"}],"role":"model"},"index":0}]}` + "\n\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			e := gemini.Codec{}.NewStreamEncoder(&buf)
			for _, ev := range tt.events {
				if err := e.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			if tt.close {
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if buf.String() != tt.want {
				t.Errorf("wrote\n%s\nwant\n%s", buf.String(), tt.want)
			}
		})
	}
}

func TestStreamEncoderRejects(t *testing.T) {
	tests := []struct {
		name   string
		events []llm.StreamEvent
	}{
		{"args not an object", []llm.StreamEvent{
			{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Name: "f", Arguments: `{"a":`}},
			{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls}}},
		{"unknown type", []llm.StreamEvent{{Type: "ping"}}},
		{"delta without call", []llm.StreamEvent{{Type: llm.EventToolCallDelta}}},
		{"usage without usage", []llm.StreamEvent{{Type: llm.EventUsage}}},
		{"finish without reason", []llm.StreamEvent{{Type: llm.EventFinish}}},
		{"error without error", []llm.StreamEvent{{Type: llm.EventError}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := gemini.Codec{}.NewStreamEncoder(io.Discard)
			var err error
			for _, ev := range tt.events {
				if err = e.Encode(ev); err != nil {
					break
				}
			}
			if err == nil {
				t.Fatal("Encode accepted the stream")
			}
		})
	}
}

func TestEncodeResponseUnsupported(t *testing.T) {
	tests := []struct {
		name    string
		resp    llm.Response
		feature string
	}{
		{"refusal", llm.Response{Refusal: "I can't help with that.", FinishReason: llm.FinishStop}, "refusal"},
		{"args not object", llm.Response{ToolCalls: []llm.ToolCall{{ID: "a", Name: "f", Arguments: "{}"}, {ID: "b", Name: "g", Arguments: `["x"]`}}, FinishReason: llm.FinishToolCalls}, "tool_calls[1].arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gemini.Codec{}.EncodeResponse(&tt.resp)
			var u *llm.UnsupportedError
			if !errors.As(err, &u) || u.Feature != tt.feature {
				t.Fatalf("EncodeResponse error = %v, want *llm.UnsupportedError for %s", err, tt.feature)
			}
		})
	}
}
