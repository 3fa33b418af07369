package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/yamlfile"
)

// Config is the `routes:` and `policy:` part of the gateway YAML. Every field
// works at its zero value: the comment on each field gives the default that
// the zero value stands for.
type Config struct {
	Routes []Route  `yaml:"routes"`
	Policy Settings `yaml:"policy"`
}

// TierCached is the reserved tier name that asks the caller for a cached
// answer (Decision ServeCached). It has no targets.
const TierCached = "cached"

// DefaultTier is the tier of a target that names none.
const DefaultTier = "primary"

// Route maps a logical name that clients ask for ("chat", "summarize", a model
// alias) to its targets.
type Route struct {
	// Name is what clients put in the request's model field. Required.
	Name string `yaml:"name"`
	// AllowHints lets a client name a preferred target ("provider:model" or a
	// model name) with Request.Hint. Default false: hints are ignored.
	AllowHints bool `yaml:"allow_hints"`
	// Tiers orders the degradation tiers, best first: for example
	// [primary, equivalent, smaller, cached]. The honest error is always the
	// implicit last tier. "cached" (TierCached) asks the caller for a cached
	// answer labelled stale. Default: the targets' tiers in order of first
	// appearance.
	Tiers []string `yaml:"tiers"`
	// Structured marks every request on this route as needing structured
	// output, as if Request.Structured were set. Default false.
	Structured bool `yaml:"structured"`
	// FallbackOnContentFilter lets a content_filter outcome fail over to
	// another target. Default false: the provider's refusal is returned as is.
	FallbackOnContentFilter bool `yaml:"fallback_on_content_filter"`
	// StrictFallbacks sends a request that already failed on one target only
	// to targets with FallbackCandidate set. Default false: any target may
	// take a failed-over request.
	StrictFallbacks bool `yaml:"strict_fallbacks"`
	// Replay lets a target without prefill (or one that rejects the
	// prefill, ignores it, or fails the continuation probe) complete an
	// answer part of which already reached the client:
	// it is sent the original request, and only what follows an exact
	// repetition of what was sent is forwarded (Decision.Replay). Default
	// false: after a partial answer only targets with prefill are tried.
	Replay bool `yaml:"replay"`
	// Targets are the upstream models, at most 64. Required.
	Targets []Target `yaml:"targets"`
}

// Target is one upstream model of a route.
type Target struct {
	// Provider names the provider (as configured in the gateway). Required.
	Provider string `yaml:"provider"`
	// Model is the provider's model name. Required.
	Model string `yaml:"model"`
	// Priority orders targets within a tier: 0 is tried first. Default 0.
	Priority int `yaml:"priority"`
	// Weight shares traffic among targets of equal tier and priority
	// (weighted random from the engine's seeded source). Default 1.
	Weight int `yaml:"weight"`
	// Tier is the degradation tier the target belongs to. Default "primary".
	Tier string `yaml:"tier"`
	// FallbackCandidate marks a target qualified to take requests that
	// failed elsewhere (see Route.StrictFallbacks). Default false.
	FallbackCandidate bool `yaml:"fallback_candidate"`
	// ContextWindow is the model's context window in tokens; a request whose
	// PromptTokens exceed it skips the target. Default 0: unknown, never skipped.
	ContextWindow int `yaml:"context_window"`
	// Capabilities the model has. Default: when Streaming, Tools and
	// StructuredOutput are all false the target is assumed to have all three
	// (a target that declares nothing is not filtered out); Prefill defaults to false.
	Capabilities Capabilities `yaml:"capabilities"`
	// Price is used for the cost on attempt.end events. Default 0.
	Price Price `yaml:"price"`
	// MaxResponseBytes caps what the caller reads of one answer of this
	// target (a non-streamed body, or a stream's bytes): beyond it the
	// attempt fails as a malformed answer. The core only carries it.
	// Default 0: the caller's default (32 MiB for the gateway).
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// OverrideParams are request parameters the caller sets before sending to
	// this target (e.g. {max_tokens: 1024}). The core only carries them.
	OverrideParams map[string]any `yaml:"override_params"`
	// DropParams are request parameters the caller removes before sending to
	// this target (e.g. [logprobs]). The core only carries them; a target that
	// drops the parameter another target rejected may take a bad_request_param
	// fail-over.
	DropParams []string `yaml:"drop_params"`
	// Retry is the per-target retry policy.
	Retry Retry `yaml:"retry"`
	// FallbackStatusCodes are the HTTP statuses that fail over to the next
	// target. Default 401, 403, 404, 408, 429, 500, 502, 503, 529.
	FallbackStatusCodes []int `yaml:"fallback_status_codes"`
	// Timeouts bound each attempt on this target.
	Timeouts Timeouts `yaml:"timeouts"`
	// SLA cutoffs mark the target unhealthy when breached. A provider:model
	// used by several routes must have the same SLA in each.
	SLA SLA `yaml:"sla"`

	// key is Provider+":"+Model, kept by withDefaults so that the engine's
	// targets (Decision.Target) answer Key without building it each time.
	key string
}

