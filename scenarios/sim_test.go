package scenarios

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TestObservePlan: what the gateway observes of each kind of plan, and when.
func TestObservePlan(t *testing.T) {
	start := Epoch
	ms := time.Millisecond
	// 10 tokens, first at 300ms, then every 100ms.
	tokens := func(p *faults.Plan) *faults.Plan {
		for i := range 10 {
			p.TokenTimes = append(p.TokenTimes, 300*ms+time.Duration(i)*100*ms)
			p.Chunks = append(p.Chunks, "tok ")
		}
		p.TTFT = 300 * ms
		p.Response = llm.Response{Content: "tok tok", FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 50, OutputTokens: 10}}
		return p
	}
	plan := func(f func(p *faults.Plan)) *faults.Plan {
		p := tokens(faults.NewPlan())
		f(p)
		return p
	}
	to := policy.Timeouts{FirstToken: yamlfile.Duration(2 * time.Second), Idle: yamlfile.Duration(time.Second), Total: yamlfile.Duration(time.Minute)}
	d := &policy.Decision{Kind: policy.Send, Timeouts: to,
		Deadlines: policy.Deadlines{FirstToken: start.Add(2 * time.Second), Total: start.Add(time.Minute)}}
	tests := []struct {
		name    string
		plan    *faults.Plan
		stream  bool
		class   policy.Class
		at      time.Duration
		tokens  int
		partial bool
		retry   time.Duration
	}{
		{"stream ok", plan(func(*faults.Plan) {}), true, policy.OK, 1200 * ms, 10, false, 0},
		{"unary ok at the last token", plan(func(*faults.Plan) {}), false, policy.OK, 1200 * ms, 10, false, 0},
		{"429 with retry-after header", plan(func(p *faults.Plan) {
			p.SetError(&llm.Error{Status: 429, Type: llm.ErrRateLimit, Message: "slow down"})
			p.HeaderDelay = 20 * ms
			p.Headers = map[string]string{"retry-after": "2"}
		}), true, policy.RateLimited, 20 * ms, 0, false, 2 * time.Second},
		{"reset", plan(func(p *faults.Plan) { p.Reset = true; p.HeaderDelay = 5 * ms }), true, policy.Reset, 5 * ms, 0, false, 0},
		{"hold past the first-token deadline", plan(func(p *faults.Plan) { p.HoldFor = 30 * time.Second }), true, policy.TimeoutTTFT, 2 * time.Second, 0, false, 0},
		{"slow first token", plan(func(p *faults.Plan) { p.Shift(5 * time.Second) }), true, policy.TimeoutTTFT, 2 * time.Second, 0, false, 0},
		{"unary slower than the first-token deadline", plan(func(p *faults.Plan) { p.Shift(3 * time.Second) }), false, policy.TimeoutTTFT, 2 * time.Second, 0, false, 0},
		{"stall after 4 tokens, idle fires", plan(func(p *faults.Plan) {
			p.StallAfter, p.StallFor = 4, 10*time.Second
			for i := 4; i < 10; i++ {
				p.TokenTimes[i] += 10 * time.Second
			}
		}), true, policy.Stall, 1600 * ms, 4, true, 0},
		{"stall that closes, shorter than idle", plan(func(p *faults.Plan) {
			p.StallAfter, p.StallFor, p.StallClose = 4, 500*ms, true
		}), true, policy.CutMidStream, 1100 * ms, 4, true, 0},
		{"cut after 6 tokens", plan(func(p *faults.Plan) { p.CutAfter = 6 }), true, policy.CutMidStream, 800 * ms, 6, true, 0},
		{"malformed event 3", plan(func(p *faults.Plan) { p.MalformedAt = 3 }), true, policy.MalformedStream, 600 * ms, 3, true, 0},
		{"missing [DONE] is still an answer", plan(func(p *faults.Plan) { p.NoDone = true }), true, policy.OK, 1200 * ms, 10, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			end, o := observePlan(tt.plan, d, start, tt.stream)
			if o.Class != tt.class || end.Sub(start) != tt.at {
				t.Fatalf("class %s at %v, want %s at %v", o.Class, end.Sub(start), tt.class, tt.at)
			}
			if o.OutputTokens != tt.tokens || o.Partial != tt.partial || o.RetryAfter != tt.retry {
				t.Errorf("tokens=%d partial=%v retry_after=%v, want %d %v %v", o.OutputTokens, o.Partial, o.RetryAfter, tt.tokens, tt.partial, tt.retry)
			}
		})
	}
}
