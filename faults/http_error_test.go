package faults_test

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

func TestHTTPError(t *testing.T) {
	tests := []struct {
		name     string
		spec     faults.Spec
		format   llm.Format
		status   int
		typ      llm.ErrorType
		retry    string
		wantCode string
	}{
		{"429 openai", faults.Spec{Kind: faults.KindHTTPError, Status: 429, RetryAfter: yamlfile.Duration(1500 * time.Millisecond)}, llm.FormatOpenAI, 429, llm.ErrRateLimit, "2", "rate_limit_exceeded"},
		{"529 anthropic", faults.Spec{Kind: faults.KindHTTPError, Status: 529}, llm.FormatAnthropic, 529, llm.ErrOverloaded, "", ""},
		{"default 500", faults.Spec{Kind: faults.KindHTTPError}, llm.FormatGemini, 500, llm.ErrServer, "", ""},
		{"503 typed as rate limit", faults.Spec{Kind: faults.KindHTTPError, Status: 503, ErrorType: llm.ErrRateLimit}, llm.FormatOpenAI, 503, llm.ErrRateLimit, "", "rate_limit_exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plan(10)
			apply(t, tt.spec, p, env(tt.format))
			if !p.Terminal() || p.Status != tt.status || p.Err.Type != tt.typ || p.Err.Code != tt.wantCode || p.Err.Message == "" {
				t.Fatalf("plan %d %+v", p.Status, p.Err)
			}
			if got := p.Headers["retry-after"]; got != tt.retry {
				t.Fatalf("retry-after %q, want %q", got, tt.retry)
			}
		})
	}
}

func TestHTTPErrorValidate(t *testing.T) {
	err := faults.Spec{Kind: faults.KindHTTPError, Status: 200}.Validate()
	if fe, ok := err.(*faults.FieldError); !ok || fe.Field != "status" {
		t.Fatalf("got %v", err)
	}
}
