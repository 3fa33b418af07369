package llm_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/anthropic"
	"github.com/brownout-dev/brownout/llm/gemini"
	"github.com/brownout-dev/brownout/llm/openai"
)

var codecs = []llm.Codec{openai.Codec{}, anthropic.Codec{}, gemini.Codec{}}

// conversation is a request every format can express: a system prompt, a
// user turn, an assistant tool call, its result, and a follow-up.
func conversation() *llm.Request {
	temp := 0.5
	return &llm.Request{
		Model: "model-x",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("You are a weather bot.")}},
			{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("Weather in Paris and Oslo? Answer in <b>bold</b> & \"quotes\" ✓")}},
			{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("Let me check.")}, ToolCalls: []llm.ToolCall{
				{ID: "call_paris1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
				{ID: "call_oslo22", Name: "get_weather", Arguments: `{"city":"Oslo","unit":"c"}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_paris1", Name: "get_weather", Content: []llm.Part{llm.TextPart(`{"temp_c":21}`)}},
			{Role: llm.RoleTool, ToolCallID: "call_oslo22", Name: "get_weather", Content: []llm.Part{llm.TextPart(`{"temp_c":-3}`)}},
			{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("Thanks. Which is warmer?")}},
		},
		Tools: []llm.Tool{{
			Name: "get_weather", Description: "Current weather for a city",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}`),
		}},
		ToolChoice:  &llm.ToolChoice{Mode: llm.ToolChoiceAuto},
		MaxTokens:   512,
		Temperature: &temp,
		Stop:        []string{"END"},
	}
}

// essence is what must survive a translation: roles, text, tool calls,
// tool results, tools.
type essence struct {
	Messages []string
	Tools    []string
}

func essenceOf(t *testing.T, r *llm.Request) essence {
	t.Helper()
	var e essence
	for _, m := range r.Messages {
		s := fmt.Sprintf("%s %q", m.Role, m.Text())
		for _, tc := range m.ToolCalls {
			s += fmt.Sprintf(" call(%s %s %s)", tc.ID, tc.Name, canonJSON(t, tc.Arguments))
		}
		if m.Role == llm.RoleTool {
			s += fmt.Sprintf(" result(%s %s)", m.ToolCallID, m.Name)
		}
		e.Messages = append(e.Messages, s)
	}
	for _, tl := range r.Tools {
		e.Tools = append(e.Tools, fmt.Sprintf("%s %q %s", tl.Name, tl.Description, canonJSON(t, string(tl.Parameters))))
	}
	return e
}

// canonJSON re-marshals JSON text so that key order and spacing don't matter.
func canonJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "invalid:" + s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTranslateRequest: for every ordered pair of formats, a request decoded
// in one, encoded in the other and decoded back keeps its content, tools,
// tool calls and tool results.
func TestTranslateRequest(t *testing.T) {
	for _, from := range codecs {
		body, err := from.EncodeRequest(conversation())
		if err != nil {
			t.Fatalf("%s: encode: %v", from.Format(), err)
		}
		src, err := from.DecodeRequest(body)
		if err != nil {
			t.Fatalf("%s: decode own body: %v\n%s", from.Format(), err, body)
		}
		want := essenceOf(t, src)
		for _, to := range codecs {
			t.Run(fmt.Sprintf("%s_to_%s", from.Format(), to.Format()), func(t *testing.T) {
				req, err := from.DecodeRequest(body)
				if err != nil {
					t.Fatal(err)
				}
				req.Model = "model-x" // Gemini has it in the URL
				out, err := llm.Translate(req, from.Format(), to)
				if err != nil {
					t.Fatalf("translate: %v", err)
				}
				got, err := to.DecodeRequest(out)
				if err != nil {
					t.Fatalf("%s cannot decode its own encoding: %v\n%s", to.Format(), err, out)
				}
				if diff := cmp.Diff(want, essenceOf(t, got)); diff != "" {
					t.Errorf("lost in translation (-%s +%s):\n%s\n%s", from.Format(), to.Format(), diff, out)
				}
				if got.MaxTokens != 512 || got.Temperature == nil || *got.Temperature != 0.5 || !cmp.Equal(got.Stop, []string{"END"}) {
					t.Errorf("sampling parameters lost: max_tokens %d temperature %v stop %v", got.MaxTokens, got.Temperature, got.Stop)
				}
			})
		}
	}
}

