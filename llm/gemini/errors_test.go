package gemini_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/gemini"
)

func TestDecodeError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   *llm.Error
	}{
		{
			name:   "quota with RetryInfo",
			status: 429,
			body: `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[` +
				`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests"}]},` +
				`{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},` +
				`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"38s"}]}}`,
			want: &llm.Error{Status: 429, Type: llm.ErrRateLimit, Message: "You exceeded your current quota.", RetryAfter: 38 * time.Second, ProviderType: "RESOURCE_EXHAUSTED"},
		},
		{
			name:   "Retry-After header wins",
			status: 429,
			header: http.Header{"Retry-After": {"7"}},
			body:   `{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}`,
			want:   &llm.Error{Status: 429, Type: llm.ErrRateLimit, Message: "slow down", RetryAfter: 7 * time.Second, ProviderType: "RESOURCE_EXHAUSTED"},
		},
		{
			name:   "fractional retryDelay",
			status: 503,
			body:   `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}`,
			want:   &llm.Error{Status: 503, Type: llm.ErrOverloaded, Message: "The model is overloaded. Please try again later.", RetryAfter: 1500 * time.Millisecond, ProviderType: "UNAVAILABLE"},
		},
		{
			name:   "bad API key is a 400 at Google",
			status: 400,
			body: `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[` +
				`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`,
			want: &llm.Error{Status: 400, Type: llm.ErrAuthentication, Code: "API_KEY_INVALID", Message: "API key not valid. Please pass a valid API key.", ProviderType: "INVALID_ARGUMENT"},
		},
		{
			name:   "context length",
			status: 400,
			body:   `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`,
			want:   &llm.Error{Status: 400, Type: llm.ErrContextLength, Message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", ProviderType: "INVALID_ARGUMENT"},
		},
		{
			name:   "field violation",
			status: 400,
			body: `{"error":{"code":400,"message":"Invalid value at 'generation_config.temperature'","status":"INVALID_ARGUMENT","details":[` +
				`{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"generation_config.temperature","description":"Invalid value"}]}]}}`,
			want: &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Param: "generation_config.temperature", Message: "Invalid value at 'generation_config.temperature'", ProviderType: "INVALID_ARGUMENT"},
		},
		{
			name: "each status", status: 403,
			body: `{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}`,
			want: &llm.Error{Status: 403, Type: llm.ErrPermission, Message: "denied", ProviderType: "PERMISSION_DENIED"},
		},
		{
			name: "not found", status: 404,
			body: `{"error":{"code":404,"message":"models/gemini-9 is not found","status":"NOT_FOUND"}}`,
			want: &llm.Error{Status: 404, Type: llm.ErrNotFound, Message: "models/gemini-9 is not found", ProviderType: "NOT_FOUND"},
		},
		{
			name: "deadline", status: 504,
			body: `{"error":{"code":504,"message":"Deadline expired","status":"DEADLINE_EXCEEDED"}}`,
			want: &llm.Error{Status: 504, Type: llm.ErrTimeout, Message: "Deadline expired", ProviderType: "DEADLINE_EXCEEDED"},
		},
		{
			name: "internal", status: 500,
			body: `{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}`,
			want: &llm.Error{Status: 500, Type: llm.ErrServer, Message: "An internal error has occurred.", ProviderType: "INTERNAL"},
		},
		{
			name: "unknown status string falls back to HTTP", status: 503,
			body: `{"error":{"code":503,"message":"x","status":"SOMETHING_NEW"}}`,
			want: &llm.Error{Status: 503, Type: llm.ErrOverloaded, Message: "x", ProviderType: "SOMETHING_NEW"},
		},
		{
			name: "HTML from a proxy", status: 502, header: http.Header{"Retry-After": {"3"}},
			body: "<html><body>502 Bad Gateway</body></html>\n",
			want: &llm.Error{Status: 502, Type: llm.ErrServer, Message: "<html><body>502 Bad Gateway</body></html>", RetryAfter: 3 * time.Second},
		},
		{
			name: "empty body", status: 429,
			want: &llm.Error{Status: 429, Type: llm.ErrRateLimit, Message: "http status 429"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h llm.Header
			if tt.header != nil {
				h = tt.header
			}
			got := gemini.Codec{}.DecodeError(tt.status, h, []byte(tt.body))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrorRoundTrip encodes each normalized error type and decodes it back.
func TestErrorRoundTrip(t *testing.T) {
	tests := []struct {
		in         *llm.Error
		wantStatus int
		wantBody   string
		want       *llm.Error // nil: same as in, with Status and ProviderType filled
	}{
		{in: &llm.Error{Type: llm.ErrInvalidRequest, Message: "bad", Param: "contents[1].parts[0]"}, wantStatus: 400,
			wantBody: `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"contents[1].parts[0]","description":"bad"}]}]}}`},
		{in: &llm.Error{Type: llm.ErrAuthentication, Message: "expired"}, wantStatus: 401},
		{in: &llm.Error{Type: llm.ErrPermission, Message: "no"}, wantStatus: 403},
		{in: &llm.Error{Type: llm.ErrNotFound, Message: "no model"}, wantStatus: 404},
		{in: &llm.Error{Type: llm.ErrRateLimit, Message: "quota", RetryAfter: 2 * time.Second, Code: "RATE_LIMIT_EXCEEDED"}, wantStatus: 429,
			wantBody: `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}}`},
		{in: &llm.Error{Type: llm.ErrOverloaded, Status: 529, Message: "busy"}, wantStatus: 503},
		{in: &llm.Error{Type: llm.ErrServer, Status: 500, Message: "oops"}, wantStatus: 500},
		{in: &llm.Error{Type: llm.ErrTimeout, Message: "slow"}, wantStatus: 504},
		{in: &llm.Error{Type: llm.ErrContextLength}, wantStatus: 400},
		{in: &llm.Error{Type: llm.ErrContentFilter, Message: "blocked"}, wantStatus: 400,
			want: &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Message: "blocked", ProviderType: "INVALID_ARGUMENT"}},
		{in: &llm.Error{Type: llm.ErrServer, Status: 499, Message: "cancelled"}, wantStatus: 499},
		{in: &llm.Error{Status: 503, Message: "typeless"}, wantStatus: 503,
			want: &llm.Error{Status: 503, Type: llm.ErrOverloaded, Message: "typeless", ProviderType: "UNAVAILABLE"}},
		{in: &llm.Error{Type: llm.ErrInvalidRequest, ProviderType: "FAILED_PRECONDITION", Message: "region"}, wantStatus: 400},
		// A Gemini error passed through keeps its own HTTP status.
		{in: &llm.Error{Type: llm.ErrServer, Status: 502, ProviderType: "INTERNAL", Message: "bad gateway"}, wantStatus: 502},
		// Another format's type string is not a Google status: the canonical code is used.
		{in: &llm.Error{Type: llm.ErrOverloaded, Status: 529, ProviderType: "overloaded_error", Message: "Overloaded"}, wantStatus: 503,
			want: &llm.Error{Status: 503, Type: llm.ErrOverloaded, Message: "Overloaded", ProviderType: "UNAVAILABLE"}},
	}
	c := gemini.Codec{}
	for _, tt := range tests {
		t.Run(string(tt.in.Type)+"/"+tt.in.Message, func(t *testing.T) {
			status, body := c.EncodeError(tt.in)
			if status != tt.wantStatus {
				t.Errorf("status = %d, want %d", status, tt.wantStatus)
			}
			if tt.wantBody != "" && string(body) != tt.wantBody {
				t.Errorf("body = %s\nwant %s", body, tt.wantBody)
			}
			got := c.DecodeError(status, nil, body)
			want := tt.want
			if want == nil {
				w := *tt.in
				w.Status = status
				_, st := googleStatusOf(t, body)
				w.ProviderType = st
				if w.Message == "" {
					w.Message = got.Message
				}
				want = &w
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func googleStatusOf(t *testing.T, body []byte) (int, string) {
	t.Helper()
	var b struct {
		Error struct {
			Code   int
			Status string
		}
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	return b.Error.Code, b.Error.Status
}

func TestPath(t *testing.T) {
	tests := []struct {
		path   string
		model  string
		stream bool
		ok     bool
	}{
		{"/v1beta/models/gemini-2.5-flash:generateContent", "gemini-2.5-flash", false, true},
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent", "gemini-2.5-flash", true, true},
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "gemini-2.5-flash", true, true},
		{"/v1/models/gemini-2.0-flash-001:generateContent", "gemini-2.0-flash-001", false, true},
		{"/v1beta/models/gemini-2.5-flash:countTokens", "", false, false},
		{"/v1beta/models/gemini-2.5-flash", "", false, false},
		{"/v1beta/models/:generateContent", "", false, false},
		{"/v1beta/tunedModels/x:generateContent", "", false, false},
		{"/v1beta/models/a/b:generateContent", "", false, false},
		{"/v1/chat/completions", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			model, stream, err := gemini.ParsePath(tt.path)
			if (err == nil) != tt.ok || model != tt.model || stream != tt.stream {
				t.Fatalf("ParsePath = %q, %v, %v; want %q, %v, ok=%v", model, stream, err, tt.model, tt.stream, tt.ok)
			}
			if err != nil {
				if e, isLLM := err.(*llm.Error); !isLLM || e.Status != 404 || e.Type != llm.ErrNotFound {
					t.Errorf("error = %#v, want a 404 *llm.Error", err)
				}
				return
			}
			m, s, err := gemini.ParsePath(gemini.Path(model, stream))
			if err != nil || m != model || s != stream {
				t.Errorf("ParsePath(Path(%q, %v)) = %q, %v, %v", model, stream, m, s, err)
			}
		})
	}
	if got := gemini.Path("models/gemini-2.5-pro", true); got != "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse" {
		t.Errorf("Path = %q", got)
	}
}
