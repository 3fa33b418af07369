package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/openai"
)

var fixedNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func codec() openai.Codec { return openai.Codec{Now: func() time.Time { return fixedNow }} }

// newClient returns an SDK client, without retries, talking to h.
func newClient(t *testing.T, h http.HandlerFunc) sdk.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return sdk.NewClient(
		option.WithBaseURL(srv.URL+"/v1"),
		option.WithAPIKey("sk-test"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(srv.Client()),
	)
}

func minimalParams() sdk.ChatCompletionNewParams {
	return sdk.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("hi")},
	}
}

var (
	textResponse = &llm.Response{
		ID: "chatcmpl-1", Model: "gpt-4o-mini", Created: 1764417600,
		Content: "Hello <b>there</b> & \"welcome\"\n✓", FinishReason: llm.FinishStop,
		Usage: llm.Usage{InputTokens: 12, OutputTokens: 7, CachedInputTokens: 4, ReasoningTokens: 2},
	}
	toolResponse = &llm.Response{
		ID: "chatcmpl-2", Model: "gpt-4o", Created: 1764417601,
		ToolCalls: []llm.ToolCall{
			{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "call_b", Name: "get_time", Arguments: `{"tz":"Europe/Paris"}`},
		},
		FinishReason: llm.FinishToolCalls,
		Usage:        llm.Usage{InputTokens: 50, OutputTokens: 20, CacheCreationTokens: 30},
	}
	refusalResponse = &llm.Response{
		ID: "chatcmpl-3", Model: "gpt-4o", Created: 1764417602,
		Refusal: "I can't help with that.", FinishReason: llm.FinishStop,
		Usage: llm.Usage{InputTokens: 5, OutputTokens: 6},
	}
	lengthResponse = &llm.Response{
		ID: "chatcmpl-4", Model: "gpt-4o", Created: 1764417603,
		Content: "truncated at", FinishReason: llm.FinishLength,
		Usage: llm.Usage{InputTokens: 5, OutputTokens: 64},
	}
)

// TestSDKReadsResponse: the official SDK reads our chat.completion objects.
func TestSDKReadsResponse(t *testing.T) {
	for _, resp := range []*llm.Response{textResponse, toolResponse, refusalResponse, lengthResponse} {
		t.Run(resp.ID, func(t *testing.T) {
			client := newClient(t, func(w http.ResponseWriter, r *http.Request) {
				body, err := codec().EncodeResponse(resp)
				if err != nil {
					t.Error(err)
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(body)
			})
			got, err := client.Chat.Completions.New(context.Background(), minimalParams())
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Choices) != 1 {
				t.Fatalf("got %d choices", len(got.Choices))
			}
			if diff := cmp.Diff(resp, fromSDK(got)); diff != "" {
				t.Errorf("SDK read (-want +got):\n%s", diff)
			}
			if got.Object != "chat.completion" || got.Choices[0].Message.Role != "assistant" {
				t.Errorf("object %q role %q", got.Object, got.Choices[0].Message.Role)
			}
			if resp.Content == "" && got.Choices[0].Message.JSON.Content.Valid() {
				t.Errorf("content should be null when only tool calls or a refusal, raw %s", got.Choices[0].Message.RawJSON())
			}
		})
	}
}

// fromSDK converts the SDK's view of a completion back to the normalized model.
func fromSDK(c *sdk.ChatCompletion) *llm.Response {
	ch := c.Choices[0]
	r := &llm.Response{
		ID: c.ID, Model: c.Model, Created: c.Created,
		Content: ch.Message.Content, Refusal: ch.Message.Refusal,
		FinishReason: llm.FinishReason(ch.FinishReason),
		Usage: llm.Usage{
			InputTokens:         int(c.Usage.PromptTokens),
			OutputTokens:        int(c.Usage.CompletionTokens),
			CachedInputTokens:   int(c.Usage.PromptTokensDetails.CachedTokens),
			CacheCreationTokens: int(c.Usage.PromptTokensDetails.CacheWriteTokens),
			ReasoningTokens:     int(c.Usage.CompletionTokensDetails.ReasoningTokens),
		},
	}
	if c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens {
		r.Usage.InputTokens = -1 // make the mismatch visible
	}
	for _, tc := range ch.Message.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return r
}

