package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"pgregory.net/rapid"
)

var genClass = rapid.SampledFrom(Classes)

// genOutcome draws an outcome with a plausible status for its class.
func genOutcome(t *rapid.T) Outcome {
	c := genClass.Draw(t, "class")
	o := Outcome{Class: c}
	switch c {
	case RateLimited:
		o.Status = 429
	case Overloaded:
		o.Status = rapid.SampledFrom([]int{503, 529}).Draw(t, "status")
	case ServerError:
		o.Status = rapid.SampledFrom([]int{500, 502, 501}).Draw(t, "status")
	case Auth:
		o.Status = rapid.SampledFrom([]int{401, 403, 404}).Draw(t, "status")
	case BadRequestParam, ContextLength, ContentFilter:
		o.Status = 400
	case OK:
		o.Status = 200
	}
	if rapid.IntRange(0, 4).Draw(t, "has_retry_after") == 0 {
		o.RetryAfter = time.Duration(rapid.IntRange(0, 8).Draw(t, "retry_after_s")) * time.Second
	}
	o.BytesSent = rapid.Bool().Draw(t, "bytes_sent")
	o.Partial = rapid.IntRange(0, 5).Draw(t, "partial") == 0
	o.TTFT = time.Duration(rapid.IntRange(0, 3000).Draw(t, "ttft_ms")) * time.Millisecond
	o.OutputTokens = rapid.IntRange(0, 200).Draw(t, "tokens")
	return o
}

// genConfig draws a route "chat" with 1-4 targets and small breaker settings.
func genConfig(t *rapid.T) Config {
	n := rapid.IntRange(1, 4).Draw(t, "targets")
	var targets []Target
	for i := range n {
		tg := Target{
			Provider: fmt.Sprintf("p%d", i), Model: fmt.Sprintf("m%d", rapid.IntRange(0, 2).Draw(t, "model")),
			Priority: rapid.IntRange(0, 2).Draw(t, "priority"),
			Weight:   rapid.IntRange(0, 3).Draw(t, "weight"),
		}
		tg.Retry.Attempts = rapid.IntRange(0, 4).Draw(t, "attempts")
		tg.Capabilities.Prefill = rapid.Bool().Draw(t, "prefill")
		if slices.ContainsFunc(targets, func(u Target) bool { return u.Key() == tg.Key() }) {
			tg.Model += "x"
		}
		targets = append(targets, tg)
	}
	cfg := Config{Routes: []Route{{Name: "chat", Targets: targets,
		FallbackOnContentFilter: rapid.Bool().Draw(t, "fallback_content_filter")}}}
	if rapid.Bool().Draw(t, "cached_tier") {
		cfg.Routes[0].Tiers = []string{DefaultTier, TierCached}
	}
	p := &cfg.Policy
	p.MaxAttempts = rapid.IntRange(0, 5).Draw(t, "max_attempts")
	p.Breaker.MinSamples = rapid.IntRange(1, 8).Draw(t, "min_samples")
	p.Breaker.Window = dur("10s")
	p.Breaker.OpenFor = dur("2s")
	p.Breaker.HalfOpenRequests = rapid.IntRange(1, 3).Draw(t, "half_open")
	p.Health.Failures = rapid.IntRange(1, 6).Draw(t, "health_failures")
	p.Health.Window = dur("5s")
	p.Health.Cooldown = dur("5s")
	if rapid.Bool().Draw(t, "fail_fast") {
		p.RetryBudget.OnExhausted = OnExhaustedFailFast
	}
	return cfg
}

func TestPropertyAttemptCap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := genConfig(t)
		e, err := New(cfg, Options{Rand: rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))})
		if err != nil {
			t.Fatal(err)
		}
		capN := e.Settings().MaxAttempts
		now := t0
		for range rapid.IntRange(1, 20).Draw(t, "requests") {
			a := e.Begin(now, Request{Route: "chat", Stream: rapid.Bool().Draw(t, "stream"), NonRetryable: rapid.Bool().Draw(t, "nonretryable")})
			sends := 0
			for step := 0; ; step++ {
				if step > 100 {
					t.Fatal("request does not finish")
				}
				d := a.Next(now)
				if d.Kind == Send {
					sends++
					if d.Try != sends {
						t.Fatalf("Try %d at send %d", d.Try, sends)
					}
					if sends > capN {
						t.Fatalf("%d sends, cap %d", sends, capN)
					}
					now = now.Add(time.Duration(rapid.IntRange(1, 2000).Draw(t, "latency_ms")) * time.Millisecond)
					o := genOutcome(t)
					if o.Class == Skipped {
						sends-- // not sent: not an attempt, the next send takes its number
					}
					a.Observe(now, o)
					continue
				}
				if d.Kind == ServeCached {
					a.Observe(now, Outcome{Class: rapid.SampledFrom([]Class{OK, CacheMiss}).Draw(t, "cache")})
					continue
				}
				if d.Kind == Wait {
					if d.Until.Before(now) {
						t.Fatalf("wait until %v is in the past", d.Until)
					}
					now = d.Until
					continue
				}
				if d.Kind == Fail && (d.Err == nil || d.Err.Status == 0) {
					t.Fatalf("fail without an error: %+v", d)
				}
				break
			}
			now = now.Add(time.Duration(rapid.IntRange(0, 3000).Draw(t, "gap_ms")) * time.Millisecond)
		}
	})
}

