package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/anthropic"
)

var codec anthropic.Codec

// jsonEqual compares raw JSON by meaning, not bytes.
var jsonEqual = cmp.Options{
	cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().Type() == reflect.TypeFor[json.RawMessage]()
	}, cmp.Transformer("json", func(r json.RawMessage) any {
		if len(r) == 0 {
			return nil
		}
		var v any
		if err := json.Unmarshal(r, &v); err != nil {
			return "invalid JSON: " + string(r)
		}
		return v
	})),
}

// fakeAnthropic is an httptest server speaking the Messages API through the
// codec: it decodes every request and answers with respond.
type fakeAnthropic struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	decoded []*llm.Request
	respond func(w http.ResponseWriter, req *llm.Request)
}

func newFake(t *testing.T, respond func(w http.ResponseWriter, req *llm.Request)) *fakeAnthropic {
	t.Helper()
	f := &fakeAnthropic{t: t, respond: respond}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAnthropic) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != anthropic.Path || r.Method != http.MethodPost || r.Header.Get("anthropic-version") == "" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	req, err := codec.DecodeRequest(body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.decoded = append(f.decoded, req)
	f.mu.Unlock()
	if err != nil {
		var e *llm.Error
		if !errors.As(err, &e) {
			e = &llm.Error{Type: llm.ErrServer, Message: err.Error()}
		}
		writeError(w, e)
		return
	}
	f.respond(w, req)
}

func writeError(w http.ResponseWriter, e *llm.Error) {
	status, body := codec.EncodeError(e)
	w.Header().Set("Content-Type", "application/json")
	if ra := anthropic.RetryAfterHeader(e.RetryAfter); ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeResponse(w http.ResponseWriter, resp *llm.Response) {
	body, err := codec.EncodeResponse(resp)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func writeStream(w http.ResponseWriter, events []llm.StreamEvent, clean bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	enc := codec.NewStreamEncoder(w)
	for _, ev := range events {
		if err := enc.Encode(ev); err != nil {
			panic(err)
		}
		w.(http.Flusher).Flush()
	}
	if clean {
		if err := enc.Close(); err != nil {
			panic(err)
		}
	}
}

func (f *fakeAnthropic) client() *sdk.Client {
	c := sdk.NewClient(
		option.WithBaseURL(f.srv.URL),
		option.WithAPIKey("test-key"),
		option.WithMaxRetries(0),
	)
	return &c
}

// sampling is how SDK v2 sends the sampling parameters it no longer models.
var sampling = []option.RequestOption{
	option.WithJSONSet("temperature", 0.25),
	option.WithJSONSet("top_p", 0.9),
	option.WithJSONSet("top_k", 40),
}

func (f *fakeAnthropic) last() ([]byte, *llm.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[len(f.bodies)-1], f.decoded[len(f.decoded)-1]
}

func ptr[T any](v T) *T { return &v }

// conversation is a request with every feature the SDK and the normalized
// model share: system blocks, an image, a tool call and its result, tools,
// tool_choice, sampling, stop sequences, metadata and a field the model does
// not know.
func conversation() sdk.MessageNewParams {
	return sdk.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 512,
		System:    []sdk.TextBlockParam{{Text: "You are terse."}, {Text: "Answer in French."}},
		Messages: []sdk.MessageParam{
			sdk.NewUserMessage(sdk.NewTextBlock("What's the weather in Paris?"), sdk.NewImageBlockBase64("image/png", "iVBORw0KGgo=")),
			sdk.NewAssistantMessage(sdk.NewTextBlock("Let me check."), sdk.NewToolUseBlock("toolu_01", map[string]any{"city": "Paris"}, "get_weather")),
			sdk.NewUserMessage(sdk.NewToolResultBlock("toolu_01", "18C and sunny", false), sdk.NewTextBlock("And tomorrow?")),
		},
		Tools: []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{
			Name:        "get_weather",
			Description: sdk.String("Current weather for a city."),
			InputSchema: sdk.ToolInputSchemaParam{
				Properties: map[string]any{"city": map[string]any{"type": "string"}},
				Required:   []string{"city"},
			},
		}}},
		ToolChoice:    sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{DisableParallelToolUse: sdk.Bool(true)}},
		StopSequences: []string{"END"},
		Metadata:      sdk.MetadataParam{UserID: sdk.String("user-42")},
		ServiceTier:   sdk.MessageNewParamsServiceTierStandardOnly,
	}
}

