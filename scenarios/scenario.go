package scenarios

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/scenarios/score"
	"github.com/brownout-dev/brownout/yamlfile"
)

// Version is the scenario file version this package reads.
const Version = 1

// ErrInvalid is wrapped by every load and validation failure, so callers can
// tell input errors (exit 2) from run failures.
var ErrInvalid = errors.New("invalid scenario")

// Scenario is a game day as written in YAML.
type Scenario struct {
	Version     int               `yaml:"version"`
	Name        string            `yaml:"name"`
	Description string            `yaml:"description,omitempty"`
	Seed        uint64            `yaml:"seed"`
	Duration    yamlfile.Duration `yaml:"duration"`
	SLO         SLOSpec           `yaml:"slo"`
	Providers   Providers         `yaml:"providers"`
	Gateway     Gateway           `yaml:"gateway"`
	Traffic     []Traffic         `yaml:"traffic"`
	Timeline    []Step            `yaml:"timeline"`
	Alerts      Alerts            `yaml:"alerts,omitempty"`
	StopWhen    *StopWhen         `yaml:"stop_when,omitempty"`
	Expect      score.Expect      `yaml:"expect,omitempty"`

	// Filled by Load.
	file    string
	source  string
	doc     *yamlfile.Doc
	env     *environment
	prompts [][]string // per traffic entry
}

// SLOSpec is the user-visible success objective.
type SLOSpec struct {
	// SuccessRate is the share of requests that must succeed (served in full
	// or degraded) over every Window. Default 99%.
	SuccessRate yamlfile.Percent `yaml:"success_rate"`
	// Window is the sliding window. Default 10s.
	Window yamlfile.Duration `yaml:"window"`
	// Correctness: a corrupted answer served as success is not a good
	// request. Default true; false leaves correctness out of the SLO.
	Correctness *bool `yaml:"correctness,omitempty"`
	// TTFT bounds the time to first token of streamed requests, Latency
	// the total time of non-streamed ones: per request (max) or as the
	// window's 95th percentile (p95).
	TTFT    *LatencySpec `yaml:"ttft,omitempty"`
	Latency *LatencySpec `yaml:"latency,omitempty"`
}

// LatencySpec is a latency part of the SLO: {max: 2s} (every request) or
// {p95: 2s} (the window's 95th percentile).
type LatencySpec struct {
	Max yamlfile.Duration `yaml:"max,omitempty"`
	P95 yamlfile.Duration `yaml:"p95,omitempty"`
}

// slo is the scorer's form of the spec.
func (o *SLOSpec) slo() score.SLO {
	out := score.SLO{SuccessRate: o.SuccessRate.F(), Window: o.Window.D(), Correctness: o.Correctness == nil || *o.Correctness}
	if o.TTFT != nil {
		out.TTFT = score.LatencyObjective{Max: o.TTFT.Max.D(), P95: o.TTFT.P95.D()}
	}
	if o.Latency != nil {
		out.Latency = score.LatencyObjective{Max: o.Latency.Max.D(), P95: o.Latency.P95.D()}
	}
	return out
}

// Providers names the mock providers: a providers file (as `brownout mock
// -c` reads it) or the same entries inline.
type Providers struct {
	File   string                      `yaml:"file,omitempty"`
	Inline []mockprovider.ProviderSpec `yaml:"inline,omitempty"`
}

// Gateway names the gateway under test: a gateway config file (run
// in-process), its routes and policy inline, or the URL of a running gateway
// driven as a black box.
type Gateway struct {
	Config string          `yaml:"config,omitempty"`
	Routes []policy.Route  `yaml:"routes,omitempty"`
	Policy policy.Settings `yaml:"policy,omitempty"`
	// AlertRules adds alerting rules (the gateway config's own rules come first).
	AlertRules []alerts.Rule `yaml:"alert_rules,omitempty"`
	// URL of an external gateway (black box); Format is the wire format the
	// load generator speaks to it (openai, anthropic); Primary names the
	// primary target ("provider/model") for recovery scoring.
	URL     string `yaml:"url,omitempty"`
	Format  string `yaml:"format,omitempty"`
	Primary string `yaml:"primary,omitempty"`
	// Headers are sent with every user request (a routing config, a
	// virtual key). Values may read the environment ("Bearer ${KEY}"); they
	// are secrets: never written to results, events, reports or errors.
	Headers map[string]gateway.Secret `yaml:"headers,omitempty"`
	// Replicas runs the gateway as a fleet of that many replicas behind
	// the runner's round-robin balancer: user request n goes to replica
	// (n-1) mod Replicas. Default 1.
	Replicas int `yaml:"replicas,omitempty"`
	// State is where the replicas keep their breakers: memory (each its
	// own, the default) or redis (shared through one store, with one
	// fleet-wide half-open trial budget). Live runs start a redis-server;
	// the simulator models the store.
	State string `yaml:"state,omitempty"`
	// Propagation is, in the simulator, how long a store call takes until
	// its result is applied by every replica (the store's round trip and
	// its pub/sub). Default 1ms; only with state: redis.
	Propagation yamlfile.Duration `yaml:"propagation,omitempty"`
}

