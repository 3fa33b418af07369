package gemini_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/gemini"
)

// captured is one request the SDK sent.
type captured struct {
	path, query, apiKey string
	body                []byte
}

// sdkServer starts an httptest server that records each request and answers
// with respond, and a genai client pointed at it.
func sdkServer(t *testing.T, respond func(w http.ResponseWriter, stream bool)) (*genai.Client, func() captured) {
	t.Helper()
	var mu sync.Mutex
	var last captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, stream, err := gemini.ParsePath(r.URL.Path)
		mu.Lock()
		last = captured{path: r.URL.Path, query: r.URL.RawQuery, apiKey: r.Header.Get("x-goog-api-key"), body: body}
		mu.Unlock()
		if err != nil {
			status, b := gemini.Codec{}.EncodeError(err.(*llm.Error))
			w.WriteHeader(status)
			_, _ = w.Write(b)
			return
		}
		respond(w, stream)
	}))
	t.Cleanup(srv.Close)
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      "test-key-not-secret",
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	return client, func() captured { mu.Lock(); defer mu.Unlock(); return last }
}

// respondWith answers a non-streamed call with EncodeResponse and a streamed
// one with the stream encoder fed events.
func respondWith(t *testing.T, resp *llm.Response, events []llm.StreamEvent) func(http.ResponseWriter, bool) {
	return func(w http.ResponseWriter, stream bool) {
		if !stream {
			b, err := gemini.Codec{}.EncodeResponse(resp)
			if err != nil {
				t.Errorf("EncodeResponse: %v", err)
				w.WriteHeader(500)
				return
			}
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			_, _ = w.Write(b)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		enc := gemini.Codec{}.NewStreamEncoder(w)
		for _, ev := range events {
			if err := enc.Encode(ev); err != nil {
				t.Errorf("Encode(%v): %v", ev.Type, err)
				return
			}
			w.(http.Flusher).Flush()
		}
		if err := enc.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func usagePtr(u llm.Usage) *llm.Usage { return &u }

func TestSDKReadsResponses(t *testing.T) {
	usage := llm.Usage{InputTokens: 12, OutputTokens: 9, CachedInputTokens: 4, ReasoningTokens: 2}
	wantUsage := &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount: 12, CandidatesTokenCount: 7, TotalTokenCount: 21,
		CachedContentTokenCount: 4, ThoughtsTokenCount: 2,
	}
	tests := []struct {
		name      string
		resp      *llm.Response
		events    []llm.StreamEvent
		wantText  string
		wantCalls []*genai.FunctionCall
		wantStop  genai.FinishReason
	}{
		{
			name: "text",
			resp: &llm.Response{ID: "resp-1", Model: "gemini-2.5-flash", Content: "Hello, <world> & \"friends\"\n",
				FinishReason: llm.FinishStop, Usage: usage},
			events: []llm.StreamEvent{
				{Type: llm.EventStart, ID: "resp-1", Model: "gemini-2.5-flash"},
				{Type: llm.EventTextDelta, Text: "Hello, <world> "},
				{Type: llm.EventTextDelta, Text: "& \"friends\""},
				{Type: llm.EventTextDelta, Text: "\n"},
				{Type: llm.EventFinish, FinishReason: llm.FinishStop},
				{Type: llm.EventUsage, Usage: usagePtr(usage)},
			},
			wantText: "Hello, <world> & \"friends\"\n",
			wantStop: genai.FinishReasonStop,
		},
		{
			name: "length",
			resp: &llm.Response{ID: "resp-2", Model: "gemini-2.5-flash", Content: "cut sh",
				FinishReason: llm.FinishLength, Usage: usage},
			events: []llm.StreamEvent{
				{Type: llm.EventStart, ID: "resp-2", Model: "gemini-2.5-flash"},
				{Type: llm.EventTextDelta, Text: "cut sh"},
				{Type: llm.EventUsage, Usage: usagePtr(usage)}, // usage before finish
				{Type: llm.EventFinish, FinishReason: llm.FinishLength},
			},
			wantText: "cut sh",
			wantStop: genai.FinishReasonMaxTokens,
		},
		{
			name: "safety",
			resp: &llm.Response{ID: "resp-3", Model: "gemini-2.5-flash", FinishReason: llm.FinishContentFilter, Usage: usage},
			events: []llm.StreamEvent{
				{Type: llm.EventStart, ID: "resp-3", Model: "gemini-2.5-flash"},
				{Type: llm.EventFinish, FinishReason: llm.FinishContentFilter},
				{Type: llm.EventUsage, Usage: usagePtr(usage)},
			},
			wantStop: genai.FinishReasonSafety,
		},
		{
			name: "function calls",
			resp: &llm.Response{ID: "resp-4", Model: "gemini-2.5-pro", Content: "Checking.",
				ToolCalls: []llm.ToolCall{
					{ID: "toolu_01", Name: "get_weather", Arguments: `{"city": "Paris", "units": ["c"]}`},
					{ID: "call_1", Name: "get_time", Arguments: `{"tz":"Europe/Paris"}`},
				},
				FinishReason: llm.FinishToolCalls, Usage: usage},
			events: []llm.StreamEvent{
				{Type: llm.EventStart, ID: "resp-4", Model: "gemini-2.5-pro"},
				{Type: llm.EventTextDelta, Text: "Checking."},
				// OpenAI-style fragments: the encoder gathers them into one call.
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "toolu_01", Name: "get_weather"}},
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: `{"city": "Pa`}},
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: `ris", "units": ["c"]}`}},
				{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 1, ID: "call_1", Name: "get_time", Arguments: `{"tz":"Europe/Paris"}`}},
				{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls},
				{Type: llm.EventUsage, Usage: usagePtr(usage)},
			},
			wantText: "Checking.",
			wantCalls: []*genai.FunctionCall{
				{ID: "toolu_01", Name: "get_weather", Args: map[string]any{"city": "Paris", "units": []any{"c"}}},
				{Name: "get_time", Args: map[string]any{"tz": "Europe/Paris"}}, // synthetic ids are not sent
			},
			wantStop: genai.FinishReasonStop,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/generateContent", func(t *testing.T) {
			client, last := sdkServer(t, respondWith(t, tt.resp, tt.events))
			got, err := client.Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hi"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if c := last(); c.path != "/v1beta/models/gemini-2.5-flash:generateContent" || c.apiKey != "test-key-not-secret" {
				t.Errorf("SDK called %s with key %q", c.path, c.apiKey)
			}
			if got.Text() != tt.wantText {
				t.Errorf("Text() = %q, want %q", got.Text(), tt.wantText)
			}
			if diff := cmp.Diff(tt.wantCalls, got.FunctionCalls()); diff != "" {
				t.Errorf("FunctionCalls() (-want +got):\n%s", diff)
			}
			if fr := got.Candidates[0].FinishReason; fr != tt.wantStop {
				t.Errorf("FinishReason = %q, want %q", fr, tt.wantStop)
			}
			if diff := cmp.Diff(wantUsage, got.UsageMetadata); diff != "" {
				t.Errorf("UsageMetadata (-want +got):\n%s", diff)
			}
			if got.ResponseID != tt.resp.ID || got.ModelVersion != tt.resp.Model {
				t.Errorf("ResponseID, ModelVersion = %q, %q; want %q, %q", got.ResponseID, got.ModelVersion, tt.resp.ID, tt.resp.Model)
			}
		})
		t.Run(tt.name+"/streamGenerateContent", func(t *testing.T) {
			client, last := sdkServer(t, respondWith(t, tt.resp, tt.events))
			var text string
			var calls []*genai.FunctionCall
			var finish genai.FinishReason
			var usage *genai.GenerateContentResponseUsageMetadata
			chunks := 0
			for chunk, err := range client.Models.GenerateContentStream(context.Background(), "gemini-2.5-flash", genai.Text("hi"), nil) {
				if err != nil {
					t.Fatal(err)
				}
				chunks++
				text += chunk.Text()
				calls = append(calls, chunk.FunctionCalls()...)
				if len(chunk.Candidates) > 0 && chunk.Candidates[0].FinishReason != "" {
					finish = chunk.Candidates[0].FinishReason
				}
				if chunk.UsageMetadata != nil {
					usage = chunk.UsageMetadata
				}
				if chunk.ResponseID != tt.resp.ID || chunk.ModelVersion != tt.resp.Model {
					t.Errorf("chunk %d: ResponseID, ModelVersion = %q, %q", chunks, chunk.ResponseID, chunk.ModelVersion)
				}
			}
			if c := last(); c.path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || c.query != "alt=sse" {
				t.Errorf("SDK called %s?%s", c.path, c.query)
			}
			if text != tt.wantText {
				t.Errorf("text = %q, want %q", text, tt.wantText)
			}
			if diff := cmp.Diff(tt.wantCalls, calls); diff != "" {
				t.Errorf("function calls (-want +got):\n%s", diff)
			}
			if finish != tt.wantStop {
				t.Errorf("finish = %q, want %q", finish, tt.wantStop)
			}
			if diff := cmp.Diff(wantUsage, usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSDKSeesErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        *llm.Error
		wantCode   int
		wantStatus string
		wantDelay  string
	}{
		{"rate limit", &llm.Error{Type: llm.ErrRateLimit, Message: "Resource has been exhausted (e.g. check quota).", RetryAfter: 2 * time.Second},
			429, "RESOURCE_EXHAUSTED", "2s"},
		{"overloaded", &llm.Error{Type: llm.ErrOverloaded, Status: 529, Message: "The model is overloaded. Please try again later."},
			503, "UNAVAILABLE", ""},
		{"auth", &llm.Error{Type: llm.ErrAuthentication, Message: "API key expired."}, 401, "UNAUTHENTICATED", ""},
		{"invalid", &llm.Error{Type: llm.ErrInvalidRequest, Param: "generationConfig.temperature", Message: "temperature must be at most 2"},
			400, "INVALID_ARGUMENT", ""},
		{"server", &llm.Error{Type: llm.ErrServer, Message: "An internal error has occurred."}, 500, "INTERNAL", ""},
		{"timeout", &llm.Error{Type: llm.ErrTimeout, Message: "Deadline expired before operation could complete."}, 504, "DEADLINE_EXCEEDED", ""},
	}
	check := func(t *testing.T, err error, tt struct {
		name       string
		err        *llm.Error
		wantCode   int
		wantStatus string
		wantDelay  string
	}) {
		t.Helper()
		var apiErr genai.APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("error %v (%T) is not a genai.APIError", err, err)
		}
		if apiErr.Code != tt.wantCode || apiErr.Status != tt.wantStatus || apiErr.Message != tt.err.Message {
			t.Errorf("APIError = %d %s %q; want %d %s %q", apiErr.Code, apiErr.Status, apiErr.Message, tt.wantCode, tt.wantStatus, tt.err.Message)
		}
		var delay string
		for _, d := range apiErr.Details {
			if d["@type"] == "type.googleapis.com/google.rpc.RetryInfo" {
				delay, _ = d["retryDelay"].(string)
			}
		}
		if delay != tt.wantDelay {
			t.Errorf("retryDelay = %q, want %q", delay, tt.wantDelay)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, _ := sdkServer(t, func(w http.ResponseWriter, stream bool) {
				status, body := gemini.Codec{}.EncodeError(tt.err)
				w.Header().Set("Content-Type", "application/json; charset=UTF-8")
				w.WriteHeader(status)
				_, _ = w.Write(body)
			})
			_, err := client.Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hi"), nil)
			check(t, err, tt)
			for _, err := range client.Models.GenerateContentStream(context.Background(), "gemini-2.5-flash", genai.Text("hi"), nil) {
				check(t, err, tt)
				break
			}
		})
		t.Run(tt.name+"/in-band", func(t *testing.T) {
			client, _ := sdkServer(t, respondWith(t, nil, []llm.StreamEvent{
				{Type: llm.EventStart, ID: "r", Model: "m"},
				{Type: llm.EventTextDelta, Text: "partial"},
				{Type: llm.EventError, Err: tt.err},
			}))
			var text string
			var got error
			for chunk, err := range client.Models.GenerateContentStream(context.Background(), "gemini-2.5-flash", genai.Text("hi"), nil) {
				if err != nil {
					got = err
					break
				}
				text += chunk.Text()
			}
			if text != "partial" {
				t.Errorf("text before the error = %q", text)
			}
			check(t, got, tt)
		})
	}
}

