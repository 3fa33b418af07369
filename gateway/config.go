package gateway

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/yamlfile"
)

// ConfigVersion is the `version:` a gateway file must declare.
const ConfigVersion = 1

// Config is the gateway YAML file. Every section but providers and routes is
// optional; each field's comment gives the default its zero value stands for.
type Config struct {
	Version int `yaml:"version"`
	// Listen is the address to serve on. Default 127.0.0.1:8080.
	Listen string `yaml:"listen,omitempty"`
	// Admin protects /admin/*.
	Admin AdminConfig `yaml:"admin,omitempty"`
	// Clients are the keys callers must present (see ClientConfig).
	// Default none: the gateway is open (bind it to loopback).
	Clients []ClientConfig `yaml:"clients,omitempty"`
	// Limits bound requests (see LimitsConfig).
	Limits LimitsConfig `yaml:"limits,omitempty"`
	// Providers are the upstream accounts that targets name.
	Providers []Provider `yaml:"providers"`
	// Routes and Policy: the decision core's configuration.
	policy.Config `yaml:",inline"`
	// Usage configures the per-attempt usage records.
	Usage UsageConfig `yaml:"usage,omitempty"`
	// Cache configures the response cache behind the "cached" tier.
	Cache CacheConfig `yaml:"cache,omitempty"`
	// Idempotency configures Idempotency-Key handling.
	Idempotency IdempotencyConfig `yaml:"idempotency,omitempty"`
	// Responses configures what is kept of Responses API answers for
	// previous_response_id (see ResponsesConfig).
	Responses ResponsesConfig `yaml:"responses,omitempty"`
	// Alerts configures alert rules and their delivery.
	Alerts AlertsConfig `yaml:"alerts,omitempty"`
	// Detectors watch served answers for silent degradation (truncation at
	// a token wall, invalid JSON, refusals, empty tool arguments); a signal
	// is a detector.signal event and demotes (or trips) the target.
	Detectors DetectorsConfig `yaml:"detectors,omitempty"`
	// Probes sends active probes to every target (see ProbesConfig).
	Probes ProbesConfig `yaml:"probes,omitempty"`
	// Continuation configures how a fall-back is asked to continue a
	// partial answer (see ContinuationConfig).
	Continuation ContinuationConfig `yaml:"continuation,omitempty"`
	// Qualification requires every fallback to be qualified for its route
	// (see QualificationConfig).
	Qualification QualificationConfig `yaml:"qualification,omitempty"`
	// Reload configures hot reload.
	Reload ReloadConfig `yaml:"reload,omitempty"`
	// Shutdown configures graceful shutdown.
	Shutdown ShutdownConfig `yaml:"shutdown,omitempty"`
	// State says where breakers live: this process, or a fleet's Redis.
	State StateConfig `yaml:"state,omitempty"`
	// Tracing configures OpenTelemetry traces (see TracingConfig). Default
	// off, unless the OTEL_* environment names an OTLP endpoint.
	Tracing TracingConfig `yaml:"tracing,omitempty"`
	// Metrics configures /metrics beyond brownout's own series.
	Metrics MetricsConfig `yaml:"metrics,omitempty"`
	// Seed seeds the policy's random source (jitter, weighted choice).
	// Default 0: seeded from the clock at start.
	Seed uint64 `yaml:"seed,omitempty"`

	unqualified []Unqualified // fallbacks to warn about (qualification.require: warn)
	file        string        // the file it was read from
	doc         *yamlfile.Doc // its node tree, for positions in Preflight
}

// MetricsConfig configures /metrics.
type MetricsConfig struct {
	// GenAI adds the OpenTelemetry GenAI client metrics by their
	// Prometheus names: gen_ai_client_token_usage (gen_ai.client.token.usage)
	// and gen_ai_client_operation_duration_seconds
	// (gen_ai.client.operation.duration), labelled gen_ai_operation_name,
	// gen_ai_provider_name (the configured provider), gen_ai_request_model,
	// gen_ai_token_type and error_type. Default false.
	GenAI bool `yaml:"genai,omitempty"`
}

// AdminConfig protects the admin API.
type AdminConfig struct {
	// Token, when set, is required as "Authorization: Bearer TOKEN" on
	// /admin/*. Default empty: the admin API is open (bind to loopback!).
	Token Secret `yaml:"token,omitempty"`
	// ProtectMetrics requires the token on /metrics too. Default false.
	ProtectMetrics bool `yaml:"protect_metrics,omitempty"`
}

