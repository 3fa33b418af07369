package gemini_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/gemini"
)

func TestDecodeRequestErrors(t *testing.T) {
	const user = `{"role":"user","parts":[{"text":"hi"}]}`
	tests := []struct {
		name, body, param, msg string
	}{
		{"not json", `{"contents":`, "", "not valid JSON"},
		{"not an object", `[1]`, "", "must be a JSON object"},
		{"no contents", `{}`, "contents", "must not be empty"},
		{"empty contents", `{"contents":[]}`, "contents", "must not be empty"},
		{"contents not array", `{"contents":{}}`, "contents", "must be an array"},
		{"unknown top field", `{"contents":[` + user + `],"temprature":1}`, "temprature", `unknown field "temprature"`},
		{"bad role", `{"contents":[{"role":"assistant","parts":[{"text":"x"}]}]}`, "contents[0].role", `not "assistant"`},
		{"no parts", `{"contents":[` + user + `,{"role":"model"}]}`, "contents[1].parts", "at least one part"},
		{"empty part", `{"contents":[{"parts":[{}]}]}`, "contents[0].parts[0]", "part has no data"},
		{"two kinds", `{"contents":[{"parts":[{"text":"a","inlineData":{"mimeType":"image/png","data":"AA=="}}]}]}`, "contents[0].parts[0].inlineData", "both text and inlineData"},
		{"text not string", `{"contents":[{"parts":[{"text":1}]}]}`, "contents[0].parts[0].text", "must be a string"},
		{"unknown part field", `{"contents":[` + user + `,{"role":"model","parts":[{"text":"a","txet":"b"}]}]}`, "contents[1].parts[0].txet", "unknown field"},
		{"thought signature", `{"contents":[` + user + `,{"role":"model","parts":[{"text":"a","thoughtSignature":"AAAA"}]}]}`, "contents[1].parts[0].thoughtSignature", "does not support"},
		{"thought", `{"contents":[{"role":"model","parts":[{"text":"a","thought":true}]}]}`, "contents[0].parts[0].thought", "does not support"},
		{"executable code", `{"contents":[{"parts":[{"executableCode":{"code":"x"}}]}]}`, "contents[0].parts[0].executableCode", "does not support"},
		{"bad base64", `{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"!!!"}}]}]}`, "contents[0].parts[0].inlineData.data", "not base64"},
		{"no mime type", `{"contents":[{"parts":[{"inlineData":{"data":"AA=="}}]}]}`, "contents[0].parts[0].inlineData.mimeType", "required"},
		{"no file uri", `{"contents":[{"parts":[{"fileData":{"mimeType":"application/pdf"}}]}]}`, "contents[0].parts[0].fileData.fileUri", "required"},
		{"call in user turn", `{"contents":[{"role":"user","parts":[{"functionCall":{"name":"f"}}]}]}`, "contents[0].parts[0]", "belongs in a model turn"},
		{"response in model turn", `{"contents":[{"role":"model","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`, "contents[0].parts[0]", "belongs in a user turn"},
		{"call without name", `{"contents":[{"role":"model","parts":[{"functionCall":{"args":{}}}]}]}`, "contents[0].parts[0].functionCall.name", "required"},
		{"args not object", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]}]}`, "contents[0].parts[0].functionCall.args", "JSON object"},
		{"response not object", `{"contents":[{"parts":[{"functionResponse":{"name":"f","response":"x"}}]}]}`, "contents[0].parts[0].functionResponse.response", "JSON object"},
		{"response missing", `{"contents":[{"parts":[{"functionResponse":{"name":"f"}}]}]}`, "contents[0].parts[0].functionResponse.response", "required"},
		{"system media", `{"systemInstruction":{"parts":[{"inlineData":{"mimeType":"image/png","data":"AA=="}}]},"contents":[` + user + `]}`, "systemInstruction.parts[0]", "must be text"},
		{"system empty", `{"systemInstruction":{"parts":[]},"contents":[` + user + `]}`, "systemInstruction.parts", "at least one part"},
		{"server tool", `{"contents":[` + user + `],"tools":[{"googleSearch":{}}]}`, "tools[0].googleSearch", "does not support"},
		{"tool without name", `{"contents":[` + user + `],"tools":[{"functionDeclarations":[{"description":"x"}]}]}`, "tools[0].functionDeclarations[0].name", "required"},
		{"both parameter kinds", `{"contents":[` + user + `],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT"},"parametersJsonSchema":{}}]}]}`, "tools[0].functionDeclarations[0].parametersJsonSchema", "not both"},
		{"bad mode", `{"contents":[` + user + `],"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}}`, "toolConfig.functionCallingConfig.mode", "AUTO, ANY or NONE"},
		{"names without ANY", `{"contents":[` + user + `],"toolConfig":{"functionCallingConfig":{"mode":"AUTO","allowedFunctionNames":["f"]}}}`, "toolConfig.functionCallingConfig.allowedFunctionNames", "only be set when mode is ANY"},
		{"two allowed names", `{"contents":[` + user + `],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f","g"]}}}`, "toolConfig.functionCallingConfig.allowedFunctionNames", "at most one"},
		{"validated", `{"contents":[` + user + `],"toolConfig":{"functionCallingConfig":{"mode":"VALIDATED"}}}`, "toolConfig.functionCallingConfig.mode", "does not support"},
		{"max tokens zero", `{"contents":[` + user + `],"generationConfig":{"maxOutputTokens":0}}`, "generationConfig.maxOutputTokens", "integer between 1"},
		{"max tokens fraction", `{"contents":[` + user + `],"generationConfig":{"maxOutputTokens":1.5}}`, "generationConfig.maxOutputTokens", "integer"},
		{"temperature string", `{"contents":[` + user + `],"generationConfig":{"temperature":"hot"}}`, "generationConfig.temperature", "must be a number"},
		{"seed half quoted", `{"contents":[` + user + `],"generationConfig":{"seed":"42}}`, "", "not valid JSON"},
		{"seed quoted fraction", `{"contents":[` + user + `],"generationConfig":{"seed":"4.5"}}`, "generationConfig.seed", "integer between"},
		{"seed too big", `{"contents":[` + user + `],"generationConfig":{"seed":4294967296}}`, "generationConfig.seed", "integer between"},
		{"stop not strings", `{"contents":[` + user + `],"generationConfig":{"stopSequences":"END"}}`, "generationConfig.stopSequences", "array of strings"},
		{"mime type", `{"contents":[` + user + `],"generationConfig":{"responseMimeType":"text/x.enum"}}`, "generationConfig.responseMimeType", "not supported"},
		{"schema without json", `{"contents":[` + user + `],"generationConfig":{"responseSchema":{"type":"OBJECT"}}}`, "generationConfig.responseSchema", "application/json"},
		{"unknown generation field", `{"contents":[` + user + `],"generationConfig":{"max_tokens":5}}`, "generationConfig.maxTokens", "unknown field"},
		{"camel and snake", `{"contents":[` + user + `],"generationConfig":{"topP":0.5,"top_p":0.5}}`, "generationConfig.topP", "set twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gemini.Codec{}.DecodeRequest([]byte(tt.body))
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("DecodeRequest error = %v (%T), want *llm.Error", err, err)
			}
			if e.Status != 400 || e.Type != llm.ErrInvalidRequest {
				t.Errorf("error = %d %s, want 400 invalid_request", e.Status, e.Type)
			}
			if e.Param != tt.param {
				t.Errorf("Param = %q, want %q (%v)", e.Param, tt.param, e)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("Message = %q, want it to contain %q", e.Message, tt.msg)
			}
		})
	}
}

