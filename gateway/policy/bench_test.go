package policy

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
)

var okOutcome = Outcome{Class: OK, Status: 200, TTFT: 300 * time.Millisecond, OutputTokens: 100, BytesSent: true}

// BenchmarkRequestSuccess is one successful request: Begin, Next (Send),
// Observe, Next (Done).
func BenchmarkRequestSuccess(b *testing.B) {
	e := newEngine(b, oneRoute(tgt("openai:gpt-4o"), tgt("anthropic:claude-sonnet", prio(1))), nil)
	now := t0
	req := Request{ID: "r1", Route: "chat", Stream: true}
	b.ReportAllocs()
	for b.Loop() {
		a := e.Begin(now, req)
		if d := a.Next(now); d.Kind != Send {
			b.Fatal(d.Kind)
		}
		now = now.Add(time.Millisecond)
		a.Observe(now, okOutcome)
		if d := a.Next(now); d.Kind != Done {
			b.Fatal(d.Kind)
		}
	}
}

// BenchmarkRequestWeighted is BenchmarkRequestSuccess with a weighted choice
// among three targets, an events.Log sink and SLA cutoffs.
func BenchmarkRequestWeighted(b *testing.B) {
	sla := func(t *Target) { t.SLA = SLA{FirstToken: dur("5s"), TimePerOutputToken: dur("100ms")} }
	var log countSink
	e, err := New(oneRoute(tgt("openai:gpt-4o", weight(2), sla), tgt("azure:gpt-4o", sla), tgt("anthropic:claude-sonnet", sla)), Options{Events: &log})
	if err != nil {
		b.Fatal(err)
	}
	now := t0
	req := Request{ID: "r1", Route: "chat"}
	b.ReportAllocs()
	for b.Loop() {
		a := e.Begin(now, req)
		a.Next(now)
		now = now.Add(time.Millisecond)
		a.Observe(now, okOutcome)
		a.Next(now)
	}
}

type countSink struct{ n atomic.Int64 }

func (c *countSink) Emit(events.Event) { c.n.Add(1) }

// BenchmarkParallel runs successful requests from many goroutines across 8
// routes with distinct targets.
func BenchmarkParallel(b *testing.B) {
	var cfg Config
	for i := range 8 {
		cfg.Routes = append(cfg.Routes, Route{Name: fmt.Sprintf("route%d", i), Targets: []Target{
			tgt(fmt.Sprintf("p%d:primary", i)), tgt(fmt.Sprintf("p%d:fallback", i), prio(1)),
		}})
	}
	var sink countSink
	e, err := New(cfg, Options{Events: &sink})
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := next.Add(1)
		req := Request{ID: "r", Route: fmt.Sprintf("route%d", i%8)}
		now := t0
		for pb.Next() {
			a := e.Begin(now, req)
			a.Next(now)
			now = now.Add(time.Millisecond)
			a.Observe(now, okOutcome)
			if a.Next(now).Kind != Done {
				b.Fatal("not done")
			}
		}
	})
}

var rateLimited = Outcome{Class: RateLimited, Status: 429, BytesSent: true}

// BenchmarkRequestFailover is one request whose primary answers 429 (no
// retry on it) and whose fallback serves: Begin, Next (Send), Observe (429),
// Next (Send to the fallback), Observe, Next (Done), into an events sink.
// The breaker and passive health are set so that the primary never leaves
// the line.
func BenchmarkRequestFailover(b *testing.B) {
	cfg := oneRoute(tgt("openai:gpt-4o", attempts(1)), tgt("anthropic:claude-sonnet", prio(1)))
	cfg.Policy.Breaker.MinSamples = 1 << 30
	cfg.Policy.Health.Window = dur("1ns")
	var sink countSink
	e, err := New(cfg, Options{Events: &sink})
	if err != nil {
		b.Fatal(err)
	}
	now := t0
	req := Request{ID: "r1", Route: "chat", Stream: true}
	b.ReportAllocs()
	for b.Loop() {
		a := e.Begin(now, req)
		if d := a.Next(now); d.Kind != Send || d.Target.Provider != "openai" {
			b.Fatal(d.Kind)
		}
		now = now.Add(time.Millisecond)
		a.Observe(now, rateLimited)
		if d := a.Next(now); d.Kind != Send || d.Target.Provider != "anthropic" {
			b.Fatal(d.Kind)
		}
		now = now.Add(time.Millisecond)
		a.Observe(now, okOutcome)
		if d := a.Next(now); d.Kind != Done {
			b.Fatal(d.Kind)
		}
	}
}