// UsageConfig configures usage records.
type UsageConfig struct {
	// File is the JSONL file usage records are appended to, one per attempt.
	// Default empty: no records.
	File string `yaml:"file,omitempty"`
	// RotateBytes starts a new file once the current one reaches this size;
	// the old one is kept beside it, named FILE.YYYYMMDDTHHMMSS.NNNNNNNNN.
	// Default 0: no rotation by size.
	RotateBytes int64 `yaml:"rotate_bytes,omitempty"`
	// RotateEvery starts a new file this long after the current one was
	// opened. Default 0: no rotation by time.
	RotateEvery yamlfile.Duration `yaml:"rotate_every,omitempty"`
}

// CacheConfig configures the response cache.
type CacheConfig struct {
	// TTL is how long a response is fresh. Default 10m.
	TTL yamlfile.Duration `yaml:"ttl,omitempty"`
	// MaxStale is how long after TTL an answer may still be served by the
	// cached tier, labelled stale. Default 24h.
	MaxStale yamlfile.Duration `yaml:"max_stale,omitempty"`
	// MaxEntries bounds the cache (least recently stored evicted). Default
	// 10000; a negative value disables caching.
	MaxEntries int `yaml:"max_entries,omitempty"`
	// Exact also serves fresh exact-match hits before any upstream attempt
	// (the key includes route, provider, model and the normalized request).
	// Default false: the cache only backs the cached tier.
	Exact bool `yaml:"exact,omitempty"`
}

// IdempotencyConfig configures Idempotency-Key handling.
type IdempotencyConfig struct {
	// TTL is how long a completed response is replayed. Default 10m.
	TTL yamlfile.Duration `yaml:"ttl,omitempty"`
	// MaxEntries bounds the store. Default 10000.
	MaxEntries int `yaml:"max_entries,omitempty"`
}

// AlertsConfig configures alerting.
type AlertsConfig struct {
	// EvaluateEvery is the evaluation period. Default 15s.
	EvaluateEvery yamlfile.Duration `yaml:"evaluate_every,omitempty"`
	// Rules to evaluate. Default none; `defaults: true` adds alerts.DefaultRules.
	Rules    []alerts.Rule `yaml:"rules,omitempty"`
	Defaults bool          `yaml:"defaults,omitempty"`
	// Sinks receive fired and resolved alerts.
	Sinks []AlertSink `yaml:"sinks,omitempty"`
}

// AlertSink is one place alerts are delivered to.
type AlertSink struct {
	Name string `yaml:"name"`
	// Kind is "webhook" (POST JSON to URL) or "log" (the gateway's log).
	Kind    string            `yaml:"kind"`
	URL     Secret            `yaml:"url,omitempty"`
	Headers map[string]Secret `yaml:"headers,omitempty"`
	// Timeout bounds each delivery attempt. Default 5s.
	Timeout yamlfile.Duration `yaml:"timeout,omitempty"`
	// Retries after a failed attempt. Default 2.
	Retries int `yaml:"retries,omitempty"`
	// Backoff before the first retry, doubled each time. Default 500ms.
	Backoff yamlfile.Duration `yaml:"backoff,omitempty"`
}

// DetectorsConfig configures the silent-degradation detectors.
type DetectorsConfig struct {
	evals.DetectorConfig `yaml:",inline"`
	// Action on a signal: "demote" (default: the target goes to the end of
	// the line for policy.health.window), "open" (trip its breaker) or
	// "none" (events only).
	Action string `yaml:"action,omitempty"`
	// Refusals are the phrases that mark a refusal (default
	// evals.DefaultRefusals).
	Refusals []string `yaml:"refusals,omitempty"`
	// Disable turns the detectors off.
	Disable bool `yaml:"disable,omitempty"`
}

// Signal returns the policy action a detector signal takes
// (policy.Demote, policy.Trip; "" when none, or the detectors are off),
// in the gateway and the simulator alike.
func (c *DetectorsConfig) Signal() policy.Action {
	if c.Disable {
		return ""
	}
	switch c.Action {
	case "", "demote":
		return policy.Demote
	case "open":
		return policy.Trip
	}
	return ""
}