func TestPropertyRetryBudget(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := noHealth(oneRoute(tgt("a:m1", attempts(4)), tgt("b:m2", prio(1))))
		cfg.Policy.MaxAttempts = 5
		cfg.Policy.Breaker.MinSamples = 1 << 20 // keep a in play
		cfg.Policy.RetryBudget.Ratio = 0.1
		cfg.Policy.RetryBudget.MinRetries = rapid.IntRange(1, 5).Draw(t, "floor")
		e, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b := e.Settings().RetryBudget
		now := t0
		requests, retries := 0, 0
		for range rapid.IntRange(1, 200).Draw(t, "requests") {
			requests++
			a := e.Begin(now, Request{Route: "chat"})
			for {
				d := a.Next(now)
				if d.Kind == Send {
					a.Observe(now, genOutcome(t))
					continue
				}
				if d.Kind == ServeCached {
					a.Observe(now, Outcome{Class: CacheMiss})
					continue
				}
				if d.Kind == Wait {
					retries++
					now = d.Until
					continue
				}
				break
			}
			now = now.Add(time.Duration(rapid.IntRange(0, 500).Draw(t, "gap_ms")) * time.Millisecond)
		}
		// Any interval shorter than the window minus one bucket lies inside
		// one budget window; cover the run with such intervals.
		span := now.Sub(t0) + 1
		w := b.Window.D() - b.Window.D()/nBuckets
		k := int((span + w - 1) / w)
		bound := b.MinRetries*k + int(b.Ratio.F()*float64(requests))
		if retries > bound {
			t.Fatalf("%d retries for %d requests over %s: bound %d", retries, requests, span, bound)
		}
	})
}

func TestPropertyBreakerMinSamples(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := noHealth(oneRoute(tgt("a:m1", attempts(1))))
		cfg.Policy.Breaker.MinSamples = rapid.IntRange(1, 30).Draw(t, "min_samples")
		cfg.Policy.Breaker.ErrorRate = 0.01
		var log events.Log
		e, err := New(cfg, Options{Events: &log})
		if err != nil {
			t.Fatal(err)
		}
		minS := e.Settings().Breaker.MinSamples
		win := e.Settings().Breaker.Window.D()
		now := t0
		var counted []time.Time
		for range rapid.IntRange(1, 100).Draw(t, "requests") {
			now = now.Add(time.Duration(rapid.IntRange(0, 10000).Draw(t, "gap_ms")) * time.Millisecond)
			a := e.Begin(now, Request{Route: "chat"})
			if a.Next(now).Kind != Send {
				break // opened
			}
			o := genOutcome(t)
			if o.Class == OK || o.Class.Failure() {
				counted = append(counted, now)
			}
			before := log.Len()
			a.Observe(now, o)
			for _, ev := range log.Events()[before:] {
				if ev.Kind == events.BreakerTransition && ev.To == string(Open) {
					n := 0
					for _, c := range counted {
						if now.Sub(c) < win {
							n++
						}
					}
					if n < minS {
						t.Fatalf("opened with %d samples in the window, minimum %d", n, minS)
					}
				}
			}
		}
	})
}

// sim interleaves many requests on one engine, keeping several attempts in
// flight, and checks breaker admission from the event stream.
type sim struct {
	e        *Engine
	log      *events.Log
	now      time.Time
	inflight []*Attempt
	n        int
}

func newSim(t *rapid.T, seed uint64) *sim {
	cfg := genConfig(t)
	log := &events.Log{}
	e, err := New(cfg, Options{Rand: rand.New(rand.NewPCG(seed, 7)), Events: log})
	if err != nil {
		t.Fatal(err)
	}
	return &sim{e: e, log: log, now: t0}
}

// step performs one random action. It returns the attempt observed, if any.
func (s *sim) step(t *rapid.T) {
	switch rapid.IntRange(0, 3).Draw(t, "action") {
	case 0:
		s.n++
		s.inflight = append(s.inflight, s.e.Begin(s.now, Request{Route: "chat", ID: fmt.Sprint(s.n)}))
	case 1:
		s.now = s.now.Add(time.Duration(rapid.IntRange(0, 3000).Draw(t, "advance_ms")) * time.Millisecond)
		if rapid.Bool().Draw(t, "tick") {
			s.e.Tick(s.now)
		}
	default:
		if len(s.inflight) == 0 {
			return
		}
		i := rapid.IntRange(0, len(s.inflight)-1).Draw(t, "which")
		a := s.inflight[i]
		switch a.phase {
		case phaseSending:
			a.Observe(s.now, genOutcome(t))
		case phaseCaching:
			a.Observe(s.now, Outcome{Class: CacheMiss})
		default:
			a.Next(s.now)
		}
		if a.phase == phaseFinal {
			s.inflight = slices.Delete(s.inflight, i, i+1)
		}
	}
}

