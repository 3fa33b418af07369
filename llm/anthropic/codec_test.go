package anthropic_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/anthropic"
	"github.com/brownout-dev/brownout/llm/sse"
)

const user = `{"role":"user","content":"hi"}`

func TestDecodeRequestErrors(t *testing.T) {
	msgs := func(m ...string) string { return `"messages":[` + strings.Join(m, ",") + `]` }
	req := func(fields ...string) string {
		return `{"model":"m","max_tokens":10,` + strings.Join(fields, ",") + `}`
	}
	tests := []struct {
		name, body, param, msg string
	}{
		{"not JSON", `{"model":`, "", "invalid JSON"},
		{"not an object", `[1]`, "", "expected an object"},
		{"missing max_tokens", `{"model":"m",` + msgs(user) + `}`, "max_tokens", "field required"},
		{"null max_tokens", `{"model":"m","max_tokens":null,` + msgs(user) + `}`, "max_tokens", "field required"},
		{"fractional max_tokens", `{"model":"m","max_tokens":1.5,` + msgs(user) + `}`, "max_tokens", "expected an integer"},
		{"zero max_tokens", `{"model":"m","max_tokens":0,` + msgs(user) + `}`, "max_tokens", "at least 1"},
		{"missing model", `{"max_tokens":10,` + msgs(user) + `}`, "model", "field required"},
		{"model not a string", `{"model":5,"max_tokens":10,` + msgs(user) + `}`, "model", "expected a string"},
		{"missing messages", req(`"stream":true`), "messages", "field required"},
		{"empty messages", req(msgs()), "messages", "at least one"},
		{"bad role", req(msgs(`{"role":"system","content":"x"}`)), "messages.0.role", `got "system"`},
		{"missing content", req(msgs(user, `{"role":"assistant"}`)), "messages.1.content", "field required"},
		{"content a number", req(msgs(`{"role":"user","content":3}`)), "messages.0.content", "expected a string or an array"},
		{"block without type", req(msgs(user, `{"role":"assistant","content":[{"text":"x"}]}`)), "messages.1.content.0.type", "field required"},
		{"unknown block type", req(msgs(user, `{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"thinking","thinking":"x"}]}`)), "messages.1.content.1.type", `unsupported content block type "thinking"`},
		{"text without text", req(msgs(`{"role":"user","content":[{"type":"text"}]}`)), "messages.0.content.0.text", "field required"},
		{"text not a string", req(msgs(`{"role":"user","content":[{"type":"text","text":1}]}`)), "messages.0.content.0.text", "expected a string"},
		{"tool_use in user turn", req(msgs(`{"role":"user","content":[{"type":"tool_use","id":"a","name":"b","input":{}}]}`)), "messages.0.content.0.type", "not allowed in a user message"},
		{"tool_result in assistant turn", req(msgs(user, `{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"a"}]}`)), "messages.1.content.0.type", "not allowed in a assistant message"},
		{"tool_use input not an object", req(msgs(user, `{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"b","input":"x"}]}`)), "messages.1.content.0.input", "JSON object"},
		{"tool_use without id", req(msgs(user, `{"role":"assistant","content":[{"type":"tool_use","name":"b","input":{}}]}`)), "messages.1.content.0.id", "field required"},
		{"tool_result without id", req(msgs(`{"role":"user","content":[{"type":"tool_result","content":"x"}]}`)), "messages.0.content.0.tool_use_id", "field required"},
		{"tool_result bad inner block", req(msgs(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"document"}]}]}`)), "messages.0.content.0.content.0.type", `"document"`},
		{"image bad base64", req(msgs(`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"%%%"}}]}`)), "messages.0.content.0.source.data", "invalid base64"},
		{"image bad media type", req(msgs(`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"AA=="}}]}`)), "messages.0.content.0.source.media_type", "image/bmp"},
		{"image file source", req(msgs(`{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}`)), "messages.0.content.0.source.type", `"file"`},
		{"image without source", req(msgs(`{"role":"user","content":[{"type":"image"}]}`)), "messages.0.content.0.source", "field required"},
		{"system block not text", req(`"system":[{"type":"image"}]`, msgs(user)), "system.0.type", "must be of type text"},
		{"system a number", req(`"system":1`, msgs(user)), "system", "expected a string"},
		{"tool without schema", req(msgs(user), `"tools":[{"name":"a"}]`), "tools.0.input_schema", "field required"},
		{"tool without name", req(msgs(user), `"tools":[{"input_schema":{}}]`), "tools.0.name", "field required"},
		{"server tool", req(msgs(user), `"tools":[{"type":"web_search_20250305","name":"web_search"}]`), "tools.0.type", "web_search_20250305"},
		{"tool_choice bad type", req(msgs(user), `"tool_choice":{"type":"required"}`), "tool_choice.type", `"required"`},
		{"tool_choice tool without name", req(msgs(user), `"tool_choice":{"type":"tool"}`), "tool_choice.name", "field required"},
		{"metadata unknown key", req(msgs(user), `"metadata":{"session":"x"}`), "metadata.session", "not permitted"},
		{"temperature a string", req(msgs(user), `"temperature":"hot"`), "temperature", "expected a number"},
		{"stop_sequences not strings", req(msgs(user), `"stop_sequences":[1]`), "stop_sequences", "expected a string"},
		{"output format not schema", req(msgs(user), `"output_config":{"format":{"type":"json_object"}}`), "output_config.format.type", "json_schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := codec.DecodeRequest([]byte(tt.body))
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want *llm.Error", err, err)
			}
			if e.Status != 400 || e.Type != llm.ErrInvalidRequest {
				t.Errorf("status, type = %d, %s; want 400 invalid_request", e.Status, e.Type)
			}
			if e.Param != tt.param {
				t.Errorf("param = %q, want %q (message %q)", e.Param, tt.param, e.Message)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message = %q, want it to contain %q", e.Message, tt.msg)
			}
			// The 400 body names the field the way the API does.
			status, body := codec.EncodeError(e)
			if status != 400 || (tt.param != "" && !strings.Contains(string(body), `"message":"`+tt.param+`: `)) {
				t.Errorf("EncodeError = %d %s", status, body)
			}
		})
	}
}

