package openai_test

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/llm"
)

func TestDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		name, body, param, msg string
	}{
		{"not json", `{"model":`, "", "could not parse"},
		{"not an object", `[1,2]`, "", "could not parse"},
		{"missing model", `{"messages":[{"role":"user","content":"hi"}]}`, "model", "Missing required parameter"},
		{"model not a string", `{"model":4,"messages":[{"role":"user","content":"hi"}]}`, "model", "expected a string, but got an integer"},
		{"missing messages", `{"model":"m"}`, "messages", "Missing required parameter"},
		{"empty messages", `{"model":"m","messages":[]}`, "messages", "empty array"},
		{"messages not an array", `{"model":"m","messages":{}}`, "messages", "expected an array, but got an object"},
		{"message not an object", `{"model":"m","messages":["hi"]}`, "messages[0]", "expected an object, but got a string"},
		{"missing role", `{"model":"m","messages":[{"content":"hi"}]}`, "messages[0].role", "Missing required parameter"},
		{"bad role", `{"model":"m","messages":[{"role":"robot","content":"hi"}]}`, "messages[0].role", "Invalid value: 'robot'"},
		{"function role", `{"model":"m","messages":[{"role":"function","name":"f","content":"x"}]}`, "messages[0].role", "deprecated"},
		{"bad content type", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":42}]}`, "messages[2].content", "expected one of a string or array of objects, but got an integer"},
		{"missing user content", `{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content", "Missing required parameter"},
		{"assistant without content or calls", `{"model":"m","messages":[{"role":"assistant"}]}`, "messages[0].content", "Missing required parameter"},
		{"part without type", `{"model":"m","messages":[{"role":"user","content":[{"text":"x"}]}]}`, "messages[0].content[0].type", "Missing required parameter"},
		{"audio part", `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{}}]}]}`, "messages[0].content[0].type", "'input_audio' is not supported"},
		{"image in system", `{"model":"m","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x"}}]}]}`, "messages[0].content[0].type", "only supported for messages with role 'user'"},
		{"image without url", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, "messages[0].content[0].image_url.url", "Missing required parameter"},
		{"tool without call id", `{"model":"m","messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id", "Missing required parameter"},
		{"tool call without name", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}]}`, "messages[0].tool_calls[0].function.name", "Missing required parameter"},
		{"tool call custom", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{}}]}]}`, "messages[0].tool_calls[0].type", "'custom' is not supported"},
		{"tool not function", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"custom"}]}`, "tools[0].type", "'custom' is not supported"},
		{"tool bad name", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"a b"}}]}`, "tools[0].function.name", "does not match pattern"},
		{"tool parameters not object", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":[]}}]}`, "tools[0].function.parameters", "expected an object"},
		{"bad tool_choice", `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"always"}`, "tool_choice", "Invalid value: 'always'"},
		{"tool_choice without name", `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"function","function":{}}}`, "tool_choice.function.name", "Missing required parameter"},
		{"parallel not bool", `{"model":"m","messages":[{"role":"user","content":"x"}],"parallel_tool_calls":"no"}`, "parallel_tool_calls", "expected a boolean"},
		{"bad response_format", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"yaml"}}`, "response_format.type", "Invalid value: 'yaml'"},
		{"json_schema without name", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`, "response_format.json_schema.name", "Missing required parameter"},
		{"temperature too high", `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":3}`, "temperature", "Expected a value <= 2, but got 3"},
		{"top_p negative", `{"model":"m","messages":[{"role":"user","content":"x"}],"top_p":-0.1}`, "top_p", "below minimum"},
		{"max_tokens zero", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":0}`, "max_tokens", "Expected a value >= 1"},
		{"max_completion_tokens decimal", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_completion_tokens":1.5}`, "max_completion_tokens", "expected an integer, but got a decimal"},
		{"stop too long", `{"model":"m","messages":[{"role":"user","content":"x"}],"stop":["a","b","c","d","e"]}`, "stop", "maximum length 4"},
		{"stop of numbers", `{"model":"m","messages":[{"role":"user","content":"x"}],"stop":[1]}`, "stop", "string or an array of strings"},
		{"stream_options without stream", `{"model":"m","messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}}`, "stream_options", "only allowed when 'stream' is enabled"},
		{"include_usage not bool", `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":1}}`, "stream_options.include_usage", "expected a boolean"},
		{"metadata not strings", `{"model":"m","messages":[{"role":"user","content":"x"}],"metadata":{"a":1}}`, "metadata", "object of strings"},
		{"seed not int", `{"model":"m","messages":[{"role":"user","content":"x"}],"seed":"7"}`, "seed", "expected an integer, but got a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := codec().DecodeRequest([]byte(tt.body))
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("error = %v (request %+v), want *llm.Error", err, req)
			}
			if e.Status != 400 || e.Type != llm.ErrInvalidRequest || e.Param != tt.param || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("got status %d type %s param %q message %q; want 400 invalid_request %q containing %q",
					e.Status, e.Type, e.Param, e.Message, tt.param, tt.msg)
			}
			// The error body is what OpenAI would send.
			status, body := codec().EncodeError(e)
			if status != 400 || !json.Valid(body) {
				t.Errorf("EncodeError = %d %s", status, body)
			}
		})
	}
}

