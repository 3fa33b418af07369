package lifecycle

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestPlay: what the gateway observes of each kind of plan, and when.
func TestPlay(t *testing.T) {
	start := epoch
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
	overloaded := &llm.Error{Status: 529, Type: llm.ErrOverloaded, Message: "overloaded"}
	to := policy.Timeouts{FirstToken: yamlfile.Duration(2 * time.Second), Idle: yamlfile.Duration(time.Second), Total: yamlfile.Duration(time.Minute)}
	d := &policy.Decision{Kind: policy.Send, Timeouts: to,
		Deadlines: policy.Deadlines{FirstToken: start.Add(2 * time.Second), Total: start.Add(time.Minute)}}
	tests := []struct {
		name   string
		plan   *faults.Plan
		stream bool
		class  policy.Class
		at     time.Duration
		tokens int
		retry  time.Duration
	}{
		{"stream ok", plan(func(*faults.Plan) {}), true, policy.OK, 1200 * ms, 10, 0},
		{"unary ok at the last token", plan(func(*faults.Plan) {}), false, policy.OK, 1200 * ms, 10, 0},
		{"429 with retry-after header", plan(func(p *faults.Plan) {
			p.SetError(&llm.Error{Status: 429, Type: llm.ErrRateLimit, Message: "slow down"})
			p.HeaderDelay = 20 * ms
			p.Headers = map[string]string{"retry-after": "2"}
		}), true, policy.RateLimited, 20 * ms, 0, 2 * time.Second},
		{"reset", plan(func(p *faults.Plan) { p.Reset = true; p.HeaderDelay = 5 * ms }), true, policy.Reset, 5 * ms, 0, 0},
		{"hold past the first-token deadline", plan(func(p *faults.Plan) { p.HoldFor = 30 * time.Second }), true, policy.TimeoutTTFT, 2 * time.Second, 0, 0},
		{"slow first token", plan(func(p *faults.Plan) { p.Shift(5 * time.Second) }), true, policy.TimeoutTTFT, 2 * time.Second, 0, 0},
		{"unary slower than the first-token deadline", plan(func(p *faults.Plan) { p.Shift(3 * time.Second) }), false, policy.TimeoutTTFT, 2 * time.Second, 0, 0},
		{"stall after 4 tokens, idle fires", plan(func(p *faults.Plan) {
			p.StallAfter, p.StallFor = 4, 10*time.Second
			for i := 4; i < 10; i++ {
				p.TokenTimes[i] += 10 * time.Second
			}
		}), true, policy.Stall, 1600 * ms, 4, 0},
		{"stall that closes, shorter than idle", plan(func(p *faults.Plan) {
			p.StallAfter, p.StallFor, p.StallClose = 4, 500*ms, true
		}), true, policy.CutMidStream, 1100 * ms, 4, 0},
		{"cut after 6 tokens", plan(func(p *faults.Plan) { p.CutAfter = 6 }), true, policy.CutMidStream, 800 * ms, 6, 0},
		{"cut before the finish", plan(func(p *faults.Plan) { p.CutAfter = 10 }), true, policy.CutMidStream, 1200 * ms, 10, 0},
		{"unary cut", plan(func(p *faults.Plan) { p.CutAfter = 6 }), false, policy.CutMidStream, 1200 * ms, 0, 0},
		{"malformed event 3", plan(func(p *faults.Plan) { p.MalformedAt = 3 }), true, policy.MalformedStream, 600 * ms, 3, 0},
		{"malformed event before the finish", plan(func(p *faults.Plan) { p.MalformedAt = 10 }), true, policy.MalformedStream, 1200 * ms, 10, 0},
		{"in-band error after 5 tokens", plan(func(p *faults.Plan) { p.InBandErr, p.InBandAfter = overloaded, 5 }), true, policy.Overloaded, 700 * ms, 5, 0},
		{"in-band error before any token", plan(func(p *faults.Plan) { p.InBandErr, p.InBandAfter = overloaded, 0 }), true, policy.Overloaded, 0, 0, 0},
		{"missing [DONE] is still an answer", plan(func(p *faults.Plan) { p.NoDone = true }), true, policy.OK, 1200 * ms, 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			end, obs := Play(tt.plan, d, start, tt.stream)
			o := Classify(&obs)
			if o.Class != tt.class || end.Sub(start) != tt.at {
				t.Fatalf("class %s at %v, want %s at %v", o.Class, end.Sub(start), tt.class, tt.at)
			}
			if o.OutputTokens != tt.tokens || o.RetryAfter != tt.retry {
				t.Errorf("tokens=%d retry_after=%v, want %d %v", o.OutputTokens, o.RetryAfter, tt.tokens, tt.retry)
			}
		})
	}
}

// TestQuietTokensMatchesLoop: Play's fast path gives the same end time and
// observation as feeding the watchdog token by token.
func TestQuietTokensMatchesLoop(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ms := func(label string, hi int) time.Duration {
			return time.Duration(rapid.IntRange(0, hi).Draw(t, label)) * time.Millisecond
		}
		n := rapid.IntRange(0, 40).Draw(t, "tokens")
		p := faults.NewPlan()
		p.HeaderDelay = ms("header", 50)
		at := ms("ttft", 400)
		p.TTFT = at
		for range n {
			p.TokenTimes = append(p.TokenTimes, at)
			p.Chunks = append(p.Chunks, "abcd")
			at += ms("gap", 300)
		}
		p.Response.Usage.OutputTokens = n
		p.CutAfter = rapid.IntRange(-1, n+1).Draw(t, "cut")
		p.MalformedAt = rapid.IntRange(-1, n+1).Draw(t, "malformed")
		if rapid.Bool().Draw(t, "stall") {
			p.StallAfter = rapid.IntRange(0, n).Draw(t, "stallAfter")
			p.StallFor = ms("stallFor", 2000)
			p.StallClose = true
		}
		d := &policy.Decision{Timeouts: policy.Timeouts{
			FirstToken: yamlfile.Duration(ms("firstToken", 500)),
			Idle:       yamlfile.Duration(ms("idle", 400)),
			Total:      yamlfile.Duration(ms("total", 12000)),
		}}
		start := epoch.Add(time.Hour)
		wantEnd, want := play(p, d, start, true, false)
		gotEnd, got := play(p, d, start, true, true)
		if !gotEnd.Equal(wantEnd) || got != want {
			t.Fatalf("fast path %v %+v, loop %v %+v", gotEnd.Sub(start), got, wantEnd.Sub(start), want)
		}
	})
}