func TestEncodeRequestUnsupported(t *testing.T) {
	u := llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}
	seed := int64(7)
	tests := []struct {
		name    string
		req     llm.Request
		feature string
	}{
		{"system in the middle", llm.Request{Messages: []llm.Message{u, {Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("x")}}}}, "messages.1.role"},
		{"seed", llm.Request{Messages: []llm.Message{u}, Seed: &seed}, "seed"},
		{"json_object", llm.Request{Messages: []llm.Message{u}, ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONObject}}, "response_format.json_object"},
		{"metadata", llm.Request{Messages: []llm.Message{u}, Metadata: map[string]string{"k": "v"}}, "metadata"},
		{"participant name", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Name: "bob", Content: []llm.Part{llm.TextPart("x")}}}}, "messages.0.name"},
		{"image in assistant turn", llm.Request{Messages: []llm.Message{u, {Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartImage, URL: "https://x"}}}}}, "messages.1.content.0"},
		{"image data without media type", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, Data: []byte{1}}}}}}, "messages.0.content.0"},
		{"arguments not JSON", llm.Request{Messages: []llm.Message{u, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "f", Arguments: `{"x":`}}}}}, "messages.1.tool_calls.0.arguments"},
		{"tool result without call id", llm.Request{Messages: []llm.Message{u, {Role: llm.RoleTool, Content: []llm.Part{llm.TextPart("x")}}}}, "messages.1.tool_call_id"},
		{"tool calls on a user turn", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, ToolCalls: []llm.ToolCall{{ID: "a"}}}}}, "messages.0.tool_calls"},
		{"extra collides", llm.Request{Messages: []llm.Message{u}, Extra: map[string]json.RawMessage{"model": json.RawMessage(`"x"`)}}, "extra.model"},
		{"extra output_config format collides", llm.Request{Messages: []llm.Message{u},
			ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Schema: json.RawMessage(`{}`)},
			Extra:          map[string]json.RawMessage{"output_config": json.RawMessage(`{"format":{}}`)}}, "extra.output_config.format"},
	}
	temp := 0.5
	tests = append(tests, struct {
		name    string
		req     llm.Request
		feature string
	}{"temperature under 2026-10-21", llm.Request{Messages: []llm.Message{u}, Temperature: &temp}, "temperature"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := codec
			if strings.HasSuffix(tt.name, "2026-10-21") {
				c.Version = anthropic.Version20261021
				if _, err := codec.EncodeRequest(&tt.req); err != nil {
					t.Errorf("under 2023-06-01: %v", err)
				}
			}
			_, err := c.EncodeRequest(&tt.req)
			var ue *llm.UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want *llm.UnsupportedError", err)
			}
			if ue.Format != llm.FormatAnthropic || ue.Feature != tt.feature {
				t.Errorf("format, feature = %s, %q; want anthropic, %q", ue.Format, ue.Feature, tt.feature)
			}
		})
	}
}