func TestDecodeRequestAccepts(t *testing.T) {
	tests := []struct {
		name, body string
		want       *llm.Request
	}{
		{
			name: "snake case and defaults",
			body: `{"system_instruction":{"parts":[{"text":"be brief"}]},"contents":[{"parts":[{"text":"hi"},{"inline_data":{"mime_type":"image/jpeg","data":"_-8"}}]}],` +
				`"generation_config":{"max_output_tokens":"64","top_k":40.0,"response_mime_type":"text/plain","candidate_count":1},"tool_config":{"function_calling_config":{"mode":"NONE"}},` +
				`"tools":[{"function_declarations":[{"name":"tags","parameters":{"type":"ARRAY","maxItems":"3","minItems":1,"items":{"type":"STRING","nullable":false}}}]}]}`,
			want: &llm.Request{
				Messages: []llm.Message{
					{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("be brief")}},
					{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi"), {Type: llm.PartImage, MediaType: "image/jpeg", Data: []byte{0xff, 0xef}}}},
				},
				Tools:          []llm.Tool{{Name: "tags", Parameters: json.RawMessage(`{"items":{"type":"string"},"maxItems":3,"minItems":1,"type":"array"}`)}},
				ToolChoice:     &llm.ToolChoice{Mode: llm.ToolChoiceNone},
				ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseText},
				MaxTokens:      64,
				TopK:           ptr(40),
				Extra:          map[string]json.RawMessage{"generationConfig.candidateCount": json.RawMessage(`1`)},
			},
		},
		{
			name: "function turn, nulls, error results and unmatched responses",
			body: `{"contents":[{"role":"user","parts":[{"text":"go"}]},` +
				`{"role":"model","parts":[{"functionCall":{"name":"a"}},{"text":"and"},{"functionCall":{"name":"b","args":{"x": 1}}},{"functionCall":{"name":"a","args":{}}}]},` +
				`{"role":"function","parts":[{"functionResponse":{"name":"b","response":{"error":"boom"}}},{"functionResponse":{"name":"a","response":{"output":{"v":1}}}},` +
				`{"text":"also"},{"functionResponse":{"name":"a","response":{}}},{"functionResponse":{"name":"zzz","response":{"output":"?"}}}]}],` +
				`"tools":null,"generationConfig":{"temperature":null}}`,
			want: &llm.Request{
				Messages: []llm.Message{
					{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("go")}},
					{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("and")}, ToolCalls: []llm.ToolCall{
						{ID: "call_0", Name: "a", Arguments: "{}"},
						{ID: "call_1", Name: "b", Arguments: `{"x":1}`},
						{ID: "call_2", Name: "a", Arguments: "{}"},
					}},
					{Role: llm.RoleTool, Name: "b", ToolCallID: "call_1", IsError: true, Content: []llm.Part{llm.TextPart("boom")}},
					{Role: llm.RoleTool, Name: "a", ToolCallID: "call_0", Content: []llm.Part{llm.TextPart(`{"output":{"v":1}}`)}},
					{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("also")}},
					{Role: llm.RoleTool, Name: "a", ToolCallID: "call_2", Content: []llm.Part{llm.TextPart(`{}`)}},
					{Role: llm.RoleTool, Name: "zzz", Content: []llm.Part{llm.TextPart("?")}},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gemini.Codec{}.DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(rawEqual)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestEncodeRequestUnsupported(t *testing.T) {
	user := llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}
	tests := []struct {
		name    string
		req     llm.Request
		feature string
	}{
		{"late system", llm.Request{Messages: []llm.Message{user, {Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("x")}}}}, "messages[1]"},
		{"system image", llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: []llm.Part{{Type: llm.PartImage, URL: "https://x/y.png"}}}, user}}, "messages[0].content[0]"},
		{"participant name", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Name: "bob", Content: []llm.Part{llm.TextPart("hi")}}}}, "messages[0].name"},
		{"empty user", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser}}}, "messages[0]"},
		{"no messages", llm.Request{}, "messages"},
		{"bad role", llm.Request{Messages: []llm.Message{{Role: "developer", Content: []llm.Part{llm.TextPart("x")}}}}, "messages[0].role"},
		{"args not object", llm.Request{Messages: []llm.Message{user, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "f", Arguments: `{"a":`}}}}}, "messages[1].tool_calls[0].arguments"},
		{"tool without name", llm.Request{Messages: []llm.Message{user, {Role: llm.RoleTool, ToolCallID: "nope", Content: []llm.Part{llm.TextPart("x")}}}}, "messages[1].name"},
		{"tool image", llm.Request{Messages: []llm.Message{user, {Role: llm.RoleTool, Name: "f", Content: []llm.Part{{Type: llm.PartImage, URL: "https://x"}}}}}, "messages[1].content[0]"},
		{"image without mime", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, Data: []byte{1}}}}}}, "messages[0].content[0].media_type"},
		{"bad data uri", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, URL: "data:image/png,abc"}}}}}, "messages[0].content[0].url"},
		{"strict tool", llm.Request{Messages: []llm.Message{user}, Tools: []llm.Tool{{Name: "f", Strict: true}}}, "tools[0].strict"},
		{"parameters not object", llm.Request{Messages: []llm.Message{user}, Tools: []llm.Tool{{Name: "f", Parameters: json.RawMessage(`"x"`)}}}, "tools[0].parameters"},
		{"disable parallel", llm.Request{Messages: []llm.Message{user}, ToolChoice: &llm.ToolChoice{Mode: llm.ToolChoiceAuto, DisableParallel: true}}, "tool_choice.disable_parallel"},
		{"user id", llm.Request{Messages: []llm.Message{user}, User: "u-1"}, "user"},
		{"metadata", llm.Request{Messages: []llm.Message{user}, Metadata: map[string]string{"a": "b"}}, "metadata"},
		{"seed range", llm.Request{Messages: []llm.Message{user}, Seed: ptr[int64](1 << 40)}, "seed"},
		{"foreign extra", llm.Request{Messages: []llm.Message{user}, Extra: map[string]json.RawMessage{"logit_bias": json.RawMessage(`{}`)}}, "extra.logit_bias"},
		{"schema not object", llm.Request{Messages: []llm.Message{user}, ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema}}, "response_format.schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gemini.Codec{}.EncodeRequest(&tt.req)
			var u *llm.UnsupportedError
			if !errors.As(err, &u) {
				t.Fatalf("EncodeRequest error = %v (%T), want *llm.UnsupportedError", err, err)
			}
			if u.Feature != tt.feature || u.Format != llm.FormatGemini {
				t.Errorf("Feature = %q (%s), want %q", u.Feature, u.Format, tt.feature)
			}
		})
	}
}

