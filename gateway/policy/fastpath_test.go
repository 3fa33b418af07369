package policy

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/brownout-dev/brownout/yamlfile"
)

// checkCalm compares a target's lock-free admission with the locked path
// at now: when admitCalm admits, advancing, usable and admit under the lock
// change nothing, emit nothing and give the same generation, no trial; when
// it does not, the target is not closed and healthy.
func checkCalm(t *rapid.T, ts *targetState, now time.Time) {
	gen, calm := ts.admitCalm()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !calm {
		if ts.br.state == Closed && ts.health == Healthy {
			t.Fatalf("%s: closed and healthy but not calm", ts.key)
		}
		return
	}
	before := ts.br.state
	var p pending
	ts.advance(now, &p)
	if len(p.evs) != 0 || ts.br.state != before || ts.health != Healthy {
		t.Fatalf("%s: calm, but advancing at %v moved it: %+v", ts.key, now, p.evs)
	}
	if !ts.usable(now) {
		t.Fatalf("%s: calm but not usable", ts.key)
	}
	g, trial := ts.admit()
	if g != gen || trial {
		t.Fatalf("%s: calm admission in generation %d, locked %d (trial %v)", ts.key, gen, g, trial)
	}
}

// checkRestless compares an engine's count of restless targets with its
// targets, and NextTick (which returns early while it is 0) with the
// earliest timed work of the targets that are not calm.
func checkRestless(t *rapid.T, e *Engine) {
	n := int64(0)
	var next time.Time
	for _, ts := range e.order {
		if ts.isCalm() {
			continue
		}
		n++
		ts.mu.Lock()
		if x := ts.nextTick(); !x.IsZero() && (next.IsZero() || x.Before(next)) {
			next = x
		}
		ts.mu.Unlock()
	}
	if got := e.restless.Load(); got != n {
		t.Fatalf("%d restless targets counted, %d not calm", got, n)
	}
	if got := e.NextTick(); !got.Equal(next) {
		t.Fatalf("NextTick %v, the targets' earliest %v", got, next)
	}
}

// The lock-free admission of a calm target is the locked one, and the
// count of restless targets the number of targets not calm, whatever
// outcomes, signals, probes and reloads (sharing targets or not) brought
// the targets where they are.
func TestPropertyCalmAdmission(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := genConfig(t)
		e, err := New(cfg, Options{Rand: rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))})
		if err != nil {
			t.Fatal(err)
		}
		engines := []*Engine{e}
		keys := e.keys
		now := t0
		checkAll := func() {
			for _, ts := range e.order {
				checkCalm(t, ts, now)
			}
			for _, x := range engines {
				checkRestless(t, x)
			}
		}
		for range rapid.IntRange(1, 30).Draw(t, "requests") {
			switch rapid.IntRange(0, 7).Draw(t, "side") {
			case 3: // reload, sharing the targets' state
				if n, err := e.Reload(cfg, Options{}); err == nil {
					e = n
					engines = append(engines, e)
				}
			case 4: // reload with other breaker settings: state copied, not shared
				c := cfg
				c.Policy.Breaker.MinSamples++
				if n, err := e.Reload(c, Options{}); err == nil {
					e = n
					engines = append(engines, e)
				}
			case 0:
				_ = e.Signal(now, rapid.SampledFrom(keys).Draw(t, "signal"), "test", rapid.SampledFrom([]Action{Demote, Trip}).Draw(t, "action"))
			case 1:
				_ = e.ProbeResult(now, rapid.SampledFrom(keys).Draw(t, "probe"), rapid.Bool().Draw(t, "probe_ok"))
			case 2:
				e.Tick(now)
			}
			a := e.Begin(now, Request{Route: "chat", Stream: rapid.Bool().Draw(t, "stream")})
			now = driveDrawn(t, a, now, 100, checkAll)
			now = now.Add(time.Duration(rapid.IntRange(0, 8000).Draw(t, "gap_ms")) * time.Millisecond)
		}
	})
}

// Without a request deadline, deadlines adds the shorter timeout once;
// the instants are those of the plain sums and minimums, for any
// timeouts (zero, negative, huge) and times with or without a monotonic
// reading.
func TestPropertyDeadlines(t *testing.T) {
	mono := time.Now()
	rapid.Check(t, func(t *rapid.T) {
		now := time.Unix(rapid.Int64Range(-1<<40, 1<<40).Draw(t, "sec"), rapid.Int64Range(0, 999_999_999).Draw(t, "nsec"))
		if rapid.Bool().Draw(t, "monotonic") {
			now = mono.Add(time.Duration(rapid.Int64Range(-1<<50, 1<<50).Draw(t, "offset")))
		}
		d := rapid.OneOf(rapid.Int64Range(-10, 10), rapid.SampledFrom([]int64{0, int64(5 * time.Second), int64(time.Minute)}),
			rapid.Int64Range(0, int64(time.Hour)), rapid.Int64())
		to := Timeouts{Connect: yamlfile.Duration(d.Draw(t, "connect")), FirstToken: yamlfile.Duration(d.Draw(t, "first_token")),
			Total: yamlfile.Duration(d.Draw(t, "total"))}
		got := deadlines(now, &to, time.Time{})
		total := now.Add(to.Total.D())
		want := Deadlines{Connect: minTime(now.Add(to.Connect.D()), total), FirstToken: minTime(now.Add(to.FirstToken.D()), total), Total: total}
		if got != want {
			t.Fatalf("deadlines(%v, %+v) = %+v, want %+v", now, to, got, want)
		}
	})
}