// TestTranslateImages: an inline image in a user turn crosses every pair.
func TestTranslateImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	req := &llm.Request{Model: "model-x", MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{
		llm.TextPart("What is this?"), {Type: llm.PartImage, MediaType: "image/png", Data: png},
	}}}}
	for _, from := range codecs {
		body, err := from.EncodeRequest(req)
		if err != nil {
			t.Fatalf("%s: %v", from.Format(), err)
		}
		for _, to := range codecs {
			t.Run(fmt.Sprintf("%s_to_%s", from.Format(), to.Format()), func(t *testing.T) {
				src, err := from.DecodeRequest(body)
				if err != nil {
					t.Fatal(err)
				}
				src.Model = "model-x"
				out, err := llm.Translate(src, from.Format(), to)
				if err != nil {
					t.Fatal(err)
				}
				got, err := to.DecodeRequest(out)
				if err != nil {
					t.Fatal(err)
				}
				parts := got.Messages[0].Content
				if len(parts) != 2 || parts[0].Text != "What is this?" || parts[1].Type != llm.PartImage ||
					parts[1].MediaType != "image/png" || !bytes.Equal(parts[1].Data, png) {
					t.Errorf("image lost: %+v\n%s", parts, out)
				}
			})
		}
	}
}

// TestTranslateParallelToolCalls: OpenAI's parallel_tool_calls=false is
// Anthropic's disable_parallel_tool_use, both ways.
func TestTranslateParallelToolCalls(t *testing.T) {
	oa, an := codecs[0], codecs[1]
	req, err := oa.DecodeRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"parallel_tool_calls":false}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := llm.Translate(req, oa.Format(), an)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"disable_parallel_tool_use":true`) {
		t.Fatalf("anthropic body lacks disable_parallel_tool_use:\n%s", out)
	}
	back, err := an.DecodeRequest(out)
	if err != nil {
		t.Fatal(err)
	}
	out, err = llm.Translate(back, an.Format(), oa)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"parallel_tool_calls":false`) {
		t.Errorf("openai body lacks parallel_tool_calls:false:\n%s", out)
	}
}