// State backends of Gateway.State.
const (
	StateMemory = "memory"
	StateRedis  = "redis"
)

// shared reports whether the gateway's replicas share their breakers.
func (g *Gateway) shared() bool { return g.State == StateRedis }

// Traffic is one open-loop load source.
type Traffic struct {
	Route string `yaml:"route"`
	// Exactly one of Rate, Ramp and Schedule.
	Rate     Rate             `yaml:"rate,omitempty"`
	Ramp     *Ramp            `yaml:"ramp,omitempty"`
	Schedule []RateStep       `yaml:"schedule,omitempty"`
	Arrival  string           `yaml:"arrival,omitempty"` // poisson (default) or uniform
	Stream   yamlfile.Percent `yaml:"stream,omitempty"`
	// Structured is the share of requests asking for JSON output.
	Structured yamlfile.Percent `yaml:"structured,omitempty"`
	// Tools is the share of requests that offer a tool (get_weather) and
	// require a call: the answer is a tool call, streamed as argument
	// deltas, which no fallback can continue once some were sent.
	Tools   yamlfile.Percent `yaml:"tools,omitempty"`
	Prompts Prompts          `yaml:"prompts,omitempty"`
	// PromptTokens is the size of generated prompts when no prompts are
	// given. Default 200.
	PromptTokens int `yaml:"prompt_tokens,omitempty"`
	// MaxTokens caps answers. Default 0: the model's own length.
	MaxTokens int `yaml:"max_tokens,omitempty"`
	// Temperature, when set, is sent with every request (a parameter some
	// targets reject).
	Temperature *float64 `yaml:"temperature,omitempty"`
	// ClientTimeout is when a client gives up on a request. Default 60s.
	ClientTimeout yamlfile.Duration `yaml:"client_timeout,omitempty"`
	// Format is the wire format clients speak in live runs: openai (default)
	// or anthropic.
	Format string `yaml:"format,omitempty"`
}

// Rate is requests per second, written "20/s", "600/m" or "3600/h".
type Rate float64

// ParseRate parses "20/s", "600/m", "36000/h" or a bare number (per second).
func ParseRate(s string) (Rate, error) {
	num, unit, found := strings.Cut(strings.TrimSpace(s), "/")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("invalid rate %q (use \"20/s\", \"600/m\" or \"3600/h\")", s)
	}
	if !found {
		return Rate(v), nil
	}
	switch strings.TrimSpace(unit) {
	case "s":
		return Rate(v), nil
	case "m", "min":
		return Rate(v / 60), nil
	case "h":
		return Rate(v / 3600), nil
	}
	return 0, fmt.Errorf("invalid rate unit in %q (use /s, /m or /h)", s)
}

// UnmarshalYAML parses a rate.
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return yamlfile.ValueError(n, "rate must be a string like \"20/s\"")
	}
	v, err := ParseRate(n.Value)
	if err != nil {
		return yamlfile.ValueError(n, "%v", err)
	}
	*r = v
	return nil
}

// MarshalYAML writes "N/s".
func (r Rate) MarshalYAML() (any, error) { return r.String(), nil }

func (r Rate) String() string { return strconv.FormatFloat(float64(r), 'f', -1, 64) + "/s" }

// Ramp raises the rate linearly from From to To over Over, then holds To.
type Ramp struct {
	From Rate              `yaml:"from"`
	To   Rate              `yaml:"to"`
	Over yamlfile.Duration `yaml:"over"`
}

// RateStep sets the rate from At on (a step function).
type RateStep struct {
	At   yamlfile.Duration `yaml:"at"`
	Rate Rate              `yaml:"rate"`
}

