package policy

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/yamlfile"
	"github.com/stretchr/testify/require"
)

func TestConfigYAML(t *testing.T) {
	var cfg Config
	_, err := yamlfile.ReadFile("testdata/gateway.yaml", &cfg)
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	r := cfg.Routes[0]
	require.Equal(t, []string{"primary", "equivalent", "smaller", "cached"}, r.Tiers)
	g := r.Targets[0]
	require.Equal(t, "openai:gpt-4o", g.Key())
	require.Equal(t, 3, g.Weight)
	require.Equal(t, Retry{Attempts: 3, OnStatusCodes: []int{429, 500, 503}, Base: dur("100ms"), Cap: dur("1s"), RetryAfterCap: dur("10s")}, g.Retry)
	require.Equal(t, Timeouts{Connect: dur("2s"), FirstToken: dur("10s"), Idle: dur("5s"), Total: dur("2m"), TokenRateFloor: 5, Grace: dur("3s")}, g.Timeouts)
	require.Equal(t, 1024, g.OverrideParams["max_tokens"])
	require.Equal(t, 0.2, cfg.Policy.RetryBudget.Ratio.F())
	require.Equal(t, 0.5, cfg.Policy.Breaker.ErrorRate.F())
	require.True(t, r.Targets[2].Capabilities.Prefill)

	e, err := New(cfg, Options{})
	require.NoError(t, err)
	mini := e.Targets("chat")[2]
	require.False(t, mini.Capabilities.Tools, "declared capabilities are kept")
	azure := e.Targets("chat")[1]
	require.True(t, azure.Capabilities.Tools, "no declared capabilities: all but prefill")
	require.Equal(t, 2, azure.Retry.Attempts)
	require.Equal(t, 200*time.Millisecond, azure.Retry.Base.D())
	require.Equal(t, defaultFallbackStatusCodes, azure.FallbackStatusCodes)
	require.Equal(t, 3, e.Settings().Health.Failures)
	require.Equal(t, 30*time.Second, e.Settings().Health.Cooldown.D())
}

func TestSettingsDefaults(t *testing.T) {
	s := Settings{}.withDefaults()
	require.Equal(t, 3, s.MaxAttempts)
	require.Equal(t, 0.10, s.RetryBudget.Ratio.F())
	require.Equal(t, 3, s.RetryBudget.MinRetries)
	require.Equal(t, OnExhaustedFailover, s.RetryBudget.OnExhausted)
	require.Equal(t, Breaker{Window: dur("60s"), ErrorRate: 0.25, MinSamples: 20, ProbeFailures: 3, OpenFor: dur("30s"), MaxOpenFor: dur("5m"), ResetAfter: dur("10m"), HalfOpenRequests: 5, TrialTimeout: dur("10m")}, s.Breaker)
	require.Equal(t, Health{Failures: 2, Window: dur("2m"), Cooldown: dur("2m")}, s.Health)
	tg := Target{}.withDefaults()
	require.Equal(t, []int{429, 500, 502, 503}, tg.Retry.OnStatusCodes)
	require.Equal(t, []int{401, 403, 404, 408, 429, 500, 502, 503, 529}, tg.FallbackStatusCodes)
	require.Equal(t, 1, tg.Weight)
	require.Equal(t, DefaultTier, tg.Tier)
}