func wantConversation() *llm.Request {
	return &llm.Request{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 512,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("You are terse."), llm.TextPart("Answer in French.")}},
			{Role: llm.RoleUser, Content: []llm.Part{
				llm.TextPart("What's the weather in Paris?"),
				{Type: llm.PartImage, MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("Let me check.")},
				ToolCalls: []llm.ToolCall{{ID: "toolu_01", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			{Role: llm.RoleTool, ToolCallID: "toolu_01", Name: "get_weather", Content: []llm.Part{llm.TextPart("18C and sunny")}},
			{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("And tomorrow?")}},
		},
		Tools: []llm.Tool{{
			Name:        "get_weather",
			Description: "Current weather for a city.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		}},
		ToolChoice:   &llm.ToolChoice{Mode: llm.ToolChoiceAuto, DisableParallel: true},
		Temperature:  ptr(0.25),
		TopP:         ptr(0.9),
		TopK:         ptr(40),
		Stop:         []string{"END"},
		IncludeUsage: true,
		User:         "user-42",
		Extra:        map[string]json.RawMessage{"service_tier": json.RawMessage(`"standard_only"`)},
	}
}

// TestSDKRequestsDecode captures the official SDK's own requests and checks
// that they decode into the expected normalized request, and that encoding
// that request gives back a body that decodes the same.
func TestSDKRequestsDecode(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}, "required": []any{"answer"}}
	tests := []struct {
		name   string
		params func() sdk.MessageNewParams
		opts   []option.RequestOption
		stream bool
		want   func() *llm.Request
	}{
		{"conversation", conversation, sampling, false, wantConversation},
		{"conversation stream", conversation, sampling, true, func() *llm.Request {
			r := wantConversation()
			r.Stream = true
			return r
		}},
		{"tool choice any, error result, structured output", func() sdk.MessageNewParams {
			return sdk.MessageNewParams{
				Model:     "claude-haiku-4-5",
				MaxTokens: 64,
				System:    []sdk.TextBlockParam{{Text: "sys"}},
				Messages: []sdk.MessageParam{
					sdk.NewUserMessage(sdk.NewTextBlock("go")),
					sdk.NewAssistantMessage(sdk.NewToolUseBlock("toolu_a", map[string]any{}, "a"), sdk.NewToolUseBlock("toolu_b", map[string]any{"n": 1}, "b")),
					sdk.NewUserMessage(sdk.NewToolResultBlock("toolu_a", "boom", true), sdk.NewToolResultBlock("toolu_b", "ok", false)),
				},
				Tools: []sdk.ToolUnionParam{
					{OfTool: &sdk.ToolParam{Name: "a", InputSchema: sdk.ToolInputSchemaParam{Properties: map[string]any{}}}},
					{OfTool: &sdk.ToolParam{Name: "b", Strict: sdk.Bool(true), InputSchema: sdk.ToolInputSchemaParam{Properties: map[string]any{"n": map[string]any{"type": "integer"}}}}},
				},
				ToolChoice:   sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{}},
				OutputConfig: sdk.OutputConfigParam{Format: sdk.JSONOutputFormatParam{Schema: schema}, Effort: sdk.OutputConfigEffortLow},
			}
		}, nil, false, func() *llm.Request {
			return &llm.Request{
				Model: "claude-haiku-4-5", MaxTokens: 64, IncludeUsage: true,
				Messages: []llm.Message{
					{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("sys")}},
					{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("go")}},
					{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
						{ID: "toolu_a", Name: "a", Arguments: `{}`},
						{ID: "toolu_b", Name: "b", Arguments: `{"n":1}`},
					}},
					{Role: llm.RoleTool, ToolCallID: "toolu_a", Name: "a", IsError: true, Content: []llm.Part{llm.TextPart("boom")}},
					{Role: llm.RoleTool, ToolCallID: "toolu_b", Name: "b", Content: []llm.Part{llm.TextPart("ok")}},
				},
				Tools: []llm.Tool{
					{Name: "a", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
					{Name: "b", Strict: true, Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
				},
				ToolChoice:     &llm.ToolChoice{Mode: llm.ToolChoiceRequired},
				ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Strict: true, Schema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)},
				Extra:          map[string]json.RawMessage{"output_config": json.RawMessage(`{"effort":"low"}`)},
			}
		}},
		{"tool choice named tool, none", func() sdk.MessageNewParams {
			return sdk.MessageNewParams{
				Model: "m", MaxTokens: 1,
				Messages:   []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("x"))},
				ToolChoice: sdk.ToolChoiceParamOfTool("lookup"),
			}
		}, nil, false, func() *llm.Request {
			return &llm.Request{Model: "m", MaxTokens: 1, IncludeUsage: true,
				Messages:   []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("x")}}},
				ToolChoice: &llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "lookup"}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, req *llm.Request) {
				if req.Stream {
					writeStream(w, []llm.StreamEvent{{Type: llm.EventStart, ID: "msg_1", Model: req.Model}, {Type: llm.EventFinish, FinishReason: llm.FinishStop}}, true)
					return
				}
				writeResponse(w, &llm.Response{ID: "msg_1", Model: req.Model, Content: "ok", FinishReason: llm.FinishStop})
			})
			c := f.client()
			ctx := context.Background()
			if tt.stream {
				s := c.Messages.NewStreaming(ctx, tt.params(), tt.opts...)
				for s.Next() {
				}
				if err := s.Err(); err != nil {
					t.Fatalf("stream: %v", err)
				}
			} else if _, err := c.Messages.New(ctx, tt.params(), tt.opts...); err != nil {
				body, _ := f.last()
				t.Fatalf("New: %v\nbody: %s", err, body)
			}
			body, got := f.last()
			if got == nil {
				t.Fatalf("decode of the SDK's request failed; body:\n%s", body)
			}
			if diff := cmp.Diff(tt.want(), got, jsonEqual); diff != "" {
				t.Errorf("decoded SDK request (-want +got):\n%s\nbody: %s", diff, body)
			}
			// Encoding what we decoded must decode the same.
			again, err := codec.EncodeRequest(got)
			if err != nil {
				t.Fatalf("EncodeRequest: %v", err)
			}
			got2, err := codec.DecodeRequest(again)
			if err != nil {
				t.Fatalf("DecodeRequest(EncodeRequest): %v\n%s", err, again)
			}
			if diff := cmp.Diff(got, got2, jsonEqual); diff != "" {
				t.Errorf("decode(encode(decoded)) differs (-first +second):\n%s", diff)
			}
		})
	}
}