// ReloadConfig configures hot reload.
type ReloadConfig struct {
	// Poll is how often the file's modification time is checked. Default
	// 2s; a negative value disables watching (SIGHUP still reloads).
	Poll yamlfile.Duration `yaml:"poll,omitempty"`
	// Disable turns file watching off.
	Disable bool `yaml:"disable,omitempty"`
}

// ShutdownConfig configures graceful shutdown (Server.Serve): on SIGTERM
// /readyz turns 503 at once while requests are still served for LameDuck,
// so that load balancers stop sending new ones; then the listener closes
// and requests and streams in flight get Drain to finish. Streams still
// open at the drain deadline end with an in-band error event in their
// API's shape (requests not yet answered get a 503), never a bare TCP
// close.
type ShutdownConfig struct {
	// LameDuck is how long the gateway keeps serving with /readyz at 503
	// before it closes its listener. Default 5s; "0s" for none.
	LameDuck *yamlfile.Duration `yaml:"lame_duck,omitempty"`
	// Drain is how long in-flight requests and streams may finish after the
	// listener closed. Default 30s.
	Drain yamlfile.Duration `yaml:"drain,omitempty"`
}

// Shutdown defaults.
const (
	defaultLameDuck = 5 * time.Second
	defaultDrain    = 30 * time.Second
)

func (c ShutdownConfig) lameDuck() time.Duration {
	if c.LameDuck == nil {
		return defaultLameDuck
	}
	return c.LameDuck.D()
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// ListenAddr returns the address to serve on (listen:, default
// 127.0.0.1:8080).
func (c *Config) ListenAddr() string { return or(c.Listen, "127.0.0.1:8080") }

// LoadOptions tune LoadConfig.
type LoadOptions struct {
	// LookupEnv resolves ${NAME} references. Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// LoadConfig reads, strictly decodes and validates a gateway file. Every
// problem is reported with file:line:col (a yamlfile.Errors); environment
// references are resolved, and an unset variable is an error naming the
// variable, never a value.
func LoadConfig(path string, o LoadOptions) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, data, o)
}

// ParseConfig is LoadConfig on bytes (file names the source in errors).
func ParseConfig(file string, data []byte, o LoadOptions) (*Config, error) {
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	var c Config
	doc, err := yamlfile.Decode(file, data, &c)
	var decodeErrs yamlfile.Errors
	if err != nil && (doc == nil || !errors.As(err, &decodeErrs)) {
		return nil, err
	}
	c.file = file // key files are read relative to it
	if es := doc.Settle(decodeErrs, c.validate(doc, o.LookupEnv)); len(es) > 0 {
		return nil, es
	}
	c.doc = doc
	return &c, nil
}