// streamOf returns the events a provider would stream for a response.
func streamOf(resp *llm.Response, usage bool) []llm.StreamEvent {
	evs := []llm.StreamEvent{{Type: llm.EventStart, ID: resp.ID, Model: resp.Model}}
	for i := 0; i < len(resp.Content); i += 5 {
		evs = append(evs, llm.StreamEvent{Type: llm.EventTextDelta, Text: resp.Content[i:min(i+5, len(resp.Content))]})
	}
	for i, tc := range resp.ToolCalls {
		evs = append(evs, llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name}})
		half := len(tc.Arguments) / 2
		evs = append(evs,
			llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: i, Arguments: tc.Arguments[:half]}},
			llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: i, Arguments: tc.Arguments[half:]}})
	}
	evs = append(evs, llm.StreamEvent{Type: llm.EventFinish, FinishReason: resp.FinishReason})
	if usage {
		u := resp.Usage
		evs = append(evs, llm.StreamEvent{Type: llm.EventUsage, Usage: &u})
	}
	return evs
}

func streamHandler(t *testing.T, evs []llm.StreamEvent, close bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		enc := codec().NewStreamEncoder(w)
		for _, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				t.Errorf("encode %s: %v", ev.Type, err)
			}
			w.(http.Flusher).Flush()
		}
		if close {
			if err := enc.Close(); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestSDKReadsStream: the SDK's stream reader and accumulator read our chunks.
func TestSDKReadsStream(t *testing.T) {
	for _, resp := range []*llm.Response{textResponse, toolResponse, lengthResponse} {
		t.Run(resp.ID, func(t *testing.T) {
			client := newClient(t, streamHandler(t, streamOf(resp, true), true))
			params := minimalParams()
			params.StreamOptions.IncludeUsage = param.NewOpt(true)
			stream := client.Chat.Completions.NewStreaming(context.Background(), params)
			var acc sdk.ChatCompletionAccumulator
			chunks, usageChunks := 0, 0
			var usage sdk.CompletionUsage
			for stream.Next() {
				chunk := stream.Current()
				if !acc.AddChunk(chunk) {
					t.Fatalf("accumulator rejected chunk %d: %s", chunks, chunk.RawJSON())
				}
				if chunk.Object != "chat.completion.chunk" || chunk.ID != resp.ID {
					t.Errorf("chunk %d: object %q id %q", chunks, chunk.Object, chunk.ID)
				}
				if len(chunk.Choices) == 0 {
					usageChunks++
					usage = chunk.Usage
				}
				chunks++
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if usageChunks != 1 {
				t.Errorf("usage chunks = %d, want 1", usageChunks)
			}
			// The accumulator drops cache_write_tokens; read usage from the
			// usage chunk itself.
			acc.Usage = usage
			got := fromSDK(&acc.ChatCompletion)
			got.Created = resp.Created // streams are stamped by the codec's clock
			if diff := cmp.Diff(resp, got); diff != "" {
				t.Errorf("SDK accumulated (-want +got):\n%s", diff)
			}
			if acc.Created != fixedNow.Unix() {
				t.Errorf("created = %d, want %d", acc.Created, fixedNow.Unix())
			}
		})
	}
}

// TestSDKStreamInBandError: an in-band error chunk is an error for the SDK.
func TestSDKStreamInBandError(t *testing.T) {
	evs := []llm.StreamEvent{
		{Type: llm.EventStart, ID: "chatcmpl-9", Model: "gpt-4o"},
		{Type: llm.EventTextDelta, Text: "partial"},
		{Type: llm.EventError, Err: &llm.Error{Type: llm.ErrServer, Message: "upstream stream died"}},
	}
	client := newClient(t, streamHandler(t, evs, true))
	stream := client.Chat.Completions.NewStreaming(context.Background(), minimalParams())
	text := ""
	for stream.Next() {
		if c := stream.Current(); len(c.Choices) > 0 {
			text += c.Choices[0].Delta.Content
		}
	}
	err := stream.Err()
	if err == nil || !strings.Contains(err.Error(), "upstream stream died") {
		t.Fatalf("stream error = %v, want the in-band message", err)
	}
	if text != "partial" {
		t.Errorf("text before the error = %q", text)
	}
}

// TestSDKReadsErrors: the SDK sees status, type, code, param and message.
func TestSDKReadsErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        *llm.Error
		wantStatus int
		wantType   string
		wantCode   string
	}{
		{"bad request", llm.BadRequest("messages[1].content", "Invalid type"), 400, "invalid_request_error", ""},
		{"context length", &llm.Error{Type: llm.ErrContextLength, Message: "This model's maximum context length is 128000 tokens.", Param: "messages"}, 400, "invalid_request_error", "context_length_exceeded"},
		{"auth", &llm.Error{Type: llm.ErrAuthentication, Message: "Incorrect API key provided."}, 401, "invalid_request_error", "invalid_api_key"},
		{"forbidden", &llm.Error{Type: llm.ErrPermission, Message: "Country, region, or territory not supported"}, 403, "request_forbidden", ""},
		{"not found", &llm.Error{Type: llm.ErrNotFound, Message: "The model `gpt-9` does not exist."}, 404, "invalid_request_error", "model_not_found"},
		{"rate limit", &llm.Error{Type: llm.ErrRateLimit, Message: "Rate limit reached for gpt-4o on tokens per min (TPM).", RetryAfter: 2 * time.Second}, 429, "requests", "rate_limit_exceeded"},
		{"quota", &llm.Error{Type: llm.ErrRateLimit, Code: "insufficient_quota", Message: "You exceeded your current quota."}, 429, "insufficient_quota", "insufficient_quota"},
		{"overloaded from anthropic", &llm.Error{Status: 529, Type: llm.ErrOverloaded, ProviderType: "overloaded_error", Message: "Overloaded"}, 503, "server_error", "overloaded"},
		{"server", &llm.Error{Type: llm.ErrServer, Message: "The server had an error while processing your request."}, 500, "server_error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := newClient(t, func(w http.ResponseWriter, r *http.Request) {
				status, body := codec().EncodeError(tt.err)
				w.Header().Set("Content-Type", "application/json")
				if tt.err.RetryAfter > 0 {
					w.Header().Set("Retry-After", strconv.Itoa(int(tt.err.RetryAfter/time.Second)))
				}
				w.WriteHeader(status)
				_, _ = w.Write(body)
			})
			_, err := client.Chat.Completions.New(context.Background(), minimalParams())
			var apiErr *sdk.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v is not an *openai.Error", err)
			}
			if apiErr.StatusCode != tt.wantStatus || apiErr.Type != tt.wantType || apiErr.Code != tt.wantCode ||
				apiErr.Message != tt.err.Message || apiErr.Param != tt.err.Param {
				t.Errorf("SDK saw status %d type %q code %q param %q message %q; want %d %q %q %q %q",
					apiErr.StatusCode, apiErr.Type, apiErr.Code, apiErr.Param, apiErr.Message,
					tt.wantStatus, tt.wantType, tt.wantCode, tt.err.Param, tt.err.Message)
			}
			// And our decoder reads the same body back into the same class.
			back := codec().DecodeError(apiErr.StatusCode, apiErr.Response.Header, []byte(`{"error":`+apiErr.RawJSON()+`}`))
			if back.Type != tt.err.Type || back.Message != tt.err.Message || back.RetryAfter != tt.err.RetryAfter {
				t.Errorf("DecodeError = %+v, want type %s", back, tt.err.Type)
			}
		})
	}
}