func TestDecodeRequestMappings(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *llm.Request
	}{
		{
			name: "nulls are absent",
			body: `{"model":"m","messages":[{"role":"user","content":"x","name":null}],"temperature":null,"tools":null,"tool_choice":null,"stop":null,"user":null}`,
			want: &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("x")}}}},
		},
		{
			name: "parallel_tool_calls false without tool_choice",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"parallel_tool_calls":false}`,
			want: &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("x")}}},
				Tools: []llm.Tool{{Name: "f"}}, ToolChoice: &llm.ToolChoice{Mode: llm.ToolChoiceAuto, DisableParallel: true}},
		},
		{
			name: "parallel_tool_calls false without tools has no effect",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"parallel_tool_calls":false}`,
			want: &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("x")}}}},
		},
		{
			name: "parallel_tool_calls true is the default",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"parallel_tool_calls":true,"tool_choice":"required"}`,
			want: &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("x")}}}, ToolChoice: &llm.ToolChoice{Mode: llm.ToolChoiceRequired}},
		},
		{
			name: "assistant refusal and parts, names",
			body: `{"model":"m","messages":[{"role":"user","name":"ann","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"assistant","content":null,"refusal":"no"},{"role":"assistant","content":[{"type":"refusal","refusal":"still no"}]}]}`,
			want: &llm.Request{Model: "m", Messages: []llm.Message{
				{Role: llm.RoleUser, Name: "ann", Content: []llm.Part{llm.TextPart("a"), llm.TextPart("b")}},
				{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("no")}},
				{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("still no")}},
			}},
		},
		{
			name: "max_completion_tokens wins, json_object, stop string",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":10,"max_completion_tokens":20,"response_format":{"type":"json_object"},"stop":"\n\n"}`,
			want: &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("x")}}}, MaxTokens: 20,
				ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONObject}, Stop: []string{"\n\n"}},
		},
		{
			name: "non-canonical data URI stays a URL",
			body: `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo","detail":"low"}}]}]}`,
			want: &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, URL: "data:image/png;base64,iVBORw0KGgo"}}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec().DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestExtraVerbatim: unknown fields come back byte for byte.
