package openai_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/llm"
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
			"rate limit with retry-after seconds", 429, http.Header{"Retry-After": {"20"}},
			`{"error":{"message":"Rate limit reached for gpt-4 in organization org-x on tokens per min (TPM): Limit 10000, Used 9348, Requested 5086.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`,
			&llm.Error{Status: 429, Type: llm.ErrRateLimit, Code: "rate_limit_exceeded", ProviderType: "tokens", RetryAfter: 20 * time.Second,
				Message: "Rate limit reached for gpt-4 in organization org-x on tokens per min (TPM): Limit 10000, Used 9348, Requested 5086."},
		},
		{
			"retry-after-ms wins", 429, http.Header{"Retry-After": {"20"}, "Retry-After-Ms": {"1500"}},
			`{"error":{"message":"slow","type":"requests","code":"rate_limit_exceeded"}}`,
			&llm.Error{Status: 429, Type: llm.ErrRateLimit, Code: "rate_limit_exceeded", ProviderType: "requests", Message: "slow", RetryAfter: 1500 * time.Millisecond},
		},
		{
			"retry-after HTTP date", 503, http.Header{"Retry-After": {fixedNow.Add(90 * time.Second).Format(http.TimeFormat)}},
			`{"error":{"message":"That model is currently overloaded with other requests.","type":"server_error","param":null,"code":null}}`,
			&llm.Error{Status: 503, Type: llm.ErrOverloaded, ProviderType: "server_error", Message: "That model is currently overloaded with other requests.", RetryAfter: 90 * time.Second},
		},
		{
			"retry-after date in the past", 429, http.Header{"Retry-After": {fixedNow.Add(-time.Minute).Format(http.TimeFormat)}},
			`{"error":{"message":"x","type":"requests"}}`,
			&llm.Error{Status: 429, Type: llm.ErrRateLimit, ProviderType: "requests", Message: "x"},
		},
		{
			"garbage retry-after", 429, http.Header{"Retry-After": {"soon"}},
			`{"error":{"message":"x","type":"requests"}}`,
			&llm.Error{Status: 429, Type: llm.ErrRateLimit, ProviderType: "requests", Message: "x"},
		},
		{
			"quota", 429, nil,
			`{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			&llm.Error{Status: 429, Type: llm.ErrRateLimit, Code: "insufficient_quota", ProviderType: "insufficient_quota", Message: "You exceeded your current quota"},
		},
		{
			"context length", 400, nil,
			`{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			&llm.Error{Status: 400, Type: llm.ErrContextLength, Code: "context_length_exceeded", Param: "messages", ProviderType: "invalid_request_error",
				Message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens."},
		},
		{
			"azure content filter", 400, nil,
			`{"error":{"message":"The response was filtered due to the prompt triggering content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}`,
			&llm.Error{Status: 400, Type: llm.ErrContentFilter, Code: "content_filter", Param: "prompt", Message: "The response was filtered due to the prompt triggering content management policy."},
		},
		{
			"bad key", 401, nil,
			`{"error":{"message":"Incorrect API key provided: sk-abc***xyz.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			&llm.Error{Status: 401, Type: llm.ErrAuthentication, Code: "invalid_api_key", ProviderType: "invalid_request_error", Message: "Incorrect API key provided: sk-abc***xyz."},
		},
		{
			"region", 403, nil,
			`{"error":{"code":"unsupported_country_region_territory","message":"Country, region, or territory not supported","param":null,"type":"request_forbidden"}}`,
			&llm.Error{Status: 403, Type: llm.ErrPermission, Code: "unsupported_country_region_territory", ProviderType: "request_forbidden", Message: "Country, region, or territory not supported"},
		},
		{
			"model not found", 404, nil,
			`{"error":{"message":"The model 'gpt-9' does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			&llm.Error{Status: 404, Type: llm.ErrNotFound, Code: "model_not_found", ProviderType: "invalid_request_error", Message: "The model 'gpt-9' does not exist"},
		},
		{
			"numeric code", 502, nil,
			`{"error":{"message":"Bad gateway","code":502}}`,
			&llm.Error{Status: 502, Type: llm.ErrServer, Code: "502", Message: "Bad gateway"},
		},
		{
			"error as a string", 500, nil,
			`{"error":"upstream failed"}`,
			&llm.Error{Status: 500, Type: llm.ErrServer, Message: "upstream failed"},
		},
		{
			"HTML from a proxy", 502, nil,
			"<html><body>502 Bad Gateway</body></html>\n",
			&llm.Error{Status: 502, Type: llm.ErrServer, Message: "<html><body>502 Bad Gateway</body></html>"},
		},
		{
			"empty body", 504, nil, "",
			&llm.Error{Status: 504, Type: llm.ErrTimeout, Message: "status 504"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h llm.Header
			if tt.header != nil {
				h = tt.header
			}
			got := codec().DecodeError(tt.status, h, []byte(tt.body))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrorRoundTrip: every normalized class survives encode then decode.
func TestErrorRoundTrip(t *testing.T) {
	for _, typ := range []llm.ErrorType{
		llm.ErrInvalidRequest, llm.ErrAuthentication, llm.ErrPermission, llm.ErrNotFound, llm.ErrRateLimit,
		llm.ErrOverloaded, llm.ErrServer, llm.ErrTimeout, llm.ErrContextLength, llm.ErrContentFilter,
	} {
		t.Run(string(typ), func(t *testing.T) {
			status, body := codec().EncodeError(&llm.Error{Type: typ, Message: "m"})
			got := codec().DecodeError(status, nil, body)
			if got.Type != typ || got.Message != "m" || got.Status != status {
				t.Errorf("encoded %d %s, decoded %+v", status, body, got)
			}
		})
	}
}