// TestSDKReadsResponses has the SDK read non-streamed responses written by
// EncodeResponse.
func TestSDKReadsResponses(t *testing.T) {
	tests := []struct {
		name       string
		resp       llm.Response
		wantText   string
		wantTools  []sdk.ToolUseBlock
		wantStop   sdk.StopReason
		wantUsage  [4]int64 // input, output, cache read, cache creation
		wantBlocks int
	}{
		{
			name:       "text",
			resp:       llm.Response{ID: "msg_01", Model: "claude-sonnet-4-5", Content: "Bonjour <&> \u2028 \"quoted\"", FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 12, OutputTokens: 5}},
			wantText:   "Bonjour <&> \u2028 \"quoted\"",
			wantStop:   sdk.StopReasonEndTurn,
			wantUsage:  [4]int64{12, 5, 0, 0},
			wantBlocks: 1,
		},
		{
			name: "tool calls with cache usage",
			resp: llm.Response{ID: "msg_02", Model: "claude-sonnet-4-5", Content: "Checking.", FinishReason: llm.FinishToolCalls,
				ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "get_weather", Arguments: `{"city": "Paris"}`}, {ID: "toolu_2", Name: "noop", Arguments: ""}},
				Usage:     llm.Usage{InputTokens: 1000, OutputTokens: 40, CachedInputTokens: 800, CacheCreationTokens: 150}},
			wantText: "Checking.",
			wantTools: []sdk.ToolUseBlock{
				{ID: "toolu_1", Name: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "toolu_2", Name: "noop", Input: json.RawMessage(`{}`)},
			},
			wantStop:   sdk.StopReasonToolUse,
			wantUsage:  [4]int64{50, 40, 800, 150},
			wantBlocks: 3,
		},
		{
			name:       "length",
			resp:       llm.Response{ID: "msg_03", Model: "m", Content: "trunc", FinishReason: llm.FinishLength, Usage: llm.Usage{InputTokens: 3, OutputTokens: 16}},
			wantText:   "trunc",
			wantStop:   sdk.StopReasonMaxTokens,
			wantUsage:  [4]int64{3, 16, 0, 0},
			wantBlocks: 1,
		},
		{
			name:       "refusal",
			resp:       llm.Response{ID: "msg_04", Model: "m", FinishReason: llm.FinishContentFilter, Usage: llm.Usage{InputTokens: 3, OutputTokens: 0}},
			wantStop:   sdk.StopReasonRefusal,
			wantUsage:  [4]int64{3, 0, 0, 0},
			wantBlocks: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, req *llm.Request) { writeResponse(w, &tt.resp) })
			msg, err := f.client().Messages.New(context.Background(), sdk.MessageNewParams{
				Model: "claude-sonnet-4-5", MaxTokens: 100,
				Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi"))},
			})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			checkMessage(t, msg, tt.resp.ID, tt.resp.Model, tt.wantText, tt.wantTools, tt.wantStop, tt.wantUsage, tt.wantBlocks)
		})
	}
}