// Key returns "provider:model", the key of breakers, health and events.
func (t *Target) Key() string {
	// The kept key is used only while it still spells Provider and Model:
	// a target copied and then changed, or built by hand, builds its own.
	p, k := len(t.Provider), t.key
	if len(k) == p+1+len(t.Model) && k[p] == ':' && k[:p] == t.Provider && k[p+1:] == t.Model {
		return k
	}
	return t.Provider + ":" + t.Model
}

// Capabilities says what a target supports.
type Capabilities struct {
	Streaming        bool `yaml:"streaming"`
	Tools            bool `yaml:"tools"`
	StructuredOutput bool `yaml:"structured_output"`
	// Prefill is assistant prefill: the target can continue a partial answer,
	// which mid-stream fail-over needs.
	Prefill bool `yaml:"prefill"`
}

func (c Capabilities) resolved() Capabilities {
	if !c.Streaming && !c.Tools && !c.StructuredOutput {
		c.Streaming, c.Tools, c.StructuredOutput = true, true, true
	}
	return c
}

// Price is the price per million tokens.
type Price struct {
	InputPerMTok       float64 `yaml:"input_per_mtok"`
	OutputPerMTok      float64 `yaml:"output_per_mtok"`
	CachedInputPerMTok float64 `yaml:"cached_input_per_mtok"`
}

// Retry is the retry policy on one target.
type Retry struct {
	// Attempts is the number of tries on this target, the first included.
	// Default 2 (one retry). 1 disables retries.
	Attempts int `yaml:"attempts"`
	// OnStatusCodes are the HTTP statuses retried on the same target.
	// Default 429, 500, 502, 503. Connection errors and resets are retried too.
	OnStatusCodes []int `yaml:"on_status_codes"`
	// Base is the backoff before the first retry: the sleep before retry n
	// (0-based) is uniform in [0, min(Cap, Base*2^n)) (full jitter). Default 200ms.
	Base yamlfile.Duration `yaml:"base"`
	// Cap bounds the backoff. Default 2s.
	Cap yamlfile.Duration `yaml:"cap"`
	// RetryAfterCap is the longest provider Retry-After honoured: a longer one
	// fails over instead of waiting. Default 5s.
	RetryAfterCap yamlfile.Duration `yaml:"retry_after_cap"`
}

// Timeouts bound one attempt. Send decisions carry them resolved and as
// absolute Deadlines; feed them to NewWatchdog for streams.
type Timeouts struct {
	// Connect bounds connection setup. Default 5s.
	Connect yamlfile.Duration `yaml:"connect"`
	// FirstToken bounds the time to the first token (or to the response
	// headers of a non-streamed request). Default 30s.
	FirstToken yamlfile.Duration `yaml:"first_token"`
	// Idle bounds the gap between two tokens of a stream. Default 30s.
	Idle yamlfile.Duration `yaml:"idle"`
	// Total bounds the whole attempt. Default 5m.
	Total yamlfile.Duration `yaml:"total"`
	// TokenRateFloor is the lowest acceptable output rate, tokens per second,
	// measured from the first token once Grace has passed. Default 0: off.
	TokenRateFloor float64 `yaml:"token_rate_floor"`
	// Grace is how long after the first token the rate floor starts to
	// apply. Default 5s.
	Grace yamlfile.Duration `yaml:"grace"`
}

// SLA holds the cutoffs that mark a target unhealthy for new requests when
// the mean over Window exceeds them.
type SLA struct {
	// FirstToken is the time-to-first-token cutoff. Default 0: off.
	FirstToken yamlfile.Duration `yaml:"first_token"`
	// TimePerOutputToken is the cutoff on (duration-TTFT)/(tokens-1). Default 0: off.
	TimePerOutputToken yamlfile.Duration `yaml:"time_per_output_token"`
	// Window is the averaging window. Default 1m.
	Window yamlfile.Duration `yaml:"window"`
	// MinSamples is the fewest samples in Window before a cutoff applies. Default 5.
	MinSamples int `yaml:"min_samples"`
}

