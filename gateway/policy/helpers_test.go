package policy

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/yamlfile"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func dur(s string) yamlfile.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return yamlfile.Duration(d)
}

func tgt(key string, mods ...func(*Target)) Target {
	var t Target
	for i := range key {
		if key[i] == ':' {
			t.Provider, t.Model = key[:i], key[i+1:]
		}
	}
	for _, m := range mods {
		m(&t)
	}
	return t
}

func prio(p int) func(*Target)      { return func(t *Target) { t.Priority = p } }
func weight(w int) func(*Target)    { return func(t *Target) { t.Weight = w } }
func tier(s string) func(*Target)   { return func(t *Target) { t.Tier = s } }
func ctxWindow(n int) func(*Target) { return func(t *Target) { t.ContextWindow = n } }
func caps(c Capabilities) func(*Target) {
	return func(t *Target) { t.Capabilities = c }
}
func attempts(n int) func(*Target) { return func(t *Target) { t.Retry.Attempts = n } }

func newEngine(tb testing.TB, cfg Config, log *events.Log) *Engine {
	tb.Helper()
	var sink events.Sink = events.Discard
	if log != nil {
		sink = log
	}
	e, err := New(cfg, Options{Rand: rand.New(rand.NewPCG(1, 2)), Events: sink})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func oneRoute(targets ...Target) Config {
	return Config{Routes: []Route{{Name: "chat", Targets: targets}}}
}

// noHealth makes passive health practically unreachable, so breaker and
// budget tests see every request on the primary.
func noHealth(c Config) Config {
	c.Policy.Health.Failures = 1000
	return c
}

// drive runs a request to its final decision, answering each Send with
// answer and sleeping through Waits. It returns the final decision and every
// decision on the way.
func drive(e *Engine, now time.Time, req Request, answer func(d Decision) Outcome) (Decision, []Decision, time.Time) {
	if req.Route == "" {
		req.Route = "chat"
	}
	a := e.Begin(now, req)
	var trail []Decision
	for range 100 {
		d := a.Next(now)
		trail = append(trail, d)
		switch d.Kind {
		case Send, ServeCached:
			o := answer(d)
			now = now.Add(10 * time.Millisecond)
			a.Observe(now, o)
		case Wait:
			now = d.Until
		default:
			return d, trail, now
		}
	}
	panic("request did not finish")
}

func keys(ds []Decision) []string {
	var out []string
	for _, d := range ds {
		switch d.Kind {
		case Send:
			out = append(out, d.Target.Key())
		case Wait:
			out = append(out, "wait")
		default:
			out = append(out, d.Kind.String())
		}
	}
	return out
}

func always(c Class, status int) func(Decision) Outcome {
	return func(Decision) Outcome { return Outcome{Class: c, Status: status} }
}

func ok(Decision) Outcome { return Outcome{Class: OK, Status: 200, OutputTokens: 10} }

// byTarget answers per target key; unknown keys succeed.
func byTarget(m map[string]Outcome) func(Decision) Outcome {
	return func(d Decision) Outcome {
		if d.Kind == ServeCached {
			if o, ok := m[TierCached]; ok {
				return o
			}
			return Outcome{Class: CacheMiss}
		}
		if o, ok := m[d.Target.Key()]; ok {
			return o
		}
		return Outcome{Class: OK, Status: 200, OutputTokens: 10}
	}
}

func kinds(evs []events.Event, k events.Kind) []events.Event {
	var out []events.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}