func checkMessage(t *testing.T, msg *sdk.Message, id, model, wantText string, wantTools []sdk.ToolUseBlock, wantStop sdk.StopReason, wantUsage [4]int64, wantBlocks int) {
	t.Helper()
	if msg.ID != id || string(msg.Model) != model {
		t.Errorf("id, model = %q, %q; want %q, %q", msg.ID, msg.Model, id, model)
	}
	if len(msg.Content) != wantBlocks {
		t.Errorf("got %d content blocks, want %d", len(msg.Content), wantBlocks)
	}
	var text string
	var tools []sdk.ToolUseBlock
	for _, b := range msg.Content {
		switch v := b.AsAny().(type) {
		case sdk.TextBlock:
			text += v.Text
		case sdk.ToolUseBlock:
			tools = append(tools, sdk.ToolUseBlock{ID: v.ID, Name: v.Name, Input: v.Input})
		default:
			t.Errorf("unexpected block %T", v)
		}
	}
	if text != wantText {
		t.Errorf("text = %q, want %q", text, wantText)
	}
	if diff := cmp.Diff(wantTools, tools, jsonEqual, cmpopts.IgnoreFields(sdk.ToolUseBlock{}, "JSON", "Caller")); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if msg.StopReason != wantStop {
		t.Errorf("stop reason = %q, want %q", msg.StopReason, wantStop)
	}
	got := [4]int64{msg.Usage.InputTokens, msg.Usage.OutputTokens, msg.Usage.CacheReadInputTokens, msg.Usage.CacheCreationInputTokens}
	if got != wantUsage {
		t.Errorf("usage (input, output, cache read, cache creation) = %v, want %v", got, wantUsage)
	}
}

// TestSDKReadsStreams has the SDK's NewStreaming read streams written by the
// stream encoder and accumulate them into a message.
func TestSDKReadsStreams(t *testing.T) {
	tool := func(i int, id, name, args string) llm.StreamEvent {
		return llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: i, ID: id, Name: name, Arguments: args}}
	}
	text := func(s string) llm.StreamEvent { return llm.StreamEvent{Type: llm.EventTextDelta, Text: s} }
	start := llm.StreamEvent{Type: llm.EventStart, ID: "msg_s1", Model: "claude-sonnet-4-5"}
	tests := []struct {
		name       string
		events     []llm.StreamEvent
		wantText   string
		wantTools  []sdk.ToolUseBlock
		wantStop   sdk.StopReason
		wantUsage  [4]int64
		wantBlocks int
	}{
		{
			name: "text, finish before usage",
			events: []llm.StreamEvent{start, text("Hel"), text("lo\n"), text("world ✓"),
				{Type: llm.EventFinish, FinishReason: llm.FinishStop},
				{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 20, OutputTokens: 3}}},
			wantText: "Hello\nworld ✓", wantStop: sdk.StopReasonEndTurn, wantUsage: [4]int64{20, 3, 0, 0}, wantBlocks: 1,
		},
		{
			name: "text then two tool calls, usage before finish, cache",
			events: []llm.StreamEvent{start, text("Checking."),
				tool(0, "toolu_1", "get_weather", ""), tool(0, "", "", `{"city":`), tool(0, "", "", ` "Paris"}`),
				tool(1, "toolu_2", "get_time", `{"tz":"CET"}`),
				{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 500, OutputTokens: 33, CachedInputTokens: 300, CacheCreationTokens: 100}},
				{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls}},
			wantText: "Checking.",
			wantTools: []sdk.ToolUseBlock{
				{ID: "toolu_1", Name: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "toolu_2", Name: "get_time", Input: json.RawMessage(`{"tz":"CET"}`)},
			},
			wantStop: sdk.StopReasonToolUse, wantUsage: [4]int64{100, 33, 300, 100}, wantBlocks: 3,
		},
		{
			name:     "max tokens, no usage event",
			events:   []llm.StreamEvent{start, text("cut"), {Type: llm.EventFinish, FinishReason: llm.FinishLength}},
			wantText: "cut", wantStop: sdk.StopReasonMaxTokens, wantUsage: [4]int64{0, 0, 0, 0}, wantBlocks: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, req *llm.Request) { writeStream(w, tt.events, true) })
			s := f.client().Messages.NewStreaming(context.Background(), sdk.MessageNewParams{
				Model: "claude-sonnet-4-5", MaxTokens: 100,
				Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi"))},
			})
			defer s.Close()
			var msg sdk.Message
			var types []string
			for s.Next() {
				ev := s.Current()
				types = append(types, ev.Type)
				if err := msg.Accumulate(ev); err != nil {
					t.Fatalf("Accumulate(%s): %v", ev.Type, err)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if types[0] != "message_start" || types[len(types)-1] != "message_stop" {
				t.Errorf("event types %v: want message_start first and message_stop last", types)
			}
			checkMessage(t, &msg, "msg_s1", "claude-sonnet-4-5", tt.wantText, tt.wantTools, tt.wantStop, tt.wantUsage, tt.wantBlocks)
		})
	}
}