func TestEncodeRequestChoices(t *testing.T) {
	u := llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"default max_tokens, single system string", llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("be nice")}}, u}},
			`{"model":"m","max_tokens":4096,"system":"be nice","messages":[{"role":"user","content":"hi"}]}`},
		{"tool results merge with the user turn after them", llm.Request{Model: "m", MaxTokens: 5, Messages: []llm.Message{
			u,
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "a"}, {ID: "t2", Name: "b", Arguments: `{"k": [1, 2]}`}}},
			{Role: llm.RoleTool, ToolCallID: "t1", Name: "a"},
			{Role: llm.RoleTool, ToolCallID: "t2", Name: "b", Content: []llm.Part{llm.TextPart("r")}},
			u,
		}},
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"a","input":{}},{"type":"tool_use","id":"t2","name":"b","input":{"k":[1,2]}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"},{"type":"tool_result","tool_use_id":"t2","content":"r"},{"type":"text","text":"hi"}]}]}`},
		{"data URI image, tool choice required, none drops parallel", llm.Request{Model: "m", MaxTokens: 1,
			Messages:   []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, URL: "data:image/png;base64,AAAA"}}}},
			Tools:      []llm.Tool{{Name: "f"}},
			ToolChoice: &llm.ToolChoice{Mode: llm.ToolChoiceRequired, DisableParallel: true}},
			`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}],"tools":[{"name":"f","input_schema":{"type":"object","properties":{}}}],"tool_choice":{"type":"any","disable_parallel_tool_use":true}}`},
		{"tool choice none", llm.Request{Model: "m", MaxTokens: 1, Messages: []llm.Message{u}, ToolChoice: &llm.ToolChoice{Mode: llm.ToolChoiceNone, DisableParallel: true}},
			`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"none"}}`},
		{"user and json schema", llm.Request{Model: "m", MaxTokens: 1, Messages: []llm.Message{u}, User: "u1", Stream: true, IncludeUsage: true,
			ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "x", Schema: json.RawMessage(`{"type": "object"}`)}},
			`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}],"stream":true,"metadata":{"user_id":"u1"},"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec.EncodeRequest(&tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestUsageConversion(t *testing.T) {
	// Anthropic's input_tokens leaves out cache reads and writes; llm.Usage
	// counts them in. Both directions, through a response.
	body := `{"id":"m","type":"message","role":"assistant","model":"x","content":[],"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":7}}`
	resp, err := codec.DecodeResponse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{InputTokens: 3210, OutputTokens: 7, CachedInputTokens: 3000, CacheCreationTokens: 200}
	if resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	out, err := codec.EncodeResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":7}`) {
		t.Errorf("encoded usage wrong: %s", out)
	}
}

func TestFinishReasons(t *testing.T) {
	for _, tt := range []struct {
		stop string
		want llm.FinishReason
		back string
	}{
		{"end_turn", llm.FinishStop, "end_turn"},
		{"stop_sequence", llm.FinishStop, "end_turn"},
		{"pause_turn", llm.FinishStop, "end_turn"},
		{"max_tokens", llm.FinishLength, "max_tokens"},
		{"model_context_window_exceeded", llm.FinishLength, "max_tokens"},
		{"tool_use", llm.FinishToolCalls, "tool_use"},
		{"refusal", llm.FinishContentFilter, "refusal"},
		{"bogus", "", ""},
	} {
		t.Run(tt.stop, func(t *testing.T) {
			got := anthropic.FinishReason(tt.stop)
			if got != tt.want || anthropic.StopReason(got) != tt.back {
				t.Errorf("FinishReason(%q) = %q, back %q; want %q, %q", tt.stop, got, anthropic.StopReason(got), tt.want, tt.back)
			}
		})
	}
	if _, err := codec.EncodeResponse(&llm.Response{FinishReason: llm.FinishError}); err == nil {
		t.Error("EncodeResponse with FinishError: want an UnsupportedError")
	}
}

func TestDecodeResponseErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"not JSON", `{`, "decode response"},
		{"wrong type", `{"type":"completion"}`, `type is "completion"`},
		{"unknown block", `{"type":"message","content":[{"type":"server_tool_use"}]}`, "content.0.type"},
		{"unknown stop reason", `{"type":"message","content":[],"stop_reason":"nope"}`, "stop_reason"},
		{"tool_use without id", `{"type":"message","content":[{"type":"tool_use","name":"x","input":{}}]}`, "content.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := codec.DecodeResponse([]byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	t.Run("error body", func(t *testing.T) {
		_, err := codec.DecodeResponse([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
		var e *llm.Error
		if !errors.As(err, &e) || e.Type != llm.ErrOverloaded || e.Status != 529 {
			t.Errorf("err = %#v, want an overloaded 529 *llm.Error", err)
		}
	})
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        llm.Error
		wantStatus int
		wantBody   string
	}{
		{"invalid request", llm.Error{Type: llm.ErrInvalidRequest, Message: "bad"}, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`},
		{"context length", llm.Error{Type: llm.ErrContextLength, Message: "208310 tokens > 200000 maximum"}, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`},
		{"context length already worded", llm.Error{Type: llm.ErrContextLength, Message: "prompt is too long: 1 tokens > 0 maximum"}, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 1 tokens > 0 maximum"}}`},
		{"authentication", llm.Error{Type: llm.ErrAuthentication, Message: "invalid x-api-key"}, 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`},
		{"permission", llm.Error{Type: llm.ErrPermission, Message: "no"}, 403, `{"type":"error","error":{"type":"permission_error","message":"no"}}`},
		{"not found", llm.Error{Type: llm.ErrNotFound, Message: "model: x"}, 404, `{"type":"error","error":{"type":"not_found_error","message":"model: x"}}`},
		{"request too large", llm.Error{Type: llm.ErrInvalidRequest, ProviderType: "request_too_large", Message: "Request exceeds the maximum allowed number of bytes."}, 413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`},
		{"rate limit", llm.Error{Type: llm.ErrRateLimit, Message: "slow"}, 429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`},
		{"server", llm.Error{Type: llm.ErrServer, Message: "oops"}, 500, `{"type":"error","error":{"type":"api_error","message":"oops"}}`},
		{"timeout", llm.Error{Type: llm.ErrTimeout, Message: "slow"}, 504, `{"type":"error","error":{"type":"timeout_error","message":"slow"}}`},
		{"overloaded", llm.Error{Type: llm.ErrOverloaded, Message: "Overloaded"}, 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{"overloaded sent as 503", llm.Error{Status: 503, Type: llm.ErrOverloaded, Message: "Overloaded"}, 503, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{"foreign provider type", llm.Error{Type: llm.ErrRateLimit, ProviderType: "insufficient_quota", Message: "q"}, 429, `{"type":"error","error":{"type":"rate_limit_error","message":"q"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := codec.EncodeError(&tt.err)
			if status != tt.wantStatus || string(body) != tt.wantBody {
				t.Errorf("EncodeError = %d %s\nwant        %d %s", status, body, tt.wantStatus, tt.wantBody)
			}
			back := codec.DecodeError(status, nil, body)
			if back.Type != tt.err.Type || back.Status != status {
				t.Errorf("DecodeError: type %s status %d, want %s %d", back.Type, back.Status, tt.err.Type, status)
			}
		})
	}
}

func TestDecodeErrorHeaders(t *testing.T) {
	body := []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit","details":{"error_code":"ramp_limit_exceeded"}},"request_id":"req_1"}`)
	date := "Sun, 29 Nov 2026 15:00:00 GMT"
	tests := []struct {
		name   string
		status int
		h      http.Header
		body   []byte
		want   llm.Error
	}{
		{"retry-after seconds", 429, http.Header{"Retry-After": {"7"}}, body,
			llm.Error{Status: 429, Type: llm.ErrRateLimit, Code: "ramp_limit_exceeded", ProviderType: "rate_limit_error", RetryAfter: 7 * time.Second, Message: "Number of request tokens has exceeded your per-minute rate limit"}},
		{"retry-after-ms wins", 429, http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"1500"}}, body,
			llm.Error{Status: 429, Type: llm.ErrRateLimit, Code: "ramp_limit_exceeded", ProviderType: "rate_limit_error", RetryAfter: 1500 * time.Millisecond, Message: "Number of request tokens has exceeded your per-minute rate limit"}},
		{"retry-after date", 529, http.Header{"Retry-After": {"Sun, 29 Nov 2026 15:00:30 GMT"}, "Date": {date}}, []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			llm.Error{Status: 529, Type: llm.ErrOverloaded, ProviderType: "overloaded_error", RetryAfter: 30 * time.Second, Message: "Overloaded"}},
		{"ratelimit reset headers", 429, http.Header{"Date": {date},
			"Anthropic-Ratelimit-Requests-Limit": {"50"}, "Anthropic-Ratelimit-Requests-Remaining": {"12"}, "Anthropic-Ratelimit-Requests-Reset": {"2026-11-29T15:00:05Z"},
			"Anthropic-Ratelimit-Input-Tokens-Limit": {"40000"}, "Anthropic-Ratelimit-Input-Tokens-Remaining": {"0"}, "Anthropic-Ratelimit-Input-Tokens-Reset": {"2026-11-29T15:00:12Z"}}, body,
			llm.Error{Status: 429, Type: llm.ErrRateLimit, Code: "ramp_limit_exceeded", ProviderType: "rate_limit_error", RetryAfter: 12 * time.Second, Message: "Number of request tokens has exceeded your per-minute rate limit"}},
		{"negative retry-after ignored", 429, http.Header{"Retry-After": {"-3"}}, []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"x"}}`),
			llm.Error{Status: 429, Type: llm.ErrRateLimit, ProviderType: "rate_limit_error", Message: "x"}},
		{"context length", 400, nil, []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"},"request_id":"req_011CVQe1dLrGNMJyE1ghG1av"}`),
			llm.Error{Status: 400, Type: llm.ErrContextLength, ProviderType: "invalid_request_error", Message: "prompt is too long: 208310 tokens > 200000 maximum"}},
		{"billing", 402, nil, []byte(`{"type":"error","error":{"type":"billing_error","message":"credit balance too low"}}`),
			llm.Error{Status: 402, Type: llm.ErrPermission, ProviderType: "billing_error", Message: "credit balance too low"}},
		{"HTML from a proxy", 502, nil, []byte("<html>Bad Gateway</html>\n"),
			llm.Error{Status: 502, Type: llm.ErrServer, Message: "<html>Bad Gateway</html>"}},
		{"empty body", 503, nil, nil,
			llm.Error{Status: 503, Type: llm.ErrOverloaded, Message: "http status 503"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h llm.Header
			if tt.h != nil {
				h = tt.h
			}
			got := codec.DecodeError(tt.status, h, tt.body)
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("DecodeError (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRateLimitHeaders(t *testing.T) {
	reset := time.Date(2026, 11, 29, 15, 0, 5, 0, time.UTC)
	rl := anthropic.RateLimits{Requests: anthropic.RateLimit{Limit: 50, Remaining: 0, Reset: reset}, OutputTokens: anthropic.RateLimit{Limit: 8000, Remaining: 10}}
	h := http.Header{}
	for k, v := range rl.Headers() {
		h.Set(k, v)
	}
	if got := anthropic.ParseRateLimits(h); got != rl {
		t.Errorf("ParseRateLimits(Headers()) = %+v, want %+v", got, rl)
	}
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{{0, ""}, {-time.Second, ""}, {time.Millisecond, "1"}, {2 * time.Second, "2"}, {2500 * time.Millisecond, "3"}} {
		if got := anthropic.RetryAfterHeader(tt.d); got != tt.want {
			t.Errorf("RetryAfterHeader(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestStreamEncoderMisuse(t *testing.T) {
	start := llm.StreamEvent{Type: llm.EventStart, ID: "m", Model: "x"}
	tests := []struct {
		name   string
		events []llm.StreamEvent
		want   error
	}{
		{"delta before start", []llm.StreamEvent{{Type: llm.EventTextDelta, Text: "x"}}, anthropic.ErrNotStarted},
		{"two starts", []llm.StreamEvent{start, start}, anthropic.ErrAlreadyStarted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := codec.NewStreamEncoder(io.Discard)
			var err error
			for _, ev := range tt.events {
				if err = enc.Encode(ev); err != nil {
					break
				}
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("tool call resumed after another block", func(t *testing.T) {
		enc := codec.NewStreamEncoder(io.Discard)
		for _, ev := range []llm.StreamEvent{start,
			{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "a", Name: "f"}},
			{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 1, ID: "b", Name: "g"}},
		} {
			if err := enc.Encode(ev); err != nil {
				t.Fatal(err)
			}
		}
		err := enc.Encode(llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, Arguments: "{}"}})
		var ue *llm.UnsupportedError
		if !errors.As(err, &ue) {
			t.Errorf("err = %v, want *llm.UnsupportedError", err)
		}
	})
	t.Run("finish error", func(t *testing.T) {
		enc := codec.NewStreamEncoder(io.Discard)
		_ = enc.Encode(start)
		var ue *llm.UnsupportedError
		if err := enc.Encode(llm.StreamEvent{Type: llm.EventFinish, FinishReason: llm.FinishError}); !errors.As(err, &ue) {
			t.Errorf("err = %v, want *llm.UnsupportedError", err)
		}
	})
}

func TestStreamDecoderEdges(t *testing.T) {
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"x\",\"usage\":{\"input_tokens\":1}}}\n\n"
	tests := []struct {
		name  string
		input string
		want  []string // event types, or "malformed N", then the end
	}{
		{"empty input is cut", "", []string{"unexpected EOF"}},
		{"only a ping is cut", "event: ping\ndata: {\"type\":\"ping\"}\n\n", []string{"unexpected EOF"}},
		{"start only is cut", start, []string{"start", "unexpected EOF"}},
		{"error before start", "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"boom\"}}\n\n", []string{"error", "EOF"}},
		{"content without message_start gets a start", "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"a\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", []string{"start", "text_delta", "EOF"}},
		{"nothing read after message_stop", start + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\nevent: content_block_delta\ndata: {garbage\n\n", []string{"start", "EOF"}},
		{"data not an object", start + "data: [1,2]\n\n", []string{"start", "malformed 1", "unexpected EOF"}},
		{"unknown event skipped", start + "event: future_thing\ndata: {\"type\":\"future_thing\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", []string{"start", "EOF"}},
		{"second message_start", start + start, []string{"start", "malformed 1", "unexpected EOF"}},
		{"text delta to a tool block", start + "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", []string{"start", "tool_call_delta", "malformed 2", "unexpected EOF"}},
		{"unknown stop reason", start + "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"weird\"}}\n\n", []string{"start", "malformed 1", "unexpected EOF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec := codec.NewStreamDecoder(strings.NewReader(tt.input))
			var got []string
			for range 50 {
				ev, err := dec.Next()
				var ee *sse.EventError
				if errors.As(err, &ee) {
					got = append(got, "malformed "+itoa(ee.Index))
					continue
				}
				if err != nil {
					got = append(got, strings.TrimPrefix(err.Error(), ""))
					break
				}
				got = append(got, string(ev.Type))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestStreamDecoderEventTooLarge(t *testing.T) {
	big := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"" + strings.Repeat("x", 1<<21) + "\"}}\n\n"
	dec := codec.NewStreamDecoder(strings.NewReader(big))
	_, err := dec.Next()
	if !errors.Is(err, sse.ErrEventTooLarge) {
		t.Errorf("err = %v, want sse.ErrEventTooLarge", err)
	}
}