// TestTranslateUnsupported: a feature the target cannot express is an
// *llm.UnsupportedError naming it, not a silent drop.
func TestTranslateUnsupported(t *testing.T) {
	oa, an, ge := codecs[0], codecs[1], codecs[2]
	const oaBase = `{"model":"m","messages":[{"role":"user","content":"hi"}]`
	const anBase = `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name     string
		from, to llm.Codec
		body     string
		feature  string
	}{
		{"openai seed to anthropic", oa, an, oaBase + `,"seed":7}`, "seed"},
		{"openai json_object to anthropic", oa, an, oaBase + `,"response_format":{"type":"json_object"}}`, "response_format.json_object"},
		{"openai participant name to anthropic", oa, an, `{"model":"m","messages":[{"role":"user","name":"ann","content":"hi"}]}`, "messages.0.name"},
		{"openai participant name to gemini", oa, ge, `{"model":"m","messages":[{"role":"user","name":"ann","content":"hi"}]}`, "messages[0].name"},
		{"openai user to gemini", oa, ge, oaBase + `,"user":"u1"}`, "user"},
		{"openai metadata to gemini", oa, ge, oaBase + `,"metadata":{"k":"v"}}`, "metadata"},
		{"openai parallel_tool_calls to gemini", oa, ge, oaBase + `,"tools":[{"type":"function","function":{"name":"f"}}],"parallel_tool_calls":false}`, "tool_choice.disable_parallel"},
		{"openai strict tool to gemini", oa, ge, oaBase + `,"tools":[{"type":"function","function":{"name":"f","strict":true}}]}`, "tools[0].strict"},
		{"openai unknown field to anthropic", oa, an, oaBase + `,"presence_penalty":0.5}`, "extra.presence_penalty"},
		{"openai unknown field to gemini", oa, ge, oaBase + `,"logprobs":true}`, "extra.logprobs"},
		{"anthropic top_k to openai", an, oa, anBase + `,"top_k":40}`, "top_k"},
		{"anthropic error result to openai", an, oa, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"boom"}]}]}`, "messages[2].is_error"},
		{"anthropic thinking to openai", an, oa, anBase + `,"thinking":{"type":"enabled","budget_tokens":1024}}`, "extra.thinking"},
		{"gemini safety settings to openai", ge, oa, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]}`, "extra.safetySettings"},
		{"gemini top_k to openai", ge, oa, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"topK":40}}`, "top_k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := tt.from.DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatalf("%s decode: %v", tt.from.Format(), err)
			}
			req.Model = "m"
			out, err := llm.Translate(req, tt.from.Format(), tt.to)
			var ue *llm.UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want *llm.UnsupportedError; wrote\n%s", err, out)
			}
			if ue.Format != tt.to.Format() || ue.Feature != tt.feature {
				t.Errorf("unsupported %s/%s, want %s/%s", ue.Format, ue.Feature, tt.to.Format(), tt.feature)
			}
		})
	}
}

// summary is what a client reads from a stream.
type summary struct {
	Text      string
	ToolCalls []llm.ToolCall
	Finish    llm.FinishReason
	Usage     llm.Usage
	End       error
}

// readStream decodes a stream to its end and sums it up.
func readStream(t *testing.T, d llm.StreamDecoder) ([]llm.StreamEvent, summary) {
	t.Helper()
	var evs []llm.StreamEvent
	var s summary
	calls := map[int]*llm.ToolCall{}
	var order []int
	for {
		ev, err := d.Next()
		if err != nil {
			s.End = err
			break
		}
		evs = append(evs, ev)
		switch ev.Type {
		case llm.EventTextDelta:
			s.Text += ev.Text
		case llm.EventToolCallDelta:
			tc := calls[ev.ToolCall.Index]
			if tc == nil {
				tc = &llm.ToolCall{}
				calls[ev.ToolCall.Index] = tc
				order = append(order, ev.ToolCall.Index)
			}
			if ev.ToolCall.ID != "" {
				tc.ID = ev.ToolCall.ID
			}
			if ev.ToolCall.Name != "" {
				tc.Name = ev.ToolCall.Name
			}
			tc.Arguments += ev.ToolCall.Arguments
		case llm.EventFinish:
			s.Finish = ev.FinishReason
		case llm.EventUsage:
			s.Usage = *ev.Usage
		case llm.EventError:
			t.Fatalf("unexpected in-band error %v", ev.Err)
		}
	}
	for _, i := range order {
		tc := *calls[i]
		tc.Arguments = canonJSON(t, tc.Arguments)
		s.ToolCalls = append(s.ToolCalls, tc)
	}
	return evs, s
}

