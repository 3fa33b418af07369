package gateway

import (
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// latencyBuckets cover 5ms to 2 minutes (seconds).
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// tokenBuckets and genaiDurationBuckets are the semantic conventions'
// advised bucket boundaries.
var (
	tokenBuckets         = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	genaiDurationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// genaiOperation is gen_ai.operation.name for every upstream call.
const genaiOperation = "chat"

// observeGenAI feeds the GenAI metrics from an attempt's end.
// Children are made here, not cached: switched off, no series exists.
func (m *metrics) observeGenAI(ls *labelSet, target string, ev *events.Event) {
	p, model := splitTarget(target)
	p = ls.genaiProvider(p)
	if ev.InputTokens > 0 {
		m.genaiTokens.WithLabelValues(genaiOperation, p, model, "input").Observe(float64(ev.InputTokens))
	}
	if ev.OutputTokens > 0 {
		m.genaiTokens.WithLabelValues(genaiOperation, p, model, "output").Observe(float64(ev.OutputTokens))
	}
	errType := ""
	if ev.Class != "" && ev.Class != "ok" {
		errType = ev.Class
	}
	m.genaiDuration.WithLabelValues(genaiOperation, p, model, errType).Observe(ev.Duration.Seconds())
}

// metrics are the gateway's Prometheus metrics, on a private registry. Most
// are fed by the event log (emit), the rest by the shell.
type metrics struct {
	reg *prometheus.Registry

	requests      *prometheus.CounterVec   // route, outcome, tier
	requestDur    *prometheus.HistogramVec // route
	attempts      *prometheus.CounterVec   // target, class
	fallbacks     *prometheus.CounterVec   // route, from, to
	ttft          *prometheus.HistogramVec // target
	attemptDur    *prometheus.HistogramVec // target
	tokens        *prometheus.CounterVec   // target, kind
	cost          *prometheus.CounterVec   // target
	healthChanges *prometheus.CounterVec   // target, to
	breakerTrans  *prometheus.CounterVec   // target, to
	budgetExh     *prometheus.CounterVec   // route
	inFlight      prometheus.Gauge
	alertsFired   *prometheus.CounterVec // rule, severity
	deliveries    *prometheus.CounterVec // sink, result
	reloads       *prometheus.CounterVec // result
	cacheLookups  *prometheus.CounterVec // result
	idemReplays   prometheus.Counter
	panics        prometheus.Counter
	signals       *prometheus.CounterVec // target, detector
	probes        *prometheus.CounterVec // target, result
	malformed     *prometheus.CounterVec // target
	continuations *prometheus.CounterVec // route, outcome
	// The OpenTelemetry GenAI client metrics (semantic conventions),
	// fed when genai says so (metrics.genai in the config).
	genaiTokens   *prometheus.HistogramVec // operation, provider, model, token type
	genaiDuration *prometheus.HistogramVec // operation, provider, model, error type
	genai         func() bool
	inbound       *prometheus.CounterVec // client, result
	clientCost    *prometheus.CounterVec // client
	clientTokens  *prometheus.CounterVec // client

	// labels returns the label values in effect (nil: unbounded, for tests
	// of the metrics alone); client-chosen names become "unknown".
	labels func() *labelSet

	// per-target children, cached: WithLabelValues hashes every call.
	mu      sync.RWMutex
	targets map[string]*targetMetrics
}

type targetMetrics struct {
	ttft, dur             prometheus.Observer
	in, out, cached, cost prometheus.Counter
}

// targetLabels name a target three ways: "target" (provider:model, as
// always) and, to group by either, "provider" and "model".
var targetLabels = []string{"target", "provider", "model"}

// splitTarget is a target label's provider and model ("unknown" for both
// when the target is not a configured one).
func splitTarget(target string) (provider, model string) {
	p, m, ok := strings.Cut(target, ":")
	if !ok {
		return target, target
	}
	return p, m
}

// withTarget is the label values of a target followed by rest.
func withTarget(target string, rest ...string) []string {
	p, m := splitTarget(target)
	return append([]string{target, p, m}, rest...)
}

// stateFunc returns the current engine for the scrape-time collector.
type stateFunc func() *policy.Engine

func newMetrics(state stateFunc, busDropped func() uint64) *metrics {
	m := newEventMetrics()
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	f(&stateCollector{state: state, busDropped: busDropped})
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// newEventMetrics are the metrics the event log feeds, and the shell's
// counters, on a registry of their own.
func newEventMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), targets: map[string]*targetMetrics{}}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_requests_total",
		Help: "User requests by route, outcome (served, degraded, failed) and the tier that answered."}, []string{"route", "outcome", "tier"})
	m.requestDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "brownout_request_duration_seconds",
		Help: "Time from a request's arrival to its decision (served, failed), by route.", Buckets: latencyBuckets}, []string{"route"})
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_attempts_total",
		Help: "Upstream attempts by target (provider:model) and outcome class."}, []string{"target", "provider", "model", "class"})
	m.fallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_fallbacks_total",
		Help: "Fail-overs from one target to another within a request."}, []string{"route", "from", "to"})
	m.ttft = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "brownout_time_to_first_token_seconds",
		Help: "Time to first token (or to the response) of upstream attempts, by target.", Buckets: latencyBuckets}, targetLabels)
	m.attemptDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "brownout_attempt_duration_seconds",
		Help: "Duration of upstream attempts, by target.", Buckets: latencyBuckets}, targetLabels)
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_tokens_total",
		Help: "Metered tokens by target and kind (input, output, cached_input), failed attempts included."}, []string{"target", "provider", "model", "kind"})
	m.cost = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_cost_dollars_total",
		Help: "Spend by target from metered usage and the pricing table, in US dollars."}, targetLabels)
	m.healthChanges = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_health_changes_total",
		Help: "Passive health transitions by target and new state."}, []string{"target", "provider", "model", "to"})
	m.breakerTrans = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_breaker_transitions_total",
		Help: "Circuit breaker transitions by target and new state."}, []string{"target", "provider", "model", "to"})
	m.budgetExh = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_retry_budget_exhausted_total",
		Help: "Retries refused because the route's retry budget was spent."}, []string{"route"})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{Name: "brownout_requests_in_flight",
		Help: "Requests being served."})
	m.alertsFired = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_alerts_fired_total",
		Help: "Alerts fired by rule and severity."}, []string{"rule", "severity"})
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_alert_deliveries_total",
		Help: "Alert deliveries by sink and result (ok, failed)."}, []string{"sink", "result"})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_config_reloads_total",
		Help: "Configuration reloads by result (ok, rejected)."}, []string{"result"})
	m.cacheLookups = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_cache_lookups_total",
		Help: "Response cache lookups by result (hit, stale, miss)."}, []string{"result"})
	m.idemReplays = prometheus.NewCounter(prometheus.CounterOpts{Name: "brownout_idempotent_replays_total",
		Help: "Responses replayed or shared for a repeated Idempotency-Key."})
	m.panics = prometheus.NewCounter(prometheus.CounterOpts{Name: "brownout_panics_recovered_total",
		Help: "Panics recovered while serving a request."})
	m.signals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_detector_signals_total",
		Help: "Silent-degradation detector signals by target and detector."}, []string{"target", "provider", "model", "detector"})
	m.probes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_probes_total",
		Help: "Active probes by target and result (ok, failed, rate_limited)."}, []string{"target", "provider", "model", "result"})
	m.inbound = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_inbound_requests_total",
		Help: "Inference requests at the trust boundary by client (a configured id, anonymous or unknown) and result (admitted, or why refused)."}, []string{"client", "result"})
	m.clientCost = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_client_cost_dollars_total",
		Help: "Spend by client from metered usage and the pricing table, in US dollars."}, []string{"client"})
	m.clientTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_client_tokens_total",
		Help: "Metered tokens (input and output, every attempt) by client."}, []string{"client"})
	f(m.inbound)
	f(m.clientCost)
	f(m.clientTokens)
	m.malformed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_stream_malformed_events_total",
		Help: "Unparseable upstream stream events skipped, by target (policy.max_malformed_events per attempt)."}, targetLabels)
	m.continuations = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_stream_continuations_total",
		Help: "Partial answers a fall-back completed, by route and how: continued, replayed or failed."}, []string{"route", "outcome"})
	// OpenTelemetry GenAI semantic conventions (gen_ai.client.token.usage,
	// gen_ai.client.operation.duration), by their Prometheus names: dots
	// become underscores, seconds a suffix. No series until fed.
	m.genaiTokens = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gen_ai_client_token_usage",
		Help:    "OpenTelemetry gen_ai.client.token.usage: tokens per upstream attempt, by token type (input, output).",
		Buckets: tokenBuckets}, []string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_token_type"})
	m.genaiDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gen_ai_client_operation_duration_seconds",
		Help:    "OpenTelemetry gen_ai.client.operation.duration: duration of upstream attempts; error_type set on failures.",
		Buckets: genaiDurationBuckets}, []string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "error_type"})
	for _, c := range []prometheus.Collector{m.genaiTokens, m.genaiDuration, m.malformed, m.continuations, m.requests, m.requestDur, m.attempts, m.fallbacks, m.ttft, m.attemptDur,
		m.tokens, m.cost, m.healthChanges, m.breakerTrans, m.budgetExh, m.inFlight, m.alertsFired, m.deliveries,
		m.reloads, m.cacheLookups, m.idemReplays, m.panics, m.signals, m.probes} {
		f(c)
	}
	return m
}

