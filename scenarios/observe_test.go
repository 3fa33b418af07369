package scenarios

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/yamlfile"
	"pgregory.net/rapid"
)

// TestQuietTokensMatchesLoop: observePlan's fast path gives the same end
// time and outcome as feeding the watchdog token by token.
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
		start := Epoch.Add(time.Hour)
		quietPath = false
		wantEnd, want := observePlan(p, d, start, true)
		quietPath = true
		gotEnd, got := observePlan(p, d, start, true)
		if !gotEnd.Equal(wantEnd) || got.Class != want.Class || got.TTFT != want.TTFT || got.OutputTokens != want.OutputTokens ||
			got.Partial != want.Partial || got.Usage != want.Usage {
			t.Fatalf("fast path %v %+v, loop %v %+v", gotEnd.Sub(start), got, wantEnd.Sub(start), want)
		}
	})
}