// validate checks everything LoadConfig promises and resolves secrets.
func (c *Config) validate(doc *yamlfile.Doc, lookup func(string) (string, bool)) yamlfile.Errors {
	var es yamlfile.Errors
	add := func(path, format string, args ...any) { es = append(es, doc.Errorf(path, format, args...)) }
	secret := func(path string, s *Secret) {
		if err := s.resolve(lookup); err != nil {
			add(path, "%v", err)
		}
	}

	if c.Version != ConfigVersion {
		add("version", "must be %d (got %d)", ConfigVersion, c.Version)
	}
	if c.Listen != "" {
		if err := checkListen(c.Listen); err != nil {
			add("listen", "%v", err)
		}
	}
	secret("admin.token", &c.Admin.Token)
	secret("state.url", &c.State.URL)
	c.State.validate(add)

	providers := map[string]bool{}
	if len(c.Providers) == 0 {
		add("providers", "at least one provider is required")
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		at := fmt.Sprintf("providers.%d", i)
		switch {
		case p.Name == "":
			add(at+".name", "required")
		case strings.Contains(p.Name, ":"):
			add(at+".name", "%q must not contain ':' (targets are written provider:model)", p.Name)
		case providers[p.Name]:
			add(at+".name", "duplicate provider %q", p.Name)
		}
		providers[p.Name] = true
		switch p.Kind {
		case KindOpenAI, KindAnthropic, KindGemini:
		case KindAzure, KindOpenAICompatible:
			if p.BaseURL == "" {
				add(at+".base_url", "required for kind %s", p.Kind)
			}
			if p.Kind == KindAzure && p.APIVersion == "" {
				add(at+".api_version", "required for kind azure (e.g. 2024-10-21)")
			}
		case "":
			add(at+".kind", "required (openai, anthropic, gemini, azure or openai_compatible)")
		default:
			add(at+".kind", "unknown kind %q (openai, anthropic, gemini, azure or openai_compatible)", p.Kind)
		}
		if p.BaseURL != "" {
			v, err := expand(p.BaseURL, lookup)
			if err != nil {
				add(at+".base_url", "%v", err)
			} else if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				add(at+".base_url", "must be an http or https URL")
			} else {
				p.BaseURL = v
			}
		}
		switch p.Protocol {
		case ProtocolAuto, ProtocolHTTP1, ProtocolH2C:
		default:
			add(at+".protocol", "unknown protocol %q (http1 or h2c; empty for automatic)", p.Protocol)
		}
		secret(at+".api_key", &p.APIKey)
		for k, v := range p.Headers {
			secret(at+".headers."+k, &v)
			p.Headers[k] = v
		}
	}

	if err := c.Config.Validate(); err != nil {
		var pes policy.Errors
		if errors.As(err, &pes) {
			for _, pe := range pes {
				add(pe.Field, "%s", pe.Msg)
			}
		} else {
			add("routes", "%v", err)
		}
	}
	for i, r := range c.Routes {
		for j, t := range r.Targets {
			if t.Provider != "" && !providers[t.Provider] {
				add(fmt.Sprintf("routes.%d.targets.%d.provider", i, j), "unknown provider %q (not in providers)", t.Provider)
			}
		}
	}

	switch c.Detectors.Action {
	case "", "demote", "open", "none":
	default:
		add("detectors.action", "%q is not demote, open or none", c.Detectors.Action)
	}
	if err := c.Detectors.DetectorConfig.Validate(); err != nil {
		add("detectors", "%v", err)
	}
	c.validateTrust(add, lookup)
	c.Tracing.validate(add, lookup)
	pes := c.Probes.validate(doc, add) // calls add: not inline in append
	es = append(es, pes...)
	// The fallbacks are checked only once the routes themselves are valid.
	c.Qualification.validate(c, doc, add, len(es) == 0)
	if c.Cache.MaxEntries < 0 && c.Cache.Exact {
		add("cache.exact", "exact caching needs a cache (max_entries is negative)")
	}
	if c.Idempotency.MaxEntries < 0 {
		add("idempotency.max_entries", "must not be negative")
	}
	for i, r := range c.Alerts.Rules {
		if err := r.Validate(); err != nil {
			var fe *alerts.FieldError
			if errors.As(err, &fe) {
				add(fmt.Sprintf("alerts.rules.%d.%s", i, fe.Field), "%s", fe.Msg)
			} else {
				add(fmt.Sprintf("alerts.rules.%d", i), "%v", err)
			}
		}
	}
	sinks := map[string]bool{}
	for i := range c.Alerts.Sinks {
		s := &c.Alerts.Sinks[i]
		at := fmt.Sprintf("alerts.sinks.%d", i)
		if s.Name == "" {
			add(at+".name", "required")
		} else if sinks[s.Name] {
			add(at+".name", "duplicate sink %q", s.Name)
		}
		sinks[s.Name] = true
		switch s.Kind {
		case "webhook":
			n := len(es)
			secret(at+".url", &s.URL)
			if u, err := url.Parse(s.URL.Value()); len(es) == n && (s.URL.IsZero() || err != nil || (u.Scheme != "http" && u.Scheme != "https")) {
				add(at+".url", "a webhook needs an http or https url")
			}
			for k, v := range s.Headers {
				secret(at+".headers."+k, &v)
				s.Headers[k] = v
			}
		case "log":
		default:
			add(at+".kind", "unknown sink kind %q (webhook or log)", s.Kind)
		}
		if s.Retries < 0 {
			add(at+".retries", "must not be negative")
		}
	}
	return es
}

// rules returns the alert rules in effect.
// InEffect are the alert rules in effect: the defaults (when on) first, then
// the configured ones. Both engines evaluate them in this order.
func (a *AlertsConfig) InEffect() []alerts.Rule {
	rs := a.Rules
	if a.Defaults {
		rs = append(alerts.DefaultRules(), rs...)
	}
	return rs
}

func (c *CacheConfig) ttl() time.Duration      { return or(c.TTL.D(), 10*time.Minute) }
func (c *CacheConfig) maxStale() time.Duration { return or(c.MaxStale.D(), 24*time.Hour) }