// EventMetrics are the gateway's metrics that its event log feeds, with
// the exact names and labels of its /metrics endpoint, for an engine that
// plays the gateway's events without a gateway: the simulator scrapes them
// in virtual time to evaluate a team's Prometheus rules. The series read at
// scrape time from the engine (brownout_breaker_state,
// brownout_target_health, retry budgets) and the Go and process collectors
// are not in it. Not safe for concurrent Emit.
type EventMetrics struct{ m *metrics }

// NewEventMetrics returns event-fed metrics with no series yet.
func NewEventMetrics() *EventMetrics { return &EventMetrics{newEventMetrics()} }

// Emit updates the metrics ev carries, as the gateway does for each event
// it emits.
func (e *EventMetrics) Emit(ev *events.Event) { e.m.emit(ev) }

// Gatherer is the registry to scrape.
func (e *EventMetrics) Gatherer() prometheus.Gatherer { return e.m.reg }

func (m *metrics) target(key string) *targetMetrics {
	m.mu.RLock()
	t := m.targets[key]
	m.mu.RUnlock()
	if t != nil {
		return t
	}
	p, model := splitTarget(key)
	t = &targetMetrics{
		ttft: m.ttft.WithLabelValues(key, p, model), dur: m.attemptDur.WithLabelValues(key, p, model),
		in: m.tokens.WithLabelValues(key, p, model, "input"), out: m.tokens.WithLabelValues(key, p, model, "output"),
		cached: m.tokens.WithLabelValues(key, p, model, "cached_input"), cost: m.cost.WithLabelValues(key, p, model),
	}
	m.mu.Lock()
	m.targets[key] = t
	m.mu.Unlock()
	return t
}