func encodeStream(t *testing.T, c llm.Codec, evs []llm.StreamEvent) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := c.NewStreamEncoder(&buf)
	for _, ev := range evs {
		if err := enc.Encode(ev); err != nil {
			t.Fatalf("%s encode %s: %v", c.Format(), ev.Type, err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTranslateStream: a stream written by one format's encoder, decoded,
// re-encoded by another format and decoded again reads back the same text,
// tool calls, finish reason and usage.
func TestTranslateStream(t *testing.T) {
	usage := &llm.Usage{InputTokens: 120, OutputTokens: 35, CachedInputTokens: 40}
	streams := map[string][]llm.StreamEvent{
		"text": {
			{Type: llm.EventStart, ID: "msg_1", Model: "model-x"},
			{Type: llm.EventTextDelta, Text: "Paris is "},
			{Type: llm.EventTextDelta, Text: "warmer: 21°C vs -3°C.\n<ok> & \"done\""},
			{Type: llm.EventFinish, FinishReason: llm.FinishStop},
			{Type: llm.EventUsage, Usage: usage},
		},
		"tool calls": {
			{Type: llm.EventStart, ID: "msg_2", Model: "model-x"},
			{Type: llm.EventTextDelta, Text: "Checking."},
			{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "call_paris1", Name: "get_weather"}},
			{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: `{"city":`}},
			{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: `"Paris"}`}},
			{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 1, ID: "call_oslo22", Name: "get_weather", Arguments: `{"city":"Oslo"}`}},
			{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls},
			{Type: llm.EventUsage, Usage: usage},
		},
		"length": {
			{Type: llm.EventStart, ID: "msg_3", Model: "model-x"},
			{Type: llm.EventTextDelta, Text: "It was the best of times, it was"},
			{Type: llm.EventFinish, FinishReason: llm.FinishLength},
			{Type: llm.EventUsage, Usage: usage},
		},
	}
	for name, evs := range streams {
		for _, from := range codecs {
			wire := encodeStream(t, from, evs)
			srcEvs, want := readStream(t, from.NewStreamDecoder(bytes.NewReader(wire)))
			if _, orig := readStream(t, &replay{evs: evs}); !cmp.Equal(orig, want, cmp.Comparer(func(a, b error) bool { return a == b })) {
				t.Fatalf("%s %s: own stream reads as %+v, want %+v", from.Format(), name, want, orig)
			}
			for _, to := range codecs {
				t.Run(fmt.Sprintf("%s/%s_to_%s", name, from.Format(), to.Format()), func(t *testing.T) {
					_, got := readStream(t, to.NewStreamDecoder(bytes.NewReader(encodeStream(t, to, srcEvs))))
					if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
						t.Errorf("stream changed (-%s +%s):\n%s", from.Format(), to.Format(), diff)
					}
				})
			}
		}
	}
}

// TestTranslateStreamUnsupported: an "error" finish (Gemini OTHER, say) has
// no OpenAI or Anthropic equivalent: the encoder refuses it rather than
// presenting a broken answer as a clean stop.
func TestTranslateStreamUnsupported(t *testing.T) {
	ge := codecs[2]
	wire := encodeStream(t, ge, []llm.StreamEvent{
		{Type: llm.EventStart, ID: "x", Model: "model-x"},
		{Type: llm.EventTextDelta, Text: "partial"},
		{Type: llm.EventFinish, FinishReason: llm.FinishError},
	})
	if !strings.Contains(string(wire), "OTHER") {
		t.Fatalf("gemini wrote no OTHER finish:\n%s", wire)
	}
	srcEvs, _ := readStream(t, ge.NewStreamDecoder(bytes.NewReader(wire)))
	for _, to := range codecs[:2] {
		t.Run(string(to.Format()), func(t *testing.T) {
			enc := to.NewStreamEncoder(io.Discard)
			var err error
			for _, ev := range srcEvs {
				if err = enc.Encode(ev); err != nil {
					break
				}
			}
			var ue *llm.UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want *llm.UnsupportedError", err)
			}
		})
	}
}

// replay is a StreamDecoder over a list of events.
type replay struct{ evs []llm.StreamEvent }

func (r *replay) Next() (llm.StreamEvent, error) {
	if len(r.evs) == 0 {
		return llm.StreamEvent{}, io.EOF
	}
	ev := r.evs[0]
	r.evs = r.evs[1:]
	return ev, nil
}