// TestEncodeRequestTranslated encodes a request as another format's decoder
// would produce it (OpenAI-style ids, tool messages without names, JSON
// Schema) and checks the exact Gemini body.
func TestEncodeRequestTranslated(t *testing.T) {
	req := &llm.Request{
		Model:  "ignored",
		Stream: true,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("Be terse.")}},
			{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("Use tools.")}},
			{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("weather?"), {Type: llm.PartImage, URL: "data:image/png;base64,iVBO"}}},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "call_abc", Name: "get_weather", Arguments: "{\n  \"city\": \"Oslo\"\n}"},
				{ID: "call_def", Name: "get_time", Arguments: ""},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_abc", Content: []llm.Part{llm.TextPart("rainy")}},
			{Role: llm.RoleTool, ToolCallID: "call_def", Content: []llm.Part{llm.TextPart(`{"time": "09:00"}`)}},
			{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("thanks")}},
		},
		Tools:          []llm.Tool{{Name: "get_weather", Description: "Weather", Parameters: json.RawMessage(`{"type": "object"}`)}, {Name: "get_time"}},
		ToolChoice:     &llm.ToolChoice{Mode: llm.ToolChoiceRequired},
		ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "answer", Strict: true, Schema: json.RawMessage(`{"type":"object"}`)},
		MaxTokens:      100,
		Temperature:    ptr(0.0),
		Stop:           []string{"\n\n"},
		IncludeUsage:   true,
	}
	got, err := gemini.Codec{}.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"contents":[` +
		`{"role":"user","parts":[{"text":"weather?"},{"inlineData":{"mimeType":"image/png","data":"iVBO"}}]},` +
		`{"role":"model","parts":[{"functionCall":{"id":"call_abc","name":"get_weather","args":{"city":"Oslo"}}},{"functionCall":{"id":"call_def","name":"get_time","args":{}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"id":"call_abc","name":"get_weather","response":{"output":"rainy"}}},{"functionResponse":{"id":"call_def","name":"get_time","response":{"time":"09:00"}}}]},` +
		`{"role":"user","parts":[{"text":"thanks"}]}],` +
		`"generationConfig":{"maxOutputTokens":100,"responseJsonSchema":{"type":"object"},"responseMimeType":"application/json","stopSequences":["\n\n"],"temperature":0},` +
		`"systemInstruction":{"parts":[{"text":"Be terse."},{"text":"Use tools."}]},` +
		`"toolConfig":{"functionCallingConfig":{"mode":"ANY"}},` +
		`"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Weather","parametersJsonSchema":{"type":"object"}},{"name":"get_time"}]}]}`
	if string(got) != want {
		t.Errorf("EncodeRequest =\n%s\nwant\n%s", got, want)
	}
}