// RateAt returns the request rate at offset d from the start.
func (t *Traffic) RateAt(d time.Duration) float64 {
	switch {
	case t.Ramp != nil:
		if t.Ramp.Over <= 0 || d >= t.Ramp.Over.D() {
			return float64(t.Ramp.To)
		}
		f := float64(d) / float64(t.Ramp.Over)
		return float64(t.Ramp.From) + f*float64(t.Ramp.To-t.Ramp.From)
	case len(t.Schedule) > 0:
		r := 0.0
		for _, s := range t.Schedule {
			if d >= s.At.D() {
				r = float64(s.Rate)
			}
		}
		return r
	}
	return float64(t.Rate)
}

// maxRate is an upper bound of RateAt over the run (for thinning).
func (t *Traffic) maxRate() float64 {
	m := float64(t.Rate)
	if t.Ramp != nil {
		m = max(float64(t.Ramp.From), float64(t.Ramp.To))
	}
	for _, s := range t.Schedule {
		m = max(m, float64(s.Rate))
	}
	return m
}

// Prompts are the user messages traffic sends: a JSON lines file (each line
// {"prompt": "...", "system": "..."} or a JSON string) or inline strings.
type Prompts struct {
	File   string   `yaml:"file,omitempty"`
	Inline []string `yaml:"inline,omitempty"`
}

// Step is one timeline entry: at At, for For (0: until the end), do exactly
// one thing — inject Fault on Target, Kill a provider (its server goes away;
// restarted after For), Reload the gateway, or take an alert sink down.
type Step struct {
	Name string            `yaml:"name"`
	At   yamlfile.Duration `yaml:"at"`
	For  yamlfile.Duration `yaml:"for,omitempty"`
	// Target is "provider/model", or "provider" for every model it serves.
	Target   string       `yaml:"target,omitempty"`
	Fault    *faults.Spec `yaml:"fault,omitempty"`
	Kill     string       `yaml:"kill,omitempty"`
	Reload   *Reload      `yaml:"reload,omitempty"`
	SinkDown string       `yaml:"sink_down,omitempty"`
	// Store takes the fleet's state store down (store: down) or makes
	// every call to it slow (store: {slow: 200ms}) for For; it needs
	// gateway.state: redis.
	Store *StoreFault `yaml:"store,omitempty"`
	// Every repeats the step: it starts again Every after each start,
	// Count times in all (0: until the run ends). Each repeat is its own
	// step, named "NAME#2", "NAME#3"...; expectations on NAME apply to
	// every repeat.
	Every yamlfile.Duration `yaml:"every,omitempty"`
	Count int               `yaml:"count,omitempty"`
	// Relative sets a fault's knob as a factor of the faulted model's own
	// base (from the providers file): {token_rate: 0.5} halves its token
	// rate (a token_rate fault), {ttft: 20} sets its time to first token
	// to 20 times its usual (a ttft fault in set mode).
	Relative *Relative `yaml:"relative,omitempty"`

	// resolved holds the fault per target with its relative knobs set.
	resolved map[string]faults.Spec
}

// Relative are a fault's knobs as factors of the model's base.
type Relative struct {
	TokenRate float64 `yaml:"token_rate,omitempty"`
	TTFT      float64 `yaml:"ttft,omitempty"`
}

// StoreFault is what a store step does to the fleet's state store: Down
// makes it unreachable (connections cut and refused; what it holds stays),
// Slow delays everything it sends — answers and published changes — by
// that much (it still applies what it receives; a call whose answer comes
// later than the gateway's state.timeout fails). Written "down" or
// {slow: 200ms}.
type StoreFault struct {
	Down bool              `yaml:"down,omitempty"`
	Slow yamlfile.Duration `yaml:"slow,omitempty"`
}

// UnmarshalYAML reads "down" or {slow: 200ms}.
func (f *StoreFault) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Value != "down" {
			return yamlfile.ValueError(n, "write \"down\" or {slow: 200ms} (got %q)", n.Value)
		}
		*f = StoreFault{Down: true}
		return nil
	}
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Value != "down" && k.Value != "slow" {
			return yamlfile.ValueError(k, "unknown field (one of down, slow)")
		}
	}
	type plain StoreFault
	return n.Decode((*plain)(f))
}

// Reload swaps the gateway's config for another file.
type Reload struct {
	Config string `yaml:"config"`
}

// StepKind is what a timeline step does. Both engines switch on it, and
// each kind means the same in both (the differential test holds them to it).
type StepKind uint8

// Step kinds.
const (
	// StepFault injects Fault on Target's provider for For.
	StepFault StepKind = iota + 1
	// StepKill takes a provider's process away: streams in flight are cut
	// and connections refused until it restarts after For.
	StepKill
	// StepReload reloads the gateway with another config file (an invalid
	// one is rejected and the running one keeps serving).
	StepReload
	// StepSinkDown takes an alert sink down for For.
	StepSinkDown
	// StepStoreDown takes the fleet's state store away for For: every
	// replica falls back to its local breakers (state.degraded) and
	// resyncs when it is back.
	StepStoreDown
	// StepStoreSlow makes every store call and published change slower
	// by Store.Slow for For.
	StepStoreSlow
)