// Settings are the engine-wide policies.
type Settings struct {
	// MaxAttempts caps upstream attempts per request across all targets
	// (retries and fail-overs). Default 3.
	MaxAttempts int `yaml:"max_attempts"`
	// RequestTimeout bounds a whole request; attempt deadlines never pass it.
	// Default 0: none.
	RequestTimeout yamlfile.Duration `yaml:"request_timeout"`
	// RetryAfter is the Retry-After of the honest error when no tier can
	// serve and no breaker is due to half-open sooner. Default 5s.
	RetryAfter yamlfile.Duration `yaml:"retry_after"`
	// RetryBudget limits same-target retries per route.
	RetryBudget Budget `yaml:"retry_budget"`
	// Breaker configures the provider:model circuit breakers.
	Breaker Breaker `yaml:"breaker"`
	// Health configures passive health (outlier detection).
	Health Health `yaml:"health"`
	// MaxMalformedEvents is how many unparseable events one streamed
	// attempt may skip (each a stream.malformed event) before it fails as
	// malformed_stream. Default 0 stands for 3; a negative value tolerates
	// none.
	MaxMalformedEvents int `yaml:"max_malformed_events"`
}

// DefaultMaxMalformedEvents is MaxMalformedEvents' default.
const DefaultMaxMalformedEvents = 3

// MalformedLimit returns how many unparseable events a streamed attempt may
// skip, defaults applied.
func (s *Settings) MalformedLimit() int {
	switch {
	case s.MaxMalformedEvents < 0:
		return 0
	case s.MaxMalformedEvents == 0:
		return DefaultMaxMalformedEvents
	}
	return s.MaxMalformedEvents
}

// Budget exhaustion behaviours.
const (
	// OnExhaustedFailover skips the retry and fails over to the next target.
	OnExhaustedFailover = "failover"
	// OnExhaustedFailFast fails the request at once.
	OnExhaustedFailFast = "fail_fast"
)

// Budget is a retry budget: same-target retries may not exceed Ratio of the
// route's requests over Window, plus a floor of MinRetries per Window so
// quiet routes can still retry.
type Budget struct {
	// Ratio of retries to requests. Default 10%.
	Ratio yamlfile.Percent `yaml:"ratio"`
	// MinRetries per Window always allowed. Default 3.
	MinRetries int `yaml:"min_retries"`
	// Window is the accounting window. Default 10s.
	Window yamlfile.Duration `yaml:"window"`
	// OnExhausted is "failover" (default) or "fail_fast".
	OnExhausted string `yaml:"on_exhausted"`
}

// Breaker configures the circuit breakers keyed provider:model.
type Breaker struct {
	// Window is the rolling window for the error rate. Default 60s.
	Window yamlfile.Duration `yaml:"window"`
	// ErrorRate opens the breaker: failures (hard errors and timeouts) over
	// all samples in Window. Default 25%.
	ErrorRate yamlfile.Percent `yaml:"error_rate"`
	// MinSamples in Window before the error rate can open it. Default 20.
	MinSamples int `yaml:"min_samples"`
	// ProbeFailures is the number of consecutive failed active probes that
	// open it. Default 3.
	ProbeFailures int `yaml:"probe_failures"`
	// OpenFor is how long it stays open the first time. Default 30s.
	OpenFor yamlfile.Duration `yaml:"open_for"`
	// MaxOpenFor caps the open duration, which doubles on each re-opening
	// (from half-open, or within ResetAfter of closing). Default 5m.
	MaxOpenFor yamlfile.Duration `yaml:"max_open_for"`
	// ResetAfter is how long it must stay closed before the open duration
	// falls back to OpenFor. Default 10m.
	ResetAfter yamlfile.Duration `yaml:"reset_after"`
	// HalfOpenRequests is the trickle of real requests admitted half-open;
	// all must succeed to close. Default 5.
	HalfOpenRequests int `yaml:"half_open_requests"`
	// TrialTimeout is how long a half-open breaker waits for the outcome of
	// its trials. A trial never observed (a caller that lost it) would
	// otherwise hold its slot forever; past the timeout the breaker opens
	// again. Default 10m.
	TrialTimeout yamlfile.Duration `yaml:"trial_timeout"`
}

