package lifecycle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

func TestClassify(t *testing.T) {
	overloaded := &llm.Error{Status: 529, Type: llm.ErrOverloaded, Message: "overloaded", RetryAfter: 3 * time.Second}
	filter := &llm.Error{Status: 400, Type: llm.ErrContentFilter, Message: "no"}
	ctxLen := &llm.Error{Status: 400, Type: llm.ErrContextLength, Message: "too long"}
	usage := llm.Usage{InputTokens: 40, OutputTokens: 12}
	tests := []struct {
		name string
		obs  Observation
		want policy.Outcome
	}{
		{"whole answer with usage", Observation{Status: 200, TTFT: time.Second, Tokens: 10, Usage: usage, HaveUsage: true},
			policy.Outcome{Class: policy.OK, Status: 200, TTFT: time.Second, OutputTokens: 12, Usage: usage, BytesSent: true}},
		{"answer without usage is metered from the estimate", Observation{Status: 200, Tokens: 7, PromptTokens: 30},
			policy.Outcome{Class: policy.OK, Status: 200, OutputTokens: 7, Usage: llm.Usage{InputTokens: 30, OutputTokens: 7}, BytesSent: true}},
		{"connection refused: nothing reached the provider", Observation{End: Refused},
			policy.Outcome{Class: policy.ConnectError}},
		{"reset before any answer", Observation{End: Broken},
			policy.Outcome{Class: policy.Reset, BytesSent: true}},
		{"connection broken after tokens is a cut", Observation{End: Broken, Status: 200, Tokens: 3, PromptTokens: 5},
			policy.Outcome{Class: policy.CutMidStream, Status: 200, OutputTokens: 3, Usage: llm.Usage{InputTokens: 5, OutputTokens: 3}, BytesSent: true}},
		{"stream cut", Observation{End: Cut, Status: 200, Tokens: 4},
			policy.Outcome{Class: policy.CutMidStream, Status: 200, OutputTokens: 4, Usage: llm.Usage{OutputTokens: 4}, BytesSent: true}},
		{"malformed event", Observation{End: Malformed, Status: 200, Tokens: 2},
			policy.Outcome{Class: policy.MalformedStream, Status: 200, OutputTokens: 2, Usage: llm.Usage{OutputTokens: 2}, BytesSent: true}},
		{"first-token timeout before headers", Observation{End: TimedOut, Timeout: policy.TimeoutTTFT},
			policy.Outcome{Class: policy.TimeoutTTFT, BytesSent: true}},
		{"stall after tokens", Observation{End: TimedOut, Timeout: policy.Stall, Status: 200, Tokens: 4, TTFT: time.Second},
			policy.Outcome{Class: policy.Stall, Status: 200, TTFT: time.Second, OutputTokens: 4, Usage: llm.Usage{OutputTokens: 4}, BytesSent: true}},
		{"deadline with no class is the total", Observation{End: TimedOut},
			policy.Outcome{Class: policy.TimeoutTotal, BytesSent: true}},
		{"client gone mid-stream", Observation{End: ClientGone, Status: 200, Tokens: 1},
			policy.Outcome{Class: policy.ClientCanceled, Status: 200, OutputTokens: 1, Usage: llm.Usage{OutputTokens: 1}, BytesSent: true}},
		{"client gone before headers", Observation{End: ClientGone},
			policy.Outcome{Class: policy.ClientCanceled, BytesSent: true}},
		{"429 with Retry-After header", Observation{Status: 429, RetryAfter: 2 * time.Second, TTFT: 20 * time.Millisecond},
			policy.Outcome{Class: policy.RateLimited, Status: 429, RetryAfter: 2 * time.Second, TTFT: 20 * time.Millisecond, BytesSent: true}},
		{"the error's own Retry-After wins", Observation{Status: 529, Err: overloaded, RetryAfter: time.Second},
			policy.Outcome{Class: policy.Overloaded, Status: 529, Err: overloaded, RetryAfter: 3 * time.Second, BytesSent: true}},
		{"500", Observation{Status: 500}, policy.Outcome{Class: policy.ServerError, Status: 500, BytesSent: true}},
		{"401", Observation{Status: 401}, policy.Outcome{Class: policy.Auth, Status: 401, BytesSent: true}},
		{"400 content filter by type", Observation{Status: 400, Err: filter},
			policy.Outcome{Class: policy.ContentFilter, Status: 400, Err: filter, BytesSent: true}},
		{"400 context length by type", Observation{Status: 400, Err: ctxLen},
			policy.Outcome{Class: policy.ContextLength, Status: 400, Err: ctxLen, BytesSent: true}},
		{"error answer meters nothing", Observation{Status: 503, Tokens: 3, PromptTokens: 100},
			policy.Outcome{Class: policy.Overloaded, Status: 503, BytesSent: true}},
		{"in-band overloaded error mid-stream", Observation{End: ErrorEvent, Status: 200, Err: overloaded, Tokens: 5},
			policy.Outcome{Class: policy.Overloaded, Status: 529, Err: overloaded, RetryAfter: 3 * time.Second, OutputTokens: 5,
				Usage: llm.Usage{OutputTokens: 5}, BytesSent: true}},
		{"in-band event with no error", Observation{End: ErrorEvent, Status: 200},
			policy.Outcome{Class: policy.ServerError, Status: 500, Err: errInBand, BytesSent: true}},
		{"invalid structured answer", Observation{Status: 200, Invalid: true, Usage: usage, HaveUsage: true},
			policy.Outcome{Class: policy.InvalidOutput, Status: 200, Err: errInvalidOutput, OutputTokens: 12, Usage: usage, BytesSent: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(&tt.obs)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Fatalf("Classify (-want +got):\n%s", d)
			}
		})
	}
}

func TestCutError(t *testing.T) {
	own := &llm.Error{Status: 529, Type: llm.ErrOverloaded}
	tests := []struct {
		o      policy.Outcome
		status int
		typ    llm.ErrorType
	}{
		{policy.Outcome{Class: policy.Overloaded, Err: own}, 529, llm.ErrOverloaded},
		{policy.Outcome{Class: policy.Stall}, 504, llm.ErrTimeout},
		{policy.Outcome{Class: policy.TokenRateFloor}, 504, llm.ErrTimeout},
		{policy.Outcome{Class: policy.MalformedStream}, 502, llm.ErrServer},
		{policy.Outcome{Class: policy.CutMidStream}, 502, llm.ErrServer},
	}
	for _, tt := range tests {
		t.Run(string(tt.o.Class), func(t *testing.T) {
			e := CutError(&tt.o)
			if e.Status != tt.status || e.Type != tt.typ || e.Message == "" && tt.o.Err == nil {
				t.Fatalf("CutError = %+v", e)
			}
		})
	}
}