func f32(f float32) *float32 { return &f }
func i32(i int32) *int32     { return &i }
func f64(f float64) *float64 { return &f }

func TestSDKRequestsDecode(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2}
	weatherSchema := &genai.Schema{
		Type:        genai.TypeObject,
		Description: "Weather query",
		Properties: map[string]*genai.Schema{
			"city":  {Type: genai.TypeString, Description: "City name"},
			"units": {Type: genai.TypeString, Enum: []string{"c", "f"}, Nullable: genai.Ptr(true)},
			"days":  {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeInteger, Minimum: genai.Ptr(0.0)}, MaxItems: genai.Ptr[int64](7)},
		},
		Required:         []string{"city"},
		PropertyOrdering: []string{"city", "units", "days"},
	}
	contents := []*genai.Content{
		{Role: genai.RoleUser, Parts: []*genai.Part{
			genai.NewPartFromText("What is the weather in Paris? Here is a map."),
			genai.NewPartFromBytes(png, "image/png"),
			genai.NewPartFromURI("https://generativelanguage.googleapis.com/v1beta/files/abc", "application/pdf"),
		}},
		{Role: genai.RoleModel, Parts: []*genai.Part{
			genai.NewPartFromText("Let me check."),
			genai.NewPartFromFunctionCall("get_weather", map[string]any{"city": "Paris"}),
			{FunctionCall: &genai.FunctionCall{ID: "fc-7", Name: "get_time", Args: map[string]any{"tz": "CET"}}},
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{
			genai.NewPartFromFunctionResponse("get_weather", map[string]any{"temp_c": 18, "sky": "clear"}),
			{FunctionResponse: &genai.FunctionResponse{ID: "fc-7", Name: "get_time", Response: map[string]any{"output": "14:05"}}},
		}},
		{Role: genai.RoleModel, Parts: []*genai.Part{genai.NewPartFromText("18°C and clear at 14:05.")}},
		{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromText("And tomorrow? Answer in JSON.")}},
	}
	tests := []struct {
		name   string
		config *genai.GenerateContentConfig
		want   *llm.Request
	}{
		{
			name: "everything",
			config: &genai.GenerateContentConfig{
				SystemInstruction: genai.NewContentFromText("You are a weather bot.", genai.RoleUser),
				Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
					{Name: "get_weather", Description: "Get the weather", Parameters: weatherSchema},
					{Name: "get_time", Description: "Get the time"},
				}}},
				ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
					Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{"get_weather"}}},
				MaxOutputTokens:  256,
				Temperature:      f32(0.25),
				TopP:             f32(0.5),
				TopK:             f32(40),
				Seed:             i32(7),
				StopSequences:    []string{"END"},
				ResponseMIMEType: "application/json",
				ResponseSchema: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
					"forecast": {Type: genai.TypeString}}, Required: []string{"forecast"}},
				ThinkingConfig: &genai.ThinkingConfig{ThinkingBudget: i32(0)},
				SafetySettings: []*genai.SafetySetting{{Category: genai.HarmCategoryHarassment, Threshold: genai.HarmBlockThresholdBlockNone}},
			},
			want: &llm.Request{
				Messages: []llm.Message{
					{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("You are a weather bot.")}},
					{Role: llm.RoleUser, Content: []llm.Part{
						llm.TextPart("What is the weather in Paris? Here is a map."),
						{Type: llm.PartImage, MediaType: "image/png", Data: png},
						{Type: llm.PartImage, MediaType: "application/pdf", URL: "https://generativelanguage.googleapis.com/v1beta/files/abc"},
					}},
					{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("Let me check.")}, ToolCalls: []llm.ToolCall{
						{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`},
						{ID: "fc-7", Name: "get_time", Arguments: `{"tz":"CET"}`},
					}},
					{Role: llm.RoleTool, Name: "get_weather", ToolCallID: "call_0", Content: []llm.Part{llm.TextPart(`{"sky":"clear","temp_c":18}`)}},
					{Role: llm.RoleTool, Name: "get_time", ToolCallID: "fc-7", Content: []llm.Part{llm.TextPart("14:05")}},
					{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("18°C and clear at 14:05.")}},
					{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("And tomorrow? Answer in JSON.")}},
				},
				Tools: []llm.Tool{
					{Name: "get_weather", Description: "Get the weather", Parameters: json.RawMessage(
						`{"description":"Weather query","properties":{"city":{"description":"City name","type":"string"},` +
							`"days":{"items":{"minimum":0,"type":"integer"},"maxItems":7,"type":"array"},"units":{"enum":["c","f"],"type":["string","null"]}},` +
							`"propertyOrdering":["city","units","days"],"required":["city"],"type":"object"}`)},
					{Name: "get_time", Description: "Get the time"},
				},
				ToolChoice:     &llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "get_weather"},
				ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Schema: json.RawMessage(`{"properties":{"forecast":{"type":"string"}},"required":["forecast"],"type":"object"}`)},
				MaxTokens:      256,
				Temperature:    f64(0.25),
				TopP:           f64(0.5),
				TopK:           genai.Ptr(40),
				Seed:           genai.Ptr[int64](7),
				Stop:           []string{"END"},
				Extra: map[string]json.RawMessage{
					"generationConfig.thinkingConfig": json.RawMessage(`{"thinkingBudget":0}`),
					"safetySettings":                  json.RawMessage(`[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]`),
				},
			},
		},
		{
			name: "json schema and auto",
			config: &genai.GenerateContentConfig{
				Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
					{Name: "get_weather", ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}},
				}}},
				ToolConfig:         &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}},
				ResponseMIMEType:   "application/json",
				ResponseJsonSchema: map[string]any{"type": "object", "additionalProperties": false},
			},
			want: &llm.Request{
				Tools:          []llm.Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"properties":{"city":{"type":"string"}},"type":"object"}`)}},
				ToolChoice:     &llm.ToolChoice{Mode: llm.ToolChoiceAuto},
				ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Schema: json.RawMessage(`{"additionalProperties":false,"type":"object"}`)},
			},
		},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				client, last := sdkServer(t, respondWith(t,
					&llm.Response{ID: "r", Model: "m", Content: "ok", FinishReason: llm.FinishStop},
					[]llm.StreamEvent{{Type: llm.EventStart, ID: "r", Model: "m"}, {Type: llm.EventTextDelta, Text: "ok"}, {Type: llm.EventFinish, FinishReason: llm.FinishStop}}))
				if stream {
					for _, err := range client.Models.GenerateContentStream(context.Background(), "gemini-2.5-pro", contents, tt.config) {
						if err != nil {
							t.Fatal(err)
						}
					}
				} else if _, err := client.Models.GenerateContent(context.Background(), "gemini-2.5-pro", contents, tt.config); err != nil {
					t.Fatal(err)
				}
				c := last()
				model, gotStream, err := gemini.ParsePath(c.path)
				if err != nil || model != "gemini-2.5-pro" || gotStream != stream {
					t.Errorf("ParsePath(%q) = %q, %v, %v", c.path, model, gotStream, err)
				}
				got, err := gemini.Codec{}.DecodeRequest(c.body)
				if err != nil {
					t.Fatalf("DecodeRequest: %v\nbody: %s", err, c.body)
				}
				want := *tt.want
				if want.Messages == nil {
					// The same conversation as the first case, without its system instruction.
					want.Messages = tests[0].want.Messages[1:]
				}
				if diff := cmp.Diff(&want, got, cmp.Comparer(rawEqual)); diff != "" {
					t.Errorf("decoded request (-want +got):\n%s\nbody: %s", diff, c.body)
				}
			})
		}
	}
}

// rawEqual compares JSON texts by value.
func rawEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

// sdkRequest is the generateContent body in the SDK's own types, which mirror
// the API's; decoding into it with unknown fields disallowed checks that every
// field EncodeRequest writes is one Gemini defines, with the right type.
type sdkRequest struct {
	Contents          []*genai.Content        `json:"contents"`
	SystemInstruction *genai.Content          `json:"systemInstruction,omitempty"`
	Tools             []*genai.Tool           `json:"tools,omitempty"`
	ToolConfig        *genai.ToolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *genai.GenerationConfig `json:"generationConfig,omitempty"`
	SafetySettings    []*genai.SafetySetting  `json:"safetySettings,omitempty"`
	CachedContent     string                  `json:"cachedContent,omitempty"`
}

func TestEncodedRequestsUseSDKFields(t *testing.T) {
	for _, path := range fixtures(t, "requests", ".json") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			req, err := gemini.Codec{}.DecodeRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := gemini.Codec{}.EncodeRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(enc))
			dec.DisallowUnknownFields()
			var r sdkRequest
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("encoded body does not fit the SDK's types: %v\n%s", err, enc)
			}
			if len(r.Contents) == 0 {
				t.Fatal("no contents")
			}
		})
	}
}