// StepKinds lists every step kind.
var StepKinds = []StepKind{StepFault, StepKill, StepReload, StepSinkDown, StepStoreDown, StepStoreSlow}

var stepKindNames = [...]string{"", "fault", "kill", "reload", "sink_down", "store_down", "store_slow"}

func (k StepKind) String() string {
	if int(k) < len(stepKindNames) {
		return stepKindNames[k]
	}
	return "step_kind(" + strconv.Itoa(int(k)) + ")"
}

// Kind returns what the step does; 0 when it sets none of its actions.
func (s *Step) Kind() StepKind {
	switch {
	case s.Fault != nil:
		return StepFault
	case s.Kill != "":
		return StepKill
	case s.Reload != nil:
		return StepReload
	case s.SinkDown != "":
		return StepSinkDown
	case s.Store != nil && s.Store.Down:
		return StepStoreDown
	case s.Store != nil:
		return StepStoreSlow
	}
	return 0
}

// faultFor returns the step's fault narrowed to one faulted target
// ("provider:model"), with an id naming step and target, as both engines
// install it on that target's provider.
func (s *Step) faultFor(target string) faults.Spec {
	prov, model, _ := strings.Cut(target, ":")
	spec := *s.Fault
	if r, ok := s.resolved[target]; ok {
		spec = r
	}
	spec.Provider, spec.Model = prov, model
	spec.ID = s.Name + "/" + target
	return spec
}

// Alerts configures where the gateway's alerts go, and the team's own
// Prometheus alerting rules to evaluate over the run's metrics.
type Alerts struct {
	Sinks []Sink `yaml:"sinks,omitempty"`
	// PrometheusRules are Prometheus rule files (paths relative to the
	// scenario file) whose alerting rules are evaluated over the gateway's
	// metrics: by the PromQL engine over scrapes in virtual time in sim
	// mode, by a real Prometheus server scraping the run in live mode.
	PrometheusRules []string `yaml:"prometheus_rules,omitempty"`
	// ScrapeInterval and EvaluationInterval are Prometheus' scrape and rule
	// evaluation intervals. Default 15s each.
	ScrapeInterval     yamlfile.Duration `yaml:"scrape_interval,omitempty"`
	EvaluationInterval yamlfile.Duration `yaml:"evaluation_interval,omitempty"`
	// PrometheusURL is the team's own Prometheus server (live mode): its
	// alerts and stop_when.promql are read from it instead of a server the
	// run starts. It must already scrape the gateway under test (a black
	// box at gateway.url) with the rules loaded; its evaluation interval is
	// EvaluationInterval. The URL may hold credentials: it is a secret,
	// never written to results, events, reports or errors. Simulated runs
	// ignore it.
	PrometheusURL gateway.Secret `yaml:"prometheus_url,omitempty"`
}

// Sink is an alert destination. In sim mode a sink is up unless a sink_down
// step holds it down; in live mode a webhook sink is a loopback receiver.
type Sink struct {
	Name string `yaml:"name"`
	Kind string `yaml:"kind"` // webhook or log
}

// StopWhen aborts a run when user impact passes a bound: the good-request
// rate (success, correctness and the per-request latency bounds of the SLO)
// of the requests that ended over the last For (checked every second, once
// For has passed) is below SuccessRateBelow. With an SLO of success alone,
// the good-request rate is the success rate.
//
// PromQL instead stops the run when a PromQL expression over the run's
// metrics returns a sample at every rule evaluation for For (at once when
// For is 0), evaluated as an alert condition is (alerts.prometheus_rules'
// scrapes and evaluation interval).
type StopWhen struct {
	SuccessRateBelow yamlfile.Percent  `yaml:"success_rate_below,omitempty"`
	PromQL           string            `yaml:"promql,omitempty"`
	For              yamlfile.Duration `yaml:"for"`
}

// File returns the path the scenario was loaded from.
func (s *Scenario) File() string { return s.file }

// End returns when a step ends, as an offset from the start (the run's
// duration when For is 0).
func (s *Scenario) stepEnd(st *Step) time.Duration {
	if st.For <= 0 {
		return s.Duration.D()
	}
	return min(st.At.D()+st.For.D(), s.Duration.D())
}