func TestValidate(t *testing.T) {
	good := func() Config { return oneRoute(tgt("a:m1")) }
	tests := []struct {
		name string
		mod  func(*Config)
		want []string
	}{
		{"no routes", func(c *Config) { c.Routes = nil }, []string{"routes: at least one route is required"}},
		{"route name", func(c *Config) { c.Routes[0].Name = "" }, []string{"routes.0.name: required"}},
		{"duplicate route", func(c *Config) { c.Routes = append(c.Routes, c.Routes[0]) }, []string{`routes.1.name: duplicate route "chat" (also routes.0)`}},
		{"no targets", func(c *Config) { c.Routes[0].Targets = nil }, []string{"routes.0.targets: at least one target is required"}},
		{"target fields", func(c *Config) {
			c.Routes[0].Targets = append(c.Routes[0].Targets, Target{Provider: "x:y", Priority: -1, Weight: -2, ContextWindow: -1})
		}, []string{
			"routes.0.targets.1.provider: must not contain ':'",
			"routes.0.targets.1.model: required",
			"routes.0.targets.1.priority: must not be negative",
			"routes.0.targets.1.weight: -2 is not in [0, 1000000]",
			"routes.0.targets.1.context_window: must not be negative",
		}},
		{"duplicate target", func(c *Config) { c.Routes[0].Targets = append(c.Routes[0].Targets, tgt("a:m1")) }, []string{"routes.0.targets.1: duplicate target a:m1 (also targets.0)"}},
		{"retry", func(c *Config) {
			r := &c.Routes[0].Targets[0].Retry
			r.Base, r.Cap, r.OnStatusCodes, r.Attempts = dur("2s"), dur("1s"), []int{429, 42}, -1
		}, []string{
			"routes.0.targets.0.retry.attempts: must not be negative",
			"routes.0.targets.0.retry.on_status_codes.1: 42 is not an HTTP status",
			"routes.0.targets.0.retry.base: base 2s is above cap 1s",
		}},
		{"negative durations", func(c *Config) {
			c.Routes[0].Targets[0].Timeouts.Idle = -1
			c.Routes[0].Targets[0].SLA.Window = -1
			c.Policy.Breaker.OpenFor = -1
		}, []string{
			"routes.0.targets.0.sla.window: must not be negative",
			"routes.0.targets.0.timeouts.idle: must not be negative",
			"policy.breaker.open_for: must not be negative",
		}},
		{"fallback codes", func(c *Config) { c.Routes[0].Targets[0].FallbackStatusCodes = []int{700} }, []string{"routes.0.targets.0.fallback_status_codes.0: 700 is not an HTTP status"}},
		{"tiers", func(c *Config) {
			c.Routes[0].Tiers = []string{"primary", "primary", ""}
			c.Routes[0].Targets = append(c.Routes[0].Targets, tgt("b:m2", tier("smaller")), tgt("c:m3", tier(TierCached)))
		}, []string{
			`routes.0.tiers.1: duplicate tier "primary"`,
			"routes.0.tiers.2: empty tier name",
			`routes.0.targets.1.tier: tier "smaller" is not in the route's tiers [primary primary ]`,
			`routes.0.targets.2.tier: "cached" is reserved for the cached answer tier`,
		}},
		{"sla differs across routes", func(c *Config) {
			r := c.Routes[0]
			r.Name = "other"
			r.Targets = []Target{tgt("a:m1", func(t *Target) { t.SLA.FirstToken = dur("1s") })}
			c.Routes = append(c.Routes, r)
		}, []string{"routes.1.targets.0.sla: a:m1 is also used by routes.0.targets.0 with a different sla; breakers and health are per provider:model"}},
		{"policy", func(c *Config) {
			p := &c.Policy
			p.MaxAttempts = -1
			p.RetryBudget.OnExhausted = "panic"
			p.RetryBudget.Ratio = 1.5
			p.Breaker.OpenFor, p.Breaker.MaxOpenFor = dur("10m"), dur("1m")
			p.Health.Failures = 5000
		}, []string{
			"policy.max_attempts: must not be negative",
			"policy.retry_budget.ratio: 150% is not in [0%, 100%]",
			`policy.retry_budget.on_exhausted: "panic" is not "failover" or "fail_fast"`,
			"policy.breaker.open_for: open_for 10m0s is above max_open_for 1m0s",
			"policy.health.failures: 5000 is not in [0, 1000]",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good()
			tt.mod(&c)
			err := c.Validate()
			require.Error(t, err)
			var es Errors
			require.ErrorAs(t, err, &es)
			var got []string
			for _, e := range es {
				got = append(got, e.Error())
			}
			require.Equal(t, tt.want, got)
			require.Equal(t, strings.Join(tt.want, "\n"), err.Error())
			_, err = New(c, Options{})
			require.Error(t, err, "New validates")
		})
	}
	c := good()
	require.NoError(t, c.Validate())
}

// FuzzConfig decodes arbitrary YAML; whatever Validate accepts must build an
// engine that serves a request without panicking.
func FuzzConfig(f *testing.F) {
	seed, err := os.ReadFile("testdata/gateway.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("routes: [{name: a, targets: [{provider: p, model: m, weight: 1000000}, {provider: q, model: m, weight: 1000000}]}]\npolicy: {breaker: {window: 1ns, open_for: 1ns, max_open_for: 2562047h}}"))
	f.Add([]byte("routes: [{name: a, tiers: [cached, primary], targets: [{provider: p, model: m, retry: {base: 2562047h}}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cfg Config
		if _, err := yamlfile.Decode("fuzz.yaml", data, &cfg); err != nil {
			return
		}
		if cfg.Validate() != nil {
			return
		}
		e, err := New(cfg, Options{})
		if err != nil {
			t.Fatalf("Validate accepted what New rejects: %v", err)
		}
		for _, name := range e.Routes() {
			now := t0
			a := e.Begin(now, Request{Route: name, Stream: true, PromptTokens: 1000})
			for range 20 {
				d := a.Next(now)
				switch d.Kind {
				case Send:
					a.Observe(now, Outcome{Class: ServerError, Status: 500})
				case ServeCached:
					a.Observe(now, Outcome{Class: CacheMiss})
				case Wait:
					if d.Until.Before(now) {
						t.Fatalf("wait in the past: %v < %v", d.Until, now)
					}
					now = d.Until
				}
			}
		}
	})
}

var keySink string // Key's result escapes here, as the gateway's do

// TestTargetKey: Key is "provider:model" for the engine's targets (kept,
// built without allocating), for targets built by hand, and for a copy of
// an engine target whose provider or model was changed afterwards.
func TestTargetKey(t *testing.T) {
	require.Equal(t, "p:m", (&Target{Provider: "p", Model: "m"}).Key())
	require.Equal(t, ":", (&Target{}).Key())

	e := newEngine(t, oneRoute(tgt("ab:c")), nil)
	d := e.Begin(t0, Request{Route: "chat"}).Next(t0)
	require.Equal(t, Send, d.Kind)
	require.Equal(t, "ab:c", d.Target.Key())
	require.Zero(t, testing.AllocsPerRun(100, func() { keySink = d.Target.Key() }), "the engine's target keeps its key")

	c := *d.Target
	c.Provider, c.Model = "a", "bc" // same length as the kept key
	require.Equal(t, "a:bc", c.Key())
	c.Provider, c.Model = "ab", "d"
	require.Equal(t, "ab:d", c.Key())
	c.Provider, c.Model = "x", "c"
	require.Equal(t, "x:c", c.Key())
	c = *d.Target
	require.Equal(t, "ab:c", c.Key())
}
