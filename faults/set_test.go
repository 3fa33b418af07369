package faults_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// hits sends n requests, one per second from t0+offset, and returns which
// were selected.
func hits(set *faults.Set, n int, offset time.Duration, e *faults.Env) []bool {
	out := make([]bool, n)
	for i := range n {
		out[i] = len(set.Select(t0.Add(offset+time.Duration(i)*time.Second), e)) > 0
	}
	return out
}

func count(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

func pct(v float64) *yamlfile.Percent { p := yamlfile.Percent(v); return &p }

func TestSelector(t *testing.T) {
	tests := []struct {
		name string
		sel  faults.Selector
		env  func(*faults.Env)
		want []bool
	}{
		{"all", faults.Selector{}, nil, []bool{true, true, true, true}},
		{"first 2", faults.Selector{First: 2}, nil, []bool{true, true, false, false}},
		{"every 2nd", faults.Selector{Every: 2}, nil, []bool{false, true, false, true}},
		{"window 1s..3s", faults.Selector{Start: yamlfile.Duration(time.Second), Duration: yamlfile.Duration(2 * time.Second)}, nil, []bool{false, true, true, false}},
		{"model glob", faults.Selector{Model: "gpt-4*"}, nil, []bool{true, true, true, true}},
		{"other model", faults.Selector{Model: "claude-*"}, nil, []bool{false, false, false, false}},
		{"other provider", faults.Selector{Provider: "anthropic"}, nil, []bool{false, false, false, false}},
		{"header match", faults.Selector{Header: map[string]string{"X-Chaos": "on"}}, func(e *faults.Env) { e.Headers = map[string]string{"x-chaos": "on"} }, []bool{true, true, true, true}},
		{"header mismatch", faults.Selector{Header: map[string]string{"x-chaos": "on"}}, func(e *faults.Env) { e.Headers = map[string]string{"x-chaos": "off"} }, []bool{false, false, false, false}},
		{"header present", faults.Selector{Header: map[string]string{"x-chaos": "*"}}, func(e *faults.Env) { e.Headers = map[string]string{"x-chaos": "x"} }, []bool{true, true, true, true}},
		{"probability 0", faults.Selector{Probability: pct(0)}, nil, []bool{false, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var set faults.Set
			if _, err := set.Add(t0, faults.Spec{Kind: faults.KindReset, Selector: tt.sel}); err != nil {
				t.Fatal(err)
			}
			e := env(llm.FormatOpenAI)
			e.Provider = "openai"
			if tt.env != nil {
				tt.env(e)
			}
			got := hits(&set, len(tt.want), 0, e)
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestProbabilityIsSeeded(t *testing.T) {
	run := func(seed uint64) []bool {
		var set faults.Set
		if _, err := set.Add(t0, faults.Spec{Kind: faults.KindReset, Selector: faults.Selector{Probability: pct(0.3)}}); err != nil {
			t.Fatal(err)
		}
		e := env(llm.FormatOpenAI)
		e.Rand = rand.New(rand.NewPCG(seed, 0))
		return hits(&set, 2000, 0, e)
	}
	a, b := run(1), run(1)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different selections at %d", i)
		}
	}
	if n := count(a); n < 500 || n > 700 {
		t.Fatalf("30%% of 2000 selected %d", n)
	}
	if c := run(2); count(c) == count(a) && c[0] == a[0] && c[1] == a[1] && c[2] == a[2] && c[3] == a[3] {
		t.Log("different seeds gave similar selections (possible, unlikely)")
	}
}

func TestRamp(t *testing.T) {
	var set faults.Set
	_, err := set.Add(t0, faults.Spec{Kind: faults.KindReset, Selector: faults.Selector{
		Ramp: &faults.Ramp{From: 0, To: 1, Over: yamlfile.Duration(1000 * time.Second)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	e := env(llm.FormatOpenAI)
	first := count(hits(&set, 200, 0, e))              // p from 0 to 0.2
	last := count(hits(&set, 200, 800*time.Second, e)) // p from 0.8 to 1
	after := count(hits(&set, 50, 1000*time.Second, e))
	if first > 40 || last < 160 || after != 50 {
		t.Fatalf("ramp: %d early, %d late, %d after", first, last, after)
	}
}

func TestOrder(t *testing.T) {
	var set faults.Set
	// Added in reverse of the application order.
	d := faults.Fixed(time.Second)
	for _, s := range []faults.Spec{
		{Kind: faults.KindCut, After: intp(2)},
		{Kind: faults.KindTTFT, Delay: &d},
		{Kind: faults.KindTruncate, At: intp(4)},
		{Kind: faults.KindRefusal, Text: "I can't help with that, sorry, really."},
	} {
		if _, err := set.Add(t0, s); err != nil {
			t.Fatal(err)
		}
	}
	p := plan(10)
	set.Apply(t0, p, env(llm.FormatOpenAI))
	if p.Fault != "refusal,truncate,ttft,cut" {
		t.Fatalf("order %q", p.Fault)
	}
	// Refusal replaced the content, truncate cut it to 4 tokens, ttft moved
	// them by 1s, cut closes after 2.
	if p.Response.Content != "I can't help wit" || p.TTFT != 1100*time.Millisecond || p.CutAfter != 2 {
		t.Fatalf("%q ttft %v cut %d", p.Response.Content, p.TTFT, p.CutAfter)
	}
	// A terminal fault stops the chain.
	if _, err := set.Add(t0, faults.Spec{Kind: faults.KindHTTPError, Status: 503}); err != nil {
		t.Fatal(err)
	}
	p = plan(10)
	set.Apply(t0, p, env(llm.FormatOpenAI))
	if p.Fault != "http_error" || p.Status != 503 {
		t.Fatalf("fault %q status %d", p.Fault, p.Status)
	}
}

func TestSetAddRemove(t *testing.T) {
	var set faults.Set
	id1, _ := set.Add(t0, faults.Spec{Kind: faults.KindReset})
	id2, _ := set.Add(t0, faults.Spec{Kind: faults.KindReset, ID: "mine"})
	if id1 != "f1" || id2 != "mine" || set.Len() != 2 {
		t.Fatalf("ids %q %q", id1, id2)
	}
	if _, err := set.Add(t0, faults.Spec{Kind: "nope"}); err == nil {
		t.Fatal("unknown kind accepted")
	}
	if !set.Remove("mine") || set.Remove("mine") || set.Len() != 1 {
		t.Fatal("remove")
	}
	set.Reset()
	if set.Len() != 0 {
		t.Fatal("reset")
	}
}

func TestZeroTimeActivatesOnFirstRequest(t *testing.T) {
	var set faults.Set
	if _, err := set.Add(time.Time{}, faults.Spec{Kind: faults.KindReset, Selector: faults.Selector{
		Start: yamlfile.Duration(time.Second), Duration: yamlfile.Duration(2 * time.Second)}}); err != nil {
		t.Fatal(err)
	}
	got := hits(&set, 4, time.Hour, env(llm.FormatOpenAI))
	if want := []bool{false, true, true, false}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("got %v, want %v", got, want)
	}
	if !set.List()[0].Since.Equal(t0.Add(time.Hour)) {
		t.Fatalf("since %v", set.List()[0].Since)
	}
}

// Concurrent requests reach Select out of order: one whose time is a little
// before the activating request's still gets an always-on fault (the mock
// served one unfaulted answer under load before this was fixed).
func TestRequestBeforeLazyActivationIsInWindow(t *testing.T) {
	var set faults.Set
	if _, err := set.Add(time.Time{}, faults.Spec{Kind: faults.KindReset}); err != nil {
		t.Fatal(err)
	}
	e := env(llm.FormatOpenAI)
	if len(set.Select(t0.Add(time.Second), e)) != 1 {
		t.Fatal("the activating request is not faulted")
	}
	if len(set.Select(t0.Add(999*time.Millisecond), e)) != 1 {
		t.Fatal("a request stamped just before activation escaped an always-on fault")
	}
}