// emit updates the metrics an event carries.
func (m *metrics) emit(ev *events.Event) {
	var ls *labelSet
	if m.labels != nil {
		ls = m.labels()
	}
	switch ev.Kind {
	case events.AttemptEnd:
		target := ls.target(ev.Target)
		m.attempts.WithLabelValues(withTarget(target, ev.Class)...).Inc()
		t := m.target(target)
		if m.genai != nil && m.genai() {
			m.observeGenAI(ls, target, ev)
		}
		if ev.TTFT > 0 {
			t.ttft.Observe(ev.TTFT.Seconds())
		}
		t.dur.Observe(ev.Duration.Seconds())
		t.in.Add(float64(ev.InputTokens))
		t.out.Add(float64(ev.OutputTokens))
		t.cached.Add(float64(ev.CachedTokens))
		t.cost.Add(ev.Cost)
		if ev.Client != "" {
			c := ls.client(ev.Client)
			m.clientCost.WithLabelValues(c).Add(ev.Cost)
			m.clientTokens.WithLabelValues(c).Add(float64(ev.InputTokens + ev.OutputTokens))
		}
	case events.RequestEnd:
		tier := ev.Tier
		if tier == "" {
			tier = "none"
		}
		route := ls.route(ev.Route)
		m.requests.WithLabelValues(route, ev.Outcome, tier).Inc()
		m.requestDur.WithLabelValues(route).Observe(ev.Duration.Seconds())
	case events.HealthChange:
		m.healthChanges.WithLabelValues(withTarget(ls.target(ev.Target), ev.To)...).Inc()
	case events.BreakerTransition:
		m.breakerTrans.WithLabelValues(withTarget(ls.target(ev.Target), ev.To)...).Inc()
	case events.BudgetExhausted:
		m.budgetExh.WithLabelValues(ls.route(ev.Route)).Inc()
	case events.AlertFired:
		m.alertsFired.WithLabelValues(ev.Name, ev.Severity).Inc()
	case events.AlertDelivered:
		result := "ok"
		if !ev.OK {
			result = "failed"
		}
		m.deliveries.WithLabelValues(ev.Sink, result).Inc()
	case events.ConfigReload:
		result := "ok"
		if !ev.OK {
			result = "rejected"
		}
		m.reloads.WithLabelValues(result).Inc()
	case events.StreamMalformed:
		m.malformed.WithLabelValues(withTarget(ls.target(ev.Target))...).Inc()
	case events.StreamContinuation:
		m.continuations.WithLabelValues(ev.Route, ev.Outcome).Inc()
	case events.DetectorSignal:
		m.signals.WithLabelValues(withTarget(ls.target(ev.Target), ev.Name)...).Inc()
	case events.ProbeResult:
		result := "ok"
		switch {
		case ev.Class == probeRateLimited:
			result = probeRateLimited
		case !ev.OK:
			result = "failed"
		}
		m.probes.WithLabelValues(withTarget(ls.target(ev.Target), result)...).Inc()
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// stateCollector reads breaker states and retry budgets from the engine at
// scrape time, so they are right after a reload too.
type stateCollector struct {
	state      stateFunc
	busDropped func() uint64
}

var (
	descBreaker = prometheus.NewDesc("brownout_breaker_state",
		"Circuit breaker state by target: 1 for the current state (closed, open, half_open), 0 otherwise.", []string{"target", "provider", "model", "state"}, nil)
	descHealth = prometheus.NewDesc("brownout_target_health",
		"Passive health by target: 1 for the current state (healthy, unhealthy, recovering), 0 otherwise.", []string{"target", "provider", "model", "state"}, nil)
	descBudgetRetries = prometheus.NewDesc("brownout_retry_budget_retries",
		"Retries spent in the route's current budget window.", []string{"route"}, nil)
	descBudgetAllowed = prometheus.NewDesc("brownout_retry_budget_allowed_retries",
		"Retries the route's budget allows in the current window.", []string{"route"}, nil)
	descPrefill = prometheus.NewDesc("brownout_target_prefill_verified",
		"The continuation probe's verdict on targets that declare prefill: 1 verified, 0 failed (no continuation from a prefill); absent until checked.", targetLabels, nil)
	descDropped = prometheus.NewDesc("brownout_events_dropped_total",
		"Events slow /admin/events subscribers lost.", nil, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descBreaker
	ch <- descHealth
	ch <- descBudgetRetries
	ch <- descBudgetAllowed
	ch <- descDropped
	ch <- descPrefill
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(c.busDropped()))
	e := c.state()
	if e == nil {
		return
	}
	st := e.State()
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	for _, t := range st.Targets {
		for _, s := range []policy.BreakerState{policy.Closed, policy.Open, policy.HalfOpen} {
			ch <- prometheus.MustNewConstMetric(descBreaker, prometheus.GaugeValue, b(t.Breaker == s), withTarget(t.Key, string(s))...)
		}
		for _, s := range []policy.HealthState{policy.Healthy, policy.Unhealthy, policy.Recovering} {
			ch <- prometheus.MustNewConstMetric(descHealth, prometheus.GaugeValue, b(t.Health == s), withTarget(t.Key, string(s))...)
		}
		if t.Prefill != "" {
			ch <- prometheus.MustNewConstMetric(descPrefill, prometheus.GaugeValue, b(t.Prefill == policy.PrefillVerified), withTarget(t.Key)...)
		}
	}
	for _, r := range st.Routes {
		ch <- prometheus.MustNewConstMetric(descBudgetRetries, prometheus.GaugeValue, float64(r.Retries), r.Name)
		ch <- prometheus.MustNewConstMetric(descBudgetAllowed, prometheus.GaugeValue, float64(r.Allowed), r.Name)
	}
}