// choose reads eligibility as one mask (ineligible); it is target by target
// what eligible says, for any capabilities, context windows, strict
// fall-backs and request, at every step of a request.
func TestPropertyIneligibleMatchesEligible(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := genConfig(t)
		rt := &cfg.Routes[0]
		rt.StrictFallbacks = rapid.Bool().Draw(t, "strict")
		rt.Structured = rapid.IntRange(0, 3).Draw(t, "route_structured") == 0
		for i := range rt.Targets {
			tg := &rt.Targets[i]
			c := &tg.Capabilities
			c.Streaming, c.Tools, c.StructuredOutput = rapid.Bool().Draw(t, "streaming"), rapid.Bool().Draw(t, "tools"), rapid.Bool().Draw(t, "structured")
			tg.FallbackCandidate = rapid.Bool().Draw(t, "fallback_candidate")
			tg.ContextWindow = rapid.SampledFrom([]int{0, 100, 1000, 8000}).Draw(t, "context_window")
		}
		e, err := New(cfg, Options{Rand: rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))})
		if err != nil {
			t.Skip("invalid config:", err)
		}
		now := t0
		for range rapid.IntRange(1, 10).Draw(t, "requests") {
			a := e.Begin(now, Request{Route: "chat", Stream: rapid.Bool().Draw(t, "stream"), Tools: rapid.Bool().Draw(t, "req_tools"),
				Structured: rapid.Bool().Draw(t, "req_structured"), PromptTokens: rapid.SampledFrom([]int{0, 50, 100, 500, 1000, 5000, 50000}).Draw(t, "prompt")})
			now = driveDrawn(t, a, now, 50, func() {
				m := a.ineligible()
				for i := range a.r.targets {
					if got, want := m&(1<<uint(i)) == 0, a.eligible(i); got != want {
						t.Fatalf("target %d: eligible by mask %v, by eligible %v (request %+v, target %+v)", i, got, want, a.req, a.r.targets[i])
					}
				}
			})
		}
	})
}

// While every target is calm, choose reads the route's static order
// (calmGroup) instead of scanning the targets: both find the same group and
// key, for any tiers, priorities, weights and eligibility, at every step of
// requests that move targets in and out of calm.
func TestPropertyCalmGroupMatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := genConfig(t)
		rt := &cfg.Routes[0]
		tiers := []string{DefaultTier, "secondary", "tertiary"}
		rt.Tiers = tiers
		if rapid.Bool().Draw(t, "cached_tier") {
			rt.Tiers = append(slices.Clone(tiers), TierCached)
		}
		for i := range rt.Targets {
			rt.Targets[i].Tier = rapid.SampledFrom(tiers).Draw(t, "tier")
			rt.Targets[i].Capabilities.Streaming = rapid.Bool().Draw(t, "streaming")
		}
		e, err := New(cfg, Options{Rand: rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))})
		if err != nil {
			t.Skip("invalid config:", err)
		}
		now := t0
		compare := func(a *Attempt) {
			if e.restless.Load() != 0 {
				return
			}
			skip := a.ineligible()
			var g1, g2 [MaxTargets]uint8
			n1, k1 := a.r.calmGroup(skip, &g1)
			n2, k2, soonest := a.scan(now, skip, false, &g2)
			if n1 != n2 || (n1 > 0 && k1 != k2) || !slices.Equal(g1[:n1], g2[:n2]) || !soonest.IsZero() {
				t.Fatalf("skip %b: calm group %v (key %d), scan %v (key %d, soonest %v)", skip, g1[:n1], k1, g2[:n2], k2, soonest)
			}
		}
		for range rapid.IntRange(1, 20).Draw(t, "requests") {
			if rapid.IntRange(0, 4).Draw(t, "signal") == 0 {
				_ = e.Signal(now, rapid.SampledFrom(e.keys).Draw(t, "target"), "test", rapid.SampledFrom([]Action{Demote, Trip}).Draw(t, "action"))
			}
			a := e.Begin(now, Request{Route: "chat", Stream: rapid.Bool().Draw(t, "stream")})
			now = driveDrawn(t, a, now, 50, func() { compare(a) })
			now = now.Add(time.Duration(rapid.IntRange(0, 20000).Draw(t, "gap_ms")) * time.Millisecond)
		}
	})
}

// driveDrawn plays request a to its end (or steps decisions) with drawn
// latencies and outcomes, calling check before each decision; it returns
// the time it reached (drive answers with fixed latencies instead).
func driveDrawn(t *rapid.T, a *Attempt, now time.Time, steps int, check func()) time.Time {
	for range steps {
		check()
		d := a.Next(now)
		switch d.Kind {
		case Send:
			now = now.Add(time.Duration(rapid.IntRange(1, 3000).Draw(t, "latency_ms")) * time.Millisecond)
			a.Observe(now, genOutcome(t))
			continue
		case ServeCached:
			a.Observe(now, Outcome{Class: rapid.SampledFrom([]Class{OK, CacheMiss}).Draw(t, "cache")})
			continue
		case Wait:
			now = d.Until
			continue
		}
		break
	}
	return now
}