// TestSDKSeesErrors checks that the SDK reads our error bodies with their
// status and type, both as HTTP errors and in-band in a stream.
func TestSDKSeesErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        llm.Error
		wantStatus int
		wantType   string
	}{
		{"overloaded", llm.Error{Type: llm.ErrOverloaded, Message: "Overloaded"}, 529, "overloaded_error"},
		{"rate limit", llm.Error{Type: llm.ErrRateLimit, Message: "slow down", RetryAfter: 3 * time.Second}, 429, "rate_limit_error"},
		{"context length", llm.Error{Type: llm.ErrContextLength, Message: "208310 tokens > 200000 maximum"}, 400, "invalid_request_error"},
		{"authentication", llm.Error{Type: llm.ErrAuthentication, Message: "invalid x-api-key"}, 401, "authentication_error"},
		{"server", llm.Error{Type: llm.ErrServer, Message: "Internal server error"}, 500, "api_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, req *llm.Request) { writeError(w, &tt.err) })
			_, err := f.client().Messages.New(context.Background(), sdk.MessageNewParams{
				Model: "m", MaxTokens: 10, Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi"))},
			})
			var apiErr *sdk.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v (%T) is not an *anthropic.Error", err, err)
			}
			if apiErr.StatusCode != tt.wantStatus || string(apiErr.Type()) != tt.wantType {
				t.Errorf("status, type = %d, %q; want %d, %q", apiErr.StatusCode, apiErr.Type(), tt.wantStatus, tt.wantType)
			}
			// And the codec reads the SDK-visible response back.
			back := codec.DecodeError(apiErr.StatusCode, apiErr.Response.Header, []byte(apiErr.RawJSON()))
			if back.Type != tt.err.Type || back.RetryAfter != tt.err.RetryAfter || back.ProviderType != tt.wantType {
				t.Errorf("DecodeError = %+v; want type %s, retry-after %v", back, tt.err.Type, tt.err.RetryAfter)
			}
		})
	}

	t.Run("bad request from the decoder", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, req *llm.Request) { t.Error("handler reached") })
		_, err := f.client().Messages.New(context.Background(), sdk.MessageNewParams{
			Model: "m", MaxTokens: 10,
			Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi")),
				sdk.NewAssistantMessage(sdk.NewThinkingBlock("sig", "hmm"))},
		})
		var apiErr *sdk.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Type() != "invalid_request_error" {
			t.Fatalf("got %v, want a 400 invalid_request_error", err)
		}
		if want := "messages.1.content.0.type: unsupported content block type \"thinking\""; apiErr.Message != want {
			t.Errorf("message = %q, want %q", apiErr.Message, want)
		}
	})

	t.Run("in-band stream error", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, req *llm.Request) {
			writeStream(w, []llm.StreamEvent{
				{Type: llm.EventStart, ID: "msg_e", Model: "m"},
				{Type: llm.EventTextDelta, Text: "partial"},
				{Type: llm.EventError, Err: &llm.Error{Type: llm.ErrOverloaded, Message: "Overloaded"}},
			}, false)
		})
		s := f.client().Messages.NewStreaming(context.Background(), sdk.MessageNewParams{
			Model: "m", MaxTokens: 10, Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi"))},
		})
		defer s.Close()
		var msg sdk.Message
		for s.Next() {
			if err := msg.Accumulate(s.Current()); err != nil {
				t.Fatal(err)
			}
		}
		var apiErr *sdk.Error
		if !errors.As(s.Err(), &apiErr) || apiErr.Type() != "overloaded_error" || apiErr.Message != "Overloaded" {
			t.Fatalf("stream error = %v, want an overloaded_error", s.Err())
		}
		if len(msg.Content) != 1 || msg.Content[0].Text != "partial" {
			t.Errorf("accumulated content %+v, want the partial text", msg.Content)
		}
	})
}