// TestSDKRequestsDecode: the SDK's own requests decode to the expected
// normalized request, and re-encoding them decodes to the same again.
func TestSDKRequestsDecode(t *testing.T) {
	weatherSchema := map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"city": map[string]any{"type": "string"}},
		"required":             []string{"city"},
		"additionalProperties": false,
	}
	f := func(v float64) *float64 { return &v }
	seed := int64(42)
	tests := []struct {
		name   string
		stream bool
		params sdk.ChatCompletionNewParams
		want   *llm.Request
	}{
		{
			name:   "minimal",
			params: minimalParams(),
			want:   &llm.Request{Model: "gpt-4o-mini", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}}},
		},
		{
			name: "tools and a tool round trip",
			params: sdk.ChatCompletionNewParams{
				Model: "gpt-4o",
				Messages: []sdk.ChatCompletionMessageParamUnion{
					sdk.SystemMessage("be brief"),
					sdk.UserMessage("weather in Paris?"),
					{OfAssistant: &sdk.ChatCompletionAssistantMessageParam{ToolCalls: []sdk.ChatCompletionMessageToolCallUnionParam{{
						OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{ID: "call_1", Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"city":"Paris"}`}},
					}}}},
					sdk.ToolMessage(`{"temp_c":21}`, "call_1"),
				},
				Tools: []sdk.ChatCompletionToolUnionParam{sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
					Name: "get_weather", Description: param.NewOpt("Current weather"), Parameters: weatherSchema, Strict: param.NewOpt(true),
				})},
				ToolChoice:        sdk.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &sdk.ChatCompletionNamedToolChoiceParam{Function: sdk.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"}}},
				ParallelToolCalls: param.NewOpt(false),
				Temperature:       param.NewOpt(0.2),
				TopP:              param.NewOpt(0.9),
				Seed:              param.NewOpt(seed),
				MaxTokens:         param.NewOpt[int64](256),
				Stop:              sdk.ChatCompletionNewParamsStopUnion{OfString: param.NewOpt("END")},
				User:              param.NewOpt("user-7"),
				Metadata:          shared.Metadata{"team": "sre"},
			},
			want: &llm.Request{
				Model: "gpt-4o",
				Messages: []llm.Message{
					{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("be brief")}},
					{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("weather in Paris?")}},
					{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
					{Role: llm.RoleTool, ToolCallID: "call_1", Name: "get_weather", Content: []llm.Part{llm.TextPart(`{"temp_c":21}`)}},
				},
				Tools: []llm.Tool{{Name: "get_weather", Description: "Current weather", Strict: true,
					Parameters: json.RawMessage(`{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}`)}},
				ToolChoice:  &llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "get_weather", DisableParallel: true},
				Temperature: f(0.2), TopP: f(0.9), Seed: &seed, MaxTokens: 256, Stop: []string{"END"},
				User: "user-7", Metadata: map[string]string{"team": "sre"},
			},
		},
		{
			name:   "json schema, stream with usage, images, extras",
			stream: true,
			params: sdk.ChatCompletionNewParams{
				Model: "gpt-4o",
				Messages: []sdk.ChatCompletionMessageParamUnion{
					sdk.DeveloperMessage("answer in JSON"),
					sdk.UserMessage([]sdk.ChatCompletionContentPartUnionParam{
						sdk.TextContentPart("what is in these images?"),
						sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: "https://example.com/cat.png"}),
						sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,iVBORw0KGgo="}),
					}),
				},
				ResponseFormat: sdk.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
					JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "animals", Schema: weatherSchema, Strict: param.NewOpt(true)},
				}},
				StreamOptions:       sdk.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
				MaxCompletionTokens: param.NewOpt[int64](512),
				Stop:                sdk.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"a", "b"}},
				PresencePenalty:     param.NewOpt(0.5),
				ReasoningEffort:     shared.ReasoningEffortLow,
			},
			want: &llm.Request{
				Model: "gpt-4o",
				Messages: []llm.Message{
					{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("answer in JSON")}},
					{Role: llm.RoleUser, Content: []llm.Part{
						llm.TextPart("what is in these images?"),
						{Type: llm.PartImage, URL: "https://example.com/cat.png"},
						{Type: llm.PartImage, MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")},
					}},
				},
				ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "animals", Strict: true,
					Schema: json.RawMessage(`{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}`)},
				MaxTokens: 512, Stop: []string{"a", "b"}, Stream: true, IncludeUsage: true,
				Extra: map[string]json.RawMessage{"presence_penalty": json.RawMessage(`0.5`), "reasoning_effort": json.RawMessage(`"low"`)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			client := newClient(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
					t.Errorf("request to %s with auth %q", r.URL.Path, r.Header.Get("Authorization"))
				}
				body, _ = io.ReadAll(r.Body)
				// Answer with a valid, minimal reply so the SDK is content.
				if tt.stream {
					streamHandler(t, streamOf(textResponse, false), true)(w, r)
					return
				}
				b, _ := codec().EncodeResponse(textResponse)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(b)
			})
			if tt.stream {
				s := client.Chat.Completions.NewStreaming(context.Background(), tt.params)
				for s.Next() {
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
			} else if _, err := client.Chat.Completions.New(context.Background(), tt.params); err != nil {
				t.Fatal(err)
			}
			got, err := codec().DecodeRequest(body)
			if err != nil {
				t.Fatalf("decode SDK request %s: %v", body, err)
			}
			if diff := cmp.Diff(tt.want, got, rawJSONEqual); diff != "" {
				t.Errorf("decoded SDK request (-want +got):\n%s\nbody: %s", diff, body)
			}
			again, err := codec().EncodeRequest(got)
			if err != nil {
				t.Fatal(err)
			}
			back, err := codec().DecodeRequest(again)
			if err != nil {
				t.Fatalf("decode re-encoded request: %v\n%s", err, again)
			}
			if diff := cmp.Diff(got, back, rawJSONEqual); diff != "" {
				t.Errorf("re-encoded request differs (-first +second):\n%s", diff)
			}
		})
	}
}

var rawType = reflect.TypeFor[json.RawMessage]()

// rawJSONEqual compares JSON by meaning, not by bytes.
var rawJSONEqual = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type() == rawType },
	cmp.Comparer(func(a, b json.RawMessage) bool {
		if len(a) == 0 || len(b) == 0 {
			return len(a) == len(b)
		}
		var x, y any
		if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
			return string(a) == string(b)
		}
		return cmp.Equal(x, y)
	}))

// equateEmpty is cmpopts.EquateEmpty for everything but raw JSON.
var equateEmpty = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type() != rawType }, cmpopts.EquateEmpty())

// TestEncodedRequestFitsSDKTypes: what EncodeRequest writes unmarshals into
// the SDK's own request type with every field where the SDK expects it.
func TestEncodedRequestFitsSDKTypes(t *testing.T) {
	body, err := codec().EncodeRequest(fullRequest())
	if err != nil {
		t.Fatal(err)
	}
	var p sdk.ChatCompletionNewParams
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("SDK type rejects our request: %v", err)
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"model", p.Model == "gpt-4o"},
		{"4 messages", len(p.Messages) == 4},
		{"system", p.Messages[0].OfSystem != nil && p.Messages[0].OfSystem.Content.OfString.Value != ""},
		{"user parts", p.Messages[1].OfUser != nil && len(p.Messages[1].OfUser.Content.OfArrayOfContentParts) == 3},
		{"user image", p.Messages[1].OfUser != nil && len(p.Messages[1].OfUser.Content.OfArrayOfContentParts) == 3 &&
			p.Messages[1].OfUser.Content.OfArrayOfContentParts[1].OfImageURL != nil &&
			p.Messages[1].OfUser.Content.OfArrayOfContentParts[1].OfImageURL.ImageURL.URL == "https://example.com/cat.png"},
		{"assistant tool call", p.Messages[2].OfAssistant != nil && len(p.Messages[2].OfAssistant.ToolCalls) == 1 &&
			p.Messages[2].OfAssistant.ToolCalls[0].OfFunction != nil && p.Messages[2].OfAssistant.ToolCalls[0].OfFunction.Function.Name == "get_weather"},
		{"tool result", p.Messages[3].OfTool != nil && p.Messages[3].OfTool.ToolCallID == "call_1"},
		{"tool", len(p.Tools) == 1 && p.Tools[0].OfFunction != nil && p.Tools[0].OfFunction.Function.Name == "get_weather" && p.Tools[0].OfFunction.Function.Strict.Value},
		{"tool_choice", p.ToolChoice.OfAuto.Value == "required"},
		{"parallel_tool_calls", p.ParallelToolCalls.Valid() && !p.ParallelToolCalls.Value},
		{"response_format", p.ResponseFormat.OfJSONSchema != nil && p.ResponseFormat.OfJSONSchema.JSONSchema.Name == "answer"},
		{"max_completion_tokens", p.MaxCompletionTokens.Value == 300},
		{"temperature", p.Temperature.Value == 0.7},
		{"seed", p.Seed.Value == 7},
		{"stop", len(p.Stop.OfStringArray) == 2},
		{"stream_options", p.StreamOptions.IncludeUsage.Value},
		{"user", p.User.Value == "user-7"},
		{"metadata", p.Metadata["team"] == "sre"},
		{"n (extra)", p.N.Value == 1},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("SDK view of our request: %s wrong\n%s", c.what, body)
		}
	}
}
