package gateway

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// latencyBuckets cover 5ms to 2 minutes (seconds).
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

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

// stateFunc returns the current engine for the scrape-time collector.
type stateFunc func() *policy.Engine

func newMetrics(state stateFunc, busDropped func() uint64) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), targets: map[string]*targetMetrics{}}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_requests_total",
		Help: "User requests by route, outcome (served, degraded, failed) and the tier that answered."}, []string{"route", "outcome", "tier"})
	m.requestDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "brownout_request_duration_seconds",
		Help: "Time from a request's arrival to its decision (served, failed), by route.", Buckets: latencyBuckets}, []string{"route"})
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_attempts_total",
		Help: "Upstream attempts by target (provider:model) and outcome class."}, []string{"target", "class"})
	m.fallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_fallbacks_total",
		Help: "Fail-overs from one target to another within a request."}, []string{"route", "from", "to"})
	m.ttft = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "brownout_time_to_first_token_seconds",
		Help: "Time to first token (or to the response) of upstream attempts, by target.", Buckets: latencyBuckets}, []string{"target"})
	m.attemptDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "brownout_attempt_duration_seconds",
		Help: "Duration of upstream attempts, by target.", Buckets: latencyBuckets}, []string{"target"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_tokens_total",
		Help: "Metered tokens by target and kind (input, output, cached_input), failed attempts included."}, []string{"target", "kind"})
	m.cost = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_cost_dollars_total",
		Help: "Spend by target from metered usage and the pricing table, in US dollars."}, []string{"target"})
	m.healthChanges = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_health_changes_total",
		Help: "Passive health transitions by target and new state."}, []string{"target", "to"})
	m.breakerTrans = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_breaker_transitions_total",
		Help: "Circuit breaker transitions by target and new state."}, []string{"target", "to"})
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
		Help: "Silent-degradation detector signals by target and detector."}, []string{"target", "detector"})
	m.probes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_probes_total",
		Help: "Active probes by target and result (ok, failed, rate_limited)."}, []string{"target", "result"})
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
		Help: "Unparseable upstream stream events skipped, by target (policy.max_malformed_events per attempt)."}, []string{"target"})
	m.continuations = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brownout_stream_continuations_total",
		Help: "Partial answers a fall-back completed, by route and how: continued, replayed or failed."}, []string{"route", "outcome"})
	for _, c := range []prometheus.Collector{m.malformed, m.continuations, m.requests, m.requestDur, m.attempts, m.fallbacks, m.ttft, m.attemptDur,
		m.tokens, m.cost, m.healthChanges, m.breakerTrans, m.budgetExh, m.inFlight, m.alertsFired, m.deliveries,
		m.reloads, m.cacheLookups, m.idemReplays, m.panics, m.signals, m.probes} {
		f(c)
	}
	f(&stateCollector{state: state, busDropped: busDropped})
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) target(key string) *targetMetrics {
	m.mu.RLock()
	t := m.targets[key]
	m.mu.RUnlock()
	if t != nil {
		return t
	}
	t = &targetMetrics{
		ttft: m.ttft.WithLabelValues(key), dur: m.attemptDur.WithLabelValues(key),
		in: m.tokens.WithLabelValues(key, "input"), out: m.tokens.WithLabelValues(key, "output"),
		cached: m.tokens.WithLabelValues(key, "cached_input"), cost: m.cost.WithLabelValues(key),
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
		m.attempts.WithLabelValues(target, ev.Class).Inc()
		t := m.target(target)
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
		m.healthChanges.WithLabelValues(ls.target(ev.Target), ev.To).Inc()
	case events.BreakerTransition:
		m.breakerTrans.WithLabelValues(ls.target(ev.Target), ev.To).Inc()
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
		m.malformed.WithLabelValues(ev.Target).Inc()
	case events.StreamContinuation:
		m.continuations.WithLabelValues(ev.Route, ev.Outcome).Inc()
	case events.DetectorSignal:
		m.signals.WithLabelValues(ls.target(ev.Target), ev.Name).Inc()
	case events.ProbeResult:
		result := "ok"
		switch {
		case ev.Class == probeRateLimited:
			result = probeRateLimited
		case !ev.OK:
			result = "failed"
		}
		m.probes.WithLabelValues(ls.target(ev.Target), result).Inc()
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
		"Circuit breaker state by target: 1 for the current state (closed, open, half_open), 0 otherwise.", []string{"target", "state"}, nil)
	descHealth = prometheus.NewDesc("brownout_target_health",
		"Passive health by target: 1 for the current state (healthy, unhealthy, recovering), 0 otherwise.", []string{"target", "state"}, nil)
	descBudgetRetries = prometheus.NewDesc("brownout_retry_budget_retries",
		"Retries spent in the route's current budget window.", []string{"route"}, nil)
	descBudgetAllowed = prometheus.NewDesc("brownout_retry_budget_allowed_retries",
		"Retries the route's budget allows in the current window.", []string{"route"}, nil)
	descPrefill = prometheus.NewDesc("brownout_target_prefill_verified",
		"The continuation probe's verdict on targets that declare prefill: 1 verified, 0 failed (no continuation from a prefill); absent until checked.", []string{"target"}, nil)
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
			ch <- prometheus.MustNewConstMetric(descBreaker, prometheus.GaugeValue, b(t.Breaker == s), t.Key, string(s))
		}
		for _, s := range []policy.HealthState{policy.Healthy, policy.Unhealthy, policy.Recovering} {
			ch <- prometheus.MustNewConstMetric(descHealth, prometheus.GaugeValue, b(t.Health == s), t.Key, string(s))
		}
		if t.Prefill != "" {
			ch <- prometheus.MustNewConstMetric(descPrefill, prometheus.GaugeValue, b(t.Prefill == policy.PrefillVerified), t.Key)
		}
	}
	for _, r := range st.Routes {
		ch <- prometheus.MustNewConstMetric(descBudgetRetries, prometheus.GaugeValue, float64(r.Retries), r.Name)
		ch <- prometheus.MustNewConstMetric(descBudgetAllowed, prometheus.GaugeValue, float64(r.Allowed), r.Name)
	}
}