func TestPropertyNoSendToOpenBreaker(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := newSim(t, rapid.Uint64().Draw(t, "seed"))
		halfOpenCap := s.e.Settings().Breaker.HalfOpenRequests
		for range rapid.IntRange(1, 300).Draw(t, "steps") {
			s.step(t)
		}
		// A trial whose outcome is no verdict on the target (client cancel,
		// bad request, an eval rejection) gives its slot back.
		state := map[string]string{}
		trials := map[string]int{}
		inTrial := map[string]string{} // attempt → target, trials of the current half-open period
		for _, ev := range s.log.Events() {
			id := ev.RequestID + "/" + fmt.Sprint(ev.Attempt)
			switch ev.Kind {
			case events.BreakerTransition:
				state[ev.Target] = ev.To
				trials[ev.Target] = 0
				for id, tk := range inTrial {
					if tk == ev.Target {
						delete(inTrial, id)
					}
				}
			case events.AttemptEnd:
				if c := Class(ev.Class); inTrial[id] != "" && c != OK && !c.Failure() {
					trials[ev.Target]--
				}
			case events.AttemptStart:
				if state[ev.Target] == string(HalfOpen) {
					inTrial[id] = ev.Target
				}
				switch state[ev.Target] {
				case string(Open):
					t.Fatalf("attempt %d of %s sent to an open breaker at %v", ev.Attempt, ev.Target, ev.Time)
				case string(HalfOpen):
					trials[ev.Target]++
					if trials[ev.Target] > halfOpenCap {
						t.Fatalf("%d half-open trials on %s, cap %d", trials[ev.Target], ev.Target, halfOpenCap)
					}
				}
			}
		}
	})
}

func TestPropertyOldGenerationIgnored(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := newSim(t, rapid.Uint64().Draw(t, "seed"))
		late := 0
		for range rapid.IntRange(1, 300).Draw(t, "steps") {
			// Before each observation of an attempt admitted under an older
			// generation, snapshot its target; nothing may change.
			var stale *Attempt
			for _, a := range s.inflight {
				if a.phase == phaseSending && a.r.states[a.cur].br.gen != a.curGen {
					stale = a
					break
				}
			}
			if stale == nil || !rapid.Bool().Draw(t, "observe_stale") {
				s.step(t)
				continue
			}
			s.e.Tick(s.now) // due transitions happen first, on their own
			key := stale.r.states[stale.cur].key
			before := targetSnapshot(s.e, key)
			stale.Observe(s.now, genOutcome(t))
			after := targetSnapshot(s.e, key)
			if before != after {
				t.Fatalf("late result changed %s:\n before %+v\n after  %+v", key, before, after)
			}
			late++
		}
		_ = late
	})
}

func targetSnapshot(e *Engine, key string) TargetState {
	for _, ts := range e.State().Targets {
		if ts.Key == key {
			return ts
		}
	}
	panic(key)
}

func TestPropertySameSeedSameDecisions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		// Record the random draws of one run and replay them for the second.
		var script []int
		cfg := genConfig(t)
		run := func(draw func(n int) int) []events.Event {
			log := &events.Log{}
			e, err := New(cfg, Options{Rand: rand.New(rand.NewPCG(seed, 7)), Events: log})
			if err != nil {
				t.Fatal(err)
			}
			now := t0
			for range 40 {
				a := e.Begin(now, Request{Route: "chat", ID: fmt.Sprint(now.UnixMilli())})
				for a.phase != phaseFinal {
					d := a.Next(now)
					switch d.Kind {
					case Send:
						a.Observe(now.Add(100*time.Millisecond), Outcome{Class: Classes[draw(len(Classes))], Status: 500 + draw(4)})
					case ServeCached:
						a.Observe(now, Outcome{Class: CacheMiss})
					case Wait:
						now = d.Until
					}
				}
				now = now.Add(time.Duration(draw(2000)) * time.Millisecond)
			}
			return log.Events()
		}
		first := run(func(n int) int {
			v := rapid.IntRange(0, n-1).Draw(t, "v")
			script = append(script, v)
			return v
		})
		i := 0
		second := run(func(int) int { v := script[i]; i++; return v })
		if !slices.Equal(first, second) {
			t.Fatalf("same seed, different events:\n%v\n%v", first, second)
		}
	})
}

func TestSameSeedDifferentSeed(t *testing.T) {
	run := func(seed uint64) []string {
		e, err := New(oneRoute(tgt("a:m1"), tgt("b:m2"), tgt("c:m3")), Options{Rand: rand.New(rand.NewPCG(seed, 0))})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for range 50 {
			out = append(out, e.Begin(t0, Request{Route: "chat"}).Next(t0).Target.Key())
		}
		return out
	}
	if !slices.Equal(run(1), run(1)) {
		t.Fatal("same seed, different choices")
	}
	if slices.Equal(run(1), run(2)) {
		t.Fatal("different seeds, same 50 weighted choices")
	}
}