// Health configures passive health: Failures within Window move a target to
// the end of the line until they age out; then its share of traffic ramps back
// linearly over Cooldown.
type Health struct {
	// Failures within Window that mark a target unhealthy, at most 1000. Default 2.
	Failures int `yaml:"failures"`
	// Window for counting failures; also how long a detector demotion lasts. Default 2m.
	Window yamlfile.Duration `yaml:"window"`
	// Cooldown is the ramp back after recovery. Default 2m.
	Cooldown yamlfile.Duration `yaml:"cooldown"`
}

// Defaults.
var (
	defaultOnStatusCodes       = []int{429, 500, 502, 503}
	defaultFallbackStatusCodes = []int{401, 403, 404, 408, 429, 500, 502, 503, 529}
)

func orDur(d yamlfile.Duration, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d.D()
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func orPct(p yamlfile.Percent, def float64) float64 {
	if p == 0 {
		return def
	}
	return p.F()
}

// withDefaults returns s with zero fields replaced by their defaults.
func (s Settings) withDefaults() Settings {
	s.MaxAttempts = orInt(s.MaxAttempts, 3)
	s.RetryAfter = yamlfile.Duration(orDur(s.RetryAfter, 5*time.Second))
	b := &s.RetryBudget
	b.Ratio = yamlfile.Percent(orPct(b.Ratio, 0.10))
	b.MinRetries = orInt(b.MinRetries, 3)
	b.Window = yamlfile.Duration(orDur(b.Window, 10*time.Second))
	if b.OnExhausted == "" {
		b.OnExhausted = OnExhaustedFailover
	}
	br := &s.Breaker
	br.Window = yamlfile.Duration(orDur(br.Window, 60*time.Second))
	br.ErrorRate = yamlfile.Percent(orPct(br.ErrorRate, 0.25))
	br.MinSamples = orInt(br.MinSamples, 20)
	br.ProbeFailures = orInt(br.ProbeFailures, 3)
	br.OpenFor = yamlfile.Duration(orDur(br.OpenFor, 30*time.Second))
	br.MaxOpenFor = yamlfile.Duration(orDur(br.MaxOpenFor, 5*time.Minute))
	br.ResetAfter = yamlfile.Duration(orDur(br.ResetAfter, 10*time.Minute))
	br.HalfOpenRequests = orInt(br.HalfOpenRequests, 5)
	br.TrialTimeout = yamlfile.Duration(orDur(br.TrialTimeout, 10*time.Minute))
	h := &s.Health
	h.Failures = orInt(h.Failures, 2)
	h.Window = yamlfile.Duration(orDur(h.Window, 2*time.Minute))
	h.Cooldown = yamlfile.Duration(orDur(h.Cooldown, 2*time.Minute))
	return s
}

// withDefaults returns t with zero fields replaced by their defaults.
func (t Target) withDefaults() Target {
	t.Weight = orInt(t.Weight, 1)
	if t.Tier == "" {
		t.Tier = DefaultTier
	}
	t.Capabilities = t.Capabilities.resolved()
	r := &t.Retry
	r.Attempts = orInt(r.Attempts, 2)
	if len(r.OnStatusCodes) == 0 {
		r.OnStatusCodes = defaultOnStatusCodes
	}
	r.Base = yamlfile.Duration(orDur(r.Base, 200*time.Millisecond))
	r.Cap = yamlfile.Duration(orDur(r.Cap, 2*time.Second))
	r.RetryAfterCap = yamlfile.Duration(orDur(r.RetryAfterCap, 5*time.Second))
	if len(t.FallbackStatusCodes) == 0 {
		t.FallbackStatusCodes = defaultFallbackStatusCodes
	}
	to := &t.Timeouts
	to.Connect = yamlfile.Duration(orDur(to.Connect, 5*time.Second))
	to.FirstToken = yamlfile.Duration(orDur(to.FirstToken, 30*time.Second))
	to.Idle = yamlfile.Duration(orDur(to.Idle, 30*time.Second))
	to.Total = yamlfile.Duration(orDur(to.Total, 5*time.Minute))
	to.Grace = yamlfile.Duration(orDur(to.Grace, 5*time.Second))
	s := &t.SLA
	s.Window = yamlfile.Duration(orDur(s.Window, time.Minute))
	s.MinSamples = orInt(s.MinSamples, 5)
	t.key = t.Provider + ":" + t.Model
	return t
}

// routeTiers returns the route's tier order, defaulted.
func (r *Route) routeTiers() []string {
	if len(r.Tiers) > 0 {
		return r.Tiers
	}
	var tiers []string
	for i := range r.Targets {
		t := r.Targets[i].Tier
		if t == "" {
			t = DefaultTier
		}
		if !contains(tiers, t) {
			tiers = append(tiers, t)
		}
	}
	return tiers
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// FieldError is one configuration problem. Field is the dotted path from the
// Config root in YAML keys ("routes.0.targets.1.retry.base"), so the gateway
// can point at file:line:col with yamlfile.Doc.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Errors is every problem Validate found.
type Errors []*FieldError

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// MaxTargets is the most targets a route may have.
const MaxTargets = 64

// MaxWeight is the largest target weight.
const MaxWeight = 1_000_000

// Validate checks the configuration's meaning and returns every problem as
// Errors, or nil.
func (c *Config) Validate() error {
	var es Errors
	add := func(field, format string, args ...any) {
		es = append(es, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	var neg []string // fields with a negative duration
	flushNeg := func() {
		slices.Sort(neg) // map order is random; keep the report stable
		for _, f := range neg {
			add(f, "must not be negative")
		}
		neg = neg[:0]
	}
	names := map[string]int{}
	slas := map[string]struct {
		sla  SLA
		path string
	}{}
	if len(c.Routes) == 0 {
		add("routes", "at least one route is required")
	}
	for ri := range c.Routes {
		r := &c.Routes[ri]
		rp := "routes." + strconv.Itoa(ri)
		if r.Name == "" {
			add(rp+".name", "required")
		} else if prev, ok := names[r.Name]; ok {
			add(rp+".name", "duplicate route %q (also routes.%d)", r.Name, prev)
		} else {
			names[r.Name] = ri
		}
		seenTier := map[string]bool{}
		for i, t := range r.Tiers {
			switch {
			case t == "":
				add(fmt.Sprintf("%s.tiers.%d", rp, i), "empty tier name")
			case seenTier[t]:
				add(fmt.Sprintf("%s.tiers.%d", rp, i), "duplicate tier %q", t)
			}
			seenTier[t] = true
		}
		if len(r.Targets) == 0 {
			add(rp+".targets", "at least one target is required")
		}
		if len(r.Targets) > MaxTargets {
			add(rp+".targets", "%d targets; at most %d", len(r.Targets), MaxTargets)
		}
		keys := map[string]int{}
		for ti := range r.Targets {
			t := &r.Targets[ti]
			tp := rp + ".targets." + strconv.Itoa(ti)
			if t.Provider == "" {
				add(tp+".provider", "required")
			} else if strings.Contains(t.Provider, ":") {
				add(tp+".provider", "must not contain ':'")
			}
			if t.Model == "" {
				add(tp+".model", "required")
			}
			if t.Provider != "" && t.Model != "" {
				k := t.Key()
				if prev, ok := keys[k]; ok {
					add(tp, "duplicate target %s (also targets.%d)", k, prev)
				}
				keys[k] = ti
				if prev, ok := slas[k]; ok && !reflect.DeepEqual(prev.sla, t.SLA) {
					add(tp+".sla", "%s is also used by %s with a different sla; breakers and health are per provider:model", k, prev.path)
				} else if !ok {
					slas[k] = struct {
						sla  SLA
						path string
					}{t.SLA, tp}
				}
			}
			if t.Priority < 0 {
				add(tp+".priority", "must not be negative")
			}
			if t.Weight < 0 || t.Weight > MaxWeight {
				add(tp+".weight", "%d is not in [0, %d]", t.Weight, MaxWeight)
			}
			if t.ContextWindow < 0 {
				add(tp+".context_window", "must not be negative")
			}
			if t.Tier == TierCached {
				add(tp+".tier", "%q is reserved for the cached answer tier", TierCached)
			} else if len(r.Tiers) > 0 {
				tier := t.Tier
				if tier == "" {
					tier = DefaultTier
				}
				if !seenTier[tier] {
					add(tp+".tier", "tier %q is not in the route's tiers %v", tier, r.Tiers)
				}
			}
			p := t.Price
			if p.InputPerMTok < 0 || p.OutputPerMTok < 0 || p.CachedInputPerMTok < 0 {
				add(tp+".price", "prices must not be negative")
			}
			if t.Retry.Attempts < 0 {
				add(tp+".retry.attempts", "must not be negative")
			}
			if t.MaxResponseBytes < 0 {
				add(tp+".max_response_bytes", "must not be negative")
			}
			for i, code := range t.Retry.OnStatusCodes {
				if code < 100 || code > 599 {
					add(fmt.Sprintf("%s.retry.on_status_codes.%d", tp, i), "%d is not an HTTP status", code)
				}
			}
			if t.Retry.Base > 0 && t.Retry.Cap > 0 && t.Retry.Base > t.Retry.Cap {
				add(tp+".retry.base", "base %s is above cap %s", t.Retry.Base, t.Retry.Cap)
			}
			for i, code := range t.FallbackStatusCodes {
				if code < 100 || code > 599 {
					add(fmt.Sprintf("%s.fallback_status_codes.%d", tp, i), "%d is not an HTTP status", code)
				}
			}
			for name, d := range map[string]yamlfile.Duration{
				"retry.base": t.Retry.Base, "retry.cap": t.Retry.Cap, "retry.retry_after_cap": t.Retry.RetryAfterCap,
				"timeouts.connect": t.Timeouts.Connect, "timeouts.first_token": t.Timeouts.FirstToken,
				"timeouts.idle": t.Timeouts.Idle, "timeouts.total": t.Timeouts.Total, "timeouts.grace": t.Timeouts.Grace,
				"sla.first_token": t.SLA.FirstToken, "sla.time_per_output_token": t.SLA.TimePerOutputToken, "sla.window": t.SLA.Window,
			} {
				if d < 0 {
					neg = append(neg, tp+"."+name)
				}
			}
			flushNeg()
			if t.Timeouts.TokenRateFloor < 0 {
				add(tp+".timeouts.token_rate_floor", "must not be negative")
			}
			if t.SLA.MinSamples < 0 {
				add(tp+".sla.min_samples", "must not be negative")
			}
		}
	}
	s := &c.Policy
	for name, d := range map[string]yamlfile.Duration{
		"request_timeout": s.RequestTimeout, "retry_after": s.RetryAfter, "retry_budget.window": s.RetryBudget.Window,
		"breaker.window": s.Breaker.Window, "breaker.open_for": s.Breaker.OpenFor, "breaker.max_open_for": s.Breaker.MaxOpenFor,
		"breaker.reset_after": s.Breaker.ResetAfter, "breaker.trial_timeout": s.Breaker.TrialTimeout,
		"health.window": s.Health.Window, "health.cooldown": s.Health.Cooldown,
	} {
		if d < 0 {
			neg = append(neg, "policy."+name)
		}
	}
	flushNeg()
	if s.MaxAttempts < 0 {
		add("policy.max_attempts", "must not be negative")
	}
	b := &s.RetryBudget
	if b.Ratio < 0 || b.Ratio > 1 {
		add("policy.retry_budget.ratio", "%s is not in [0%%, 100%%]", b.Ratio)
	}
	if b.MinRetries < 0 {
		add("policy.retry_budget.min_retries", "must not be negative")
	}
	switch b.OnExhausted {
	case "", OnExhaustedFailover, OnExhaustedFailFast:
	default:
		add("policy.retry_budget.on_exhausted", "%q is not %q or %q", b.OnExhausted, OnExhaustedFailover, OnExhaustedFailFast)
	}
	br := &s.Breaker
	if br.ErrorRate < 0 || br.ErrorRate > 1 {
		add("policy.breaker.error_rate", "%s is not in (0%%, 100%%]", br.ErrorRate)
	}
	if br.MinSamples < 0 {
		add("policy.breaker.min_samples", "must not be negative")
	}
	if br.ProbeFailures < 0 {
		add("policy.breaker.probe_failures", "must not be negative")
	}
	if br.HalfOpenRequests < 0 {
		add("policy.breaker.half_open_requests", "must not be negative")
	}
	if br.OpenFor > 0 && br.MaxOpenFor > 0 && br.OpenFor > br.MaxOpenFor {
		add("policy.breaker.open_for", "open_for %s is above max_open_for %s", br.OpenFor, br.MaxOpenFor)
	}
	if s.Health.Failures < 0 || s.Health.Failures > 1000 {
		add("policy.health.failures", "%d is not in [0, 1000]", s.Health.Failures)
	}
	if len(es) == 0 {
		return nil
	}
	return es
}