func TestExtraVerbatim(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"x"}],"logit_bias":{"50256": -100},"n":2,"reasoning_effort":"high","web_search_options":{"search_context_size":"low"}}`
	req, err := codec().DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]json.RawMessage{
		"logit_bias":         json.RawMessage(`{"50256": -100}`),
		"n":                  json.RawMessage(`2`),
		"reasoning_effort":   json.RawMessage(`"high"`),
		"web_search_options": json.RawMessage(`{"search_context_size":"low"}`),
	}
	if diff := cmp.Diff(want, req.Extra); diff != "" {
		t.Fatalf("Extra (-want +got):\n%s", diff)
	}
	out, err := codec().EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if !strings.Contains(string(out), `"`+k+`":`+string(v)) {
			t.Errorf("encoded request lacks %s:%s verbatim:\n%s", k, v, out)
		}
	}
}

func TestEncodeRequestUnsupported(t *testing.T) {
	k := 40
	base := func() *llm.Request {
		return &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("x")}}}}
	}
	tests := []struct {
		name    string
		mutate  func(r *llm.Request)
		feature string
	}{
		{"top_k", func(r *llm.Request) { r.TopK = &k }, "top_k"},
		{"tool result error flag", func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: "c", IsError: true, Content: []llm.Part{llm.TextPart("boom")}})
		}, "messages[1].is_error"},
		{"image in system", func(r *llm.Request) {
			r.Messages[0] = llm.Message{Role: llm.RoleSystem, Content: []llm.Part{{Type: llm.PartImage, URL: "https://x"}}}
		}, "messages[0].content"},
		{"image in tool result", func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: "c", Content: []llm.Part{{Type: llm.PartImage, MediaType: "image/png", Data: []byte{1}}}})
		}, "messages[1].content"},
		{"unknown part", func(r *llm.Request) { r.Messages[0].Content[0].Type = "audio" }, "messages[0].content[0].type"},
		{"unknown role", func(r *llm.Request) { r.Messages[0].Role = "critic" }, "messages[0].role"},
		{"tool calls on a user message", func(r *llm.Request) { r.Messages[0].ToolCalls = []llm.ToolCall{{ID: "c", Name: "f"}} }, "messages[0].tool_calls"},
		{"tool message without call id", func(r *llm.Request) { r.Messages = append(r.Messages, llm.Message{Role: llm.RoleTool}) }, "messages[1].tool_call_id"},
		{"tool name with a dot", func(r *llm.Request) { r.Tools = []llm.Tool{{Name: "ns.f"}} }, "tools[0].name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base()
			tt.mutate(r)
			_, err := codec().EncodeRequest(r)
			var ue *llm.UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("error = %v, want *llm.UnsupportedError", err)
			}
			if ue.Format != llm.FormatOpenAI || ue.Feature != tt.feature {
				t.Errorf("got %s/%s, want openai/%s", ue.Format, ue.Feature, tt.feature)
			}
		})
	}
}

// TestEncodeUnnamedSchema: a json_schema without a name (an Anthropic or
// Gemini structured output) gets a stable one; a named one keeps its name.
func TestEncodeUnnamedSchema(t *testing.T) {
	name := func(rf *llm.ResponseFormat) string {
		t.Helper()
		r := &llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}}, ResponseFormat: rf}
		body, err := codec().EncodeRequest(r)
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			ResponseFormat struct {
				JSONSchema struct {
					Name string `json:"name"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := json.Unmarshal(body, &w); err != nil {
			t.Fatal(err)
		}
		return w.ResponseFormat.JSONSchema.Name
	}
	a := name(&llm.ResponseFormat{Type: llm.ResponseJSONSchema, Schema: json.RawMessage(`{"type":"object"}`)})
	b := name(&llm.ResponseFormat{Type: llm.ResponseJSONSchema, Schema: json.RawMessage(`{"type":"array"}`)})
	if !regexp.MustCompile(`^response_[0-9a-f]{8}$`).MatchString(a) || a == b {
		t.Errorf("generated names %q and %q", a, b)
	}
	if again := name(&llm.ResponseFormat{Type: llm.ResponseJSONSchema, Schema: json.RawMessage(`{"type":"object"}`)}); again != a {
		t.Errorf("the same schema named %q, then %q", a, again)
	}
	if got := name(&llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "invoice", Schema: json.RawMessage(`{}`)}); got != "invoice" {
		t.Errorf("a named schema sent as %q", got)
	}
}

func TestEncodeRequestExtraErrors(t *testing.T) {
	r := &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser}}, Extra: map[string]json.RawMessage{"temperature": json.RawMessage("1")}}
	if _, err := codec().EncodeRequest(r); err == nil {
		t.Error("no error for an extra field colliding with a modeled one")
	}
	r.Extra = map[string]json.RawMessage{"n": json.RawMessage("{")}
	if _, err := codec().EncodeRequest(r); err == nil {
		t.Error("no error for invalid extra JSON")
	}
}
