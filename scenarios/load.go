package scenarios

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/evals/probe"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/promrules"
	"github.com/brownout-dev/brownout/scenarios/score"
	"github.com/brownout-dev/brownout/yamlfile"
)

// Load reads, strictly decodes and validates a scenario file, resolving the
// files it names (providers, gateway config, prompts) relative to its
// directory. Every problem is reported at once (a yamlfile.Errors wrapped with
// ErrInvalid), each with file:line:col.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, invalid(yamlfile.Errors{{File: path, Msg: "no such file" + nearbyFiles(path, path)}})
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return Parse(path, data)
}

// Parse is Load on bytes; file names the source in errors and anchors
// relative paths.
func Parse(file string, data []byte) (*Scenario, error) {
	s := &Scenario{file: file, source: string(data)}
	doc, err := yamlfile.Decode(file, data, s)
	var decodeErrs yamlfile.Errors
	if err != nil {
		// A value that fails to decode leaves the rest of the document
		// decoded: validate it too, so every problem is reported at once,
		// and let Settle drop what only follows from the rejected value.
		if doc == nil || !errors.As(err, &decodeErrs) {
			return nil, invalid(err)
		}
	}
	s.doc = doc
	withExamples(doc, decodeErrs)
	es := doc.Settle(decodeErrs, s.validate())
	if len(es) == 0 {
		s.Timeline = s.expandRepeats()
	}
	if len(es) > 0 {
		return nil, invalid(es)
	}
	return s, nil
}

// shapeExamples show the shape a field wants, for a value of the wrong shape
// ("want a mapping, got \"3s\""); got is the value written.
var shapeExamples = map[string]func(got string) string{
	"slo.ttft": func(got string) string {
		return fmt.Sprintf("slo: {ttft: {max: %s}} (every streamed request) or {ttft: {p95: %s}} (the window's 95th percentile)", orExample(got, "3s"), orExample(got, "3s"))
	},
	"slo.latency": func(got string) string {
		return fmt.Sprintf("slo: {latency: {max: %s}} (every non-streamed request) or {latency: {p95: %s}} (the window's 95th percentile)", orExample(got, "10s"), orExample(got, "10s"))
	},
	"slo":       func(string) string { return "slo: {success_rate: 99%, ttft: {max: 3s}}" },
	"providers": func(got string) string { return fmt.Sprintf("providers: {file: %s}", orFile(got, "providers.yaml")) },
	"gateway":   func(got string) string { return fmt.Sprintf("gateway: {config: %s}", orFile(got, "gateway.yaml")) },
	"traffic":   func(string) string { return "traffic: [{route: chat, rate: 20/s}]" },
}

// orExample is got when it reads as a duration, else def.
func orExample(got, def string) string {
	if _, err := time.ParseDuration(got); err == nil {
		return got
	}
	return def
}

// orFile is got when it reads as a YAML file name, else def.
func orFile(got, def string) string {
	if strings.HasSuffix(got, ".yaml") || strings.HasSuffix(got, ".yml") {
		return got
	}
	return def
}

// withExamples adds an example of the right shape to each decode error of
// a field in shapeExamples whose value has the wrong shape.
func withExamples(doc *yamlfile.Doc, es yamlfile.Errors) {
	for _, e := range es {
		ex, ok := shapeExamples[e.Field]
		if !ok || !strings.HasPrefix(e.Msg, "want a mapping, got") {
			continue
		}
		got := ""
		if n := doc.Node(e.Field); n != nil {
			got = n.Value
		}
		e.Msg += "; write " + ex(got)
	}
}

// invalidError wraps input errors so errors.Is(err, ErrInvalid) holds while
// the message stays the plain list of problems.
type invalidError struct{ err error }

func (e *invalidError) Error() string { return e.err.Error() }
func (e *invalidError) Unwrap() []error {
	return []error{ErrInvalid, e.err}
}

func invalid(err error) error { return &invalidError{err: err} }

func (s *Scenario) rel(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(s.file), p)
}

// environment is what a scenario resolves to: the mock providers, the
// gateway's policy and alert rules, and the set of targets.
type environment struct {
	providers []providerInfo
	targets   map[string]bool     // provider:model
	models    map[string][]string // provider -> models
	policy    policy.Config
	rules     []alerts.Rule
	// promRules are alerts.prometheus_rules, loaded (nil without).
	promRules *promrules.Rules
	// gatewayFile is the gateway config path (live in-process runs).
	gatewayFile string
	blackBox    bool
	primary     map[string]string // route -> primary target
	alertEvery  time.Duration
	prices      map[string]score.Price // the gateway config's, by routed target
	// mockPrices are the providers file's: the cost of a black box.
	mockPrices map[string]score.Price
	// detectors is the gateway config's detectors section (defaults for
	// inline routes).
	detectors gateway.DetectorsConfig
	// probes is the gateway config's probes section and probeDef the probe
	// it sends.
	probes   gateway.ProbesConfig
	probeDef probe.Definition
	// continuation is the gateway config's continuation section.
	continuation gateway.ContinuationConfig
	// storeTimeout is the gateway config's state.timeout (fleet runs).
	storeTimeout time.Duration
	// providersKnown is false when the providers are missing or failed to
	// load: every target then reads as unknown, and saying so for each one
	// would report one mistake many times.
	providersKnown bool
}

// checker validates a scenario in phases, in order: each phase may rely on
// what the earlier ones learned (the environment, the routes, the alert
// sinks, the step names) and adds every problem it finds.
type checker struct {
	s   *Scenario
	env *environment
	es  yamlfile.Errors
	// routes, sinks and steps are the names the routes, alerts.sinks and
	// timeline phases found.
	routes, sinks, steps map[string]bool
}

func (c *checker) add(path, format string, args ...any) {
	c.es = append(c.es, c.s.doc.Errorf(path, format, args...))
}

func (c *checker) addErr(err error) {
	var ye yamlfile.Errors
	var one *yamlfile.Error
	switch {
	case errors.As(err, &ye):
		c.es = append(c.es, ye...)
	case errors.As(err, &one):
		c.es = append(c.es, one)
	default:
		c.es = append(c.es, &yamlfile.Error{File: c.s.file, Msg: err.Error()})
	}
}

// validate checks the scenario, phase by phase, fills in defaults and its
// environment (s.env), and returns every problem found.
func (s *Scenario) validate() yamlfile.Errors {
	s.env = &environment{targets: map[string]bool{}, models: map[string][]string{}, primary: map[string]string{}, prices: map[string]score.Price{},
		mockPrices: map[string]score.Price{}}
	c := &checker{s: s, env: s.env}
	c.header()
	c.providers()
	c.gateway()
	c.routeTargets()
	c.traffic()
	c.alertSinks()
	c.timeline()
	c.stopWhen()
	c.expectations()
	s.checkMeasurable(s.env.blackBox, c.add)
	return c.es
}

// header checks the scenario's own fields: version, name, duration and the
// SLO (defaults filled in).
func (c *checker) header() {
	s, add := c.s, c.add
	if s.Version != Version {
		add("version", "must be %d (got %d)", Version, s.Version)
	}
	if s.Name == "" {
		add("name", "required")
	}
	if s.Duration <= 0 {
		add("duration", "required, e.g. \"10m\"")
	}
	if s.SLO.SuccessRate == 0 {
		s.SLO.SuccessRate = 0.99
	}
	if s.SLO.Window == 0 {
		s.SLO.Window = yamlfile.Duration(score.DefaultWindow)
	}
	for i, l := range []*LatencySpec{s.SLO.TTFT, s.SLO.Latency} {
		if l != nil && l.Max <= 0 && l.P95 <= 0 {
			add([]string{"slo.ttft", "slo.latency"}[i], "set max (every request) or p95 (the window's 95th percentile), e.g. {max: 2s}")
		}
	}
}

// providers checks the mock providers: a file or inline, loaded; the targets
// they serve.
func (c *checker) providers() {
	s, env, add, addErr := c.s, c.env, c.add, c.addErr
	hasInline := len(s.Providers.Inline) > 0
	switch {
	case s.Providers.File != "" && hasInline:
		add("providers", "set file or inline, not both")
	case s.Providers.File == "" && !hasInline:
		add("providers", "required: {file: providers.yaml} or {inline: [...]}")
	case s.Providers.File != "" && s.missingFile("providers.file", s.Providers.File, addErr):
	default:
		ps, err := s.loadProviders()
		if err != nil {
			addErr(err)
		}
		env.providersKnown = err == nil
		env.providers = ps
		for _, p := range ps {
			for _, m := range p.models {
				env.targets[p.name+":"+m] = true
				env.models[p.name] = append(env.models[p.name], m)
			}
			for _, m := range p.spec.Models {
				if m.Price != (mockprovider.Price{}) {
					env.mockPrices[p.name+":"+m.Name] = score.Price(m.Price)
				}
			}
		}
	}
}

// gateway checks the gateway under test: a config file, inline routes or a
// black box by URL, its headers, fleet and alert rules.
func (c *checker) gateway() {
	s, env, add, addErr := c.s, c.env, c.add, c.addErr
	g := &s.Gateway
	n := 0
	if g.Config != "" {
		n++
	}
	if len(g.Routes) > 0 {
		n++
	}
	if g.URL != "" {
		n++
	}
	switch {
	case n == 0:
		add("gateway", "required: {config: gateway.yaml}, inline {routes: ..., policy: ...}, or {url: ...} for a black box")
	case n > 1:
		add("gateway", "set one of config, routes or url")
	case g.Config != "":
		env.gatewayFile = s.rel(g.Config)
		if s.missingFile("gateway.config", g.Config, addErr) {
			break
		}
		gc, err := loadGatewayConfig(env.gatewayFile)
		if err != nil {
			addErr(err)
		} else {
			env.policy = gc.Config
			env.rules = gatewayRules(gc)
			env.alertEvery = gc.Alerts.EvaluateEvery.D()
			env.detectors = gc.Detectors
			env.storeTimeout = gc.State.Timeout.D()
			env.probes = gc.Probes
			env.continuation = gc.Continuation
			env.probeDef = probe.Default()
			if env.probes.Enabled && !reflect.DeepEqual(env.probes.Probe, probe.Spec{}) {
				// A probe of its own, compiled by the gateway's compiler
				// (probe.Spec.Definition).
				def, err := env.probes.Probe.Definition(&yamlfile.Doc{File: env.gatewayFile}, "probes.probe")
				if err != nil {
					add("gateway.config", "%s: %v", g.Config, err)
				}
				env.probeDef = def
			}
			if len(s.Alerts.Sinks) == 0 {
				// Without sinks of its own the game day delivers to the
				// gateway's (up unless a sink_down step says otherwise).
				for _, k := range gc.Alerts.Sinks {
					s.Alerts.Sinks = append(s.Alerts.Sinks, Sink{Name: k.Name, Kind: k.Kind})
				}
			}
		}
	case len(g.Routes) > 0:
		env.policy = policy.Config{Routes: g.Routes, Policy: g.Policy}
		if err := env.policy.Validate(); err != nil {
			var pe policy.Errors
			if errors.As(err, &pe) {
				for _, fe := range pe {
					add("gateway."+fe.Field, "%s", fe.Msg)
				}
			} else {
				add("gateway", "%v", err)
			}
		}
	case g.URL != "":
		env.blackBox = true
		if !strings.HasPrefix(g.URL, "http://") && !strings.HasPrefix(g.URL, "https://") {
			add("gateway.url", "must be an http:// or https:// URL")
		}
		if g.Primary != "" {
			if !env.targets[score.NormTarget(g.Primary)] && len(env.targets) > 0 {
				add("gateway.primary", "unknown target %q (not served by any provider)", g.Primary)
			}
		}
	}
	for _, name := range sortedKeys(g.Headers) {
		v := g.Headers[name]
		if msg := checkHeader(name, &v); msg != "" {
			add("gateway.headers."+name, "%s", msg)
		}
		g.Headers[name] = v
	}
	s.validateFleet(add)
	if g.Format != "" && g.Format != "openai" && g.Format != "anthropic" {
		add("gateway.format", "must be openai or anthropic")
	}
	env.rules = append(env.rules, g.AlertRules...)
	for i, r := range g.AlertRules {
		if err := r.Validate(); err != nil {
			add(fmt.Sprintf("gateway.alert_rules.%d", i), "%v", err)
		}
	}
}

// routeTargets checks the gateway's routes: every target served by a mock;
// prices and primaries for the scores.
func (c *checker) routeTargets() {
	s, env, add := c.s, c.env, c.add
	g := &c.s.Gateway
	routes := map[string]bool{}
	for _, r := range env.policy.Routes {
		routes[r.Name] = true
		best := -1
		for i := range r.Targets {
			t := &r.Targets[i]
			k := t.Key()
			env.prices[k] = score.Price{InputPerMTok: t.Price.InputPerMTok, OutputPerMTok: t.Price.OutputPerMTok, CachedInputPerMTok: t.Price.CachedInputPerMTok}
			if best < 0 || t.Priority < r.Targets[best].Priority {
				best = i
			}
			if len(env.targets) > 0 && !env.targets[k] {
				add("gateway", "route %q: target %s is not served by any mock provider", r.Name, k)
			}
		}
		if best >= 0 {
			env.primary[r.Name] = r.Targets[best].Key()
		}
	}
	if env.blackBox && g.Primary != "" {
		for _, t := range s.Traffic {
			env.primary[t.Route] = score.NormTarget(g.Primary)
		}
	}
	c.routes = routes
}

// traffic checks the traffic sources: route, rate, arrival, format, prompts
// (defaults filled in).
func (c *checker) traffic() {
	s, add, addErr := c.s, c.add, c.addErr
	g := &c.s.Gateway
	routes := c.routes
	if len(s.Traffic) == 0 {
		add("traffic", "at least one traffic source is required")
	}
	s.prompts = make([][]string, len(s.Traffic))
	for i := range s.Traffic {
		t := &s.Traffic[i]
		p := fmt.Sprintf("traffic.%d", i)
		if t.Route == "" {
			add(p+".route", "required")
		} else if len(routes) > 0 && !routes[t.Route] {
			add(p+".route", "unknown route %q (gateway routes: %s)", t.Route, strings.Join(sortedKeys(routes), ", "))
		}
		kinds := 0
		if t.Rate > 0 {
			kinds++
		}
		if t.Ramp != nil {
			kinds++
			if t.Ramp.Over <= 0 {
				add(p+".ramp.over", "required, e.g. \"5m\"")
			}
		}
		if len(t.Schedule) > 0 {
			kinds++
			for j := 1; j < len(t.Schedule); j++ {
				if t.Schedule[j].At <= t.Schedule[j-1].At {
					add(fmt.Sprintf("%s.schedule.%d.at", p, j), "schedule steps must be in increasing time order")
				}
			}
		}
		switch {
		case kinds == 0:
			add(p+".rate", "required: a rate (\"20/s\"), a ramp or a schedule")
		case kinds > 1:
			add(p+".rate", "set one of rate, ramp and schedule")
		case t.maxRate() <= 0:
			add(p+".rate", "must be above 0")
		}
		switch t.Arrival {
		case "":
			t.Arrival = "poisson"
		case "poisson", "uniform":
		default:
			add(p+".arrival", "must be poisson or uniform (got %q)", t.Arrival)
		}
		switch t.Format {
		case "":
			t.Format = "openai"
			if g.Format != "" {
				t.Format = g.Format
			}
		case "openai", "anthropic":
		default:
			add(p+".format", "must be openai or anthropic (got %q)", t.Format)
		}
		if t.PromptTokens == 0 {
			t.PromptTokens = 200
		}
		if t.PromptTokens < 0 {
			add(p+".prompt_tokens", "must not be negative")
		}
		if t.MaxTokens < 0 {
			add(p+".max_tokens", "must not be negative")
		}
		if t.ClientTimeout == 0 {
			t.ClientTimeout = yamlfile.Duration(60_000_000_000)
		}
		if t.Prompts.File != "" && len(t.Prompts.Inline) > 0 {
			add(p+".prompts", "set file or inline, not both")
		}
		if t.Prompts.File != "" && !s.missingFile(p+".prompts.file", t.Prompts.File, addErr) {
			ps, err := readPrompts(s.rel(t.Prompts.File))
			if err != nil {
				add(p+".prompts.file", "%v", err)
			}
			s.prompts[i] = ps
		} else {
			s.prompts[i] = t.Prompts.Inline
		}
	}
}

// alertSinks checks the alert sinks.
func (c *checker) alertSinks() {
	s, add := c.s, c.add
	sinks := map[string]bool{}
	for i, k := range s.Alerts.Sinks {
		p := fmt.Sprintf("alerts.sinks.%d", i)
		if k.Name == "" {
			add(p+".name", "required")
		} else if sinks[k.Name] {
			add(p+".name", "duplicate sink %q", k.Name)
		}
		sinks[k.Name] = true
		if k.Kind != "webhook" && k.Kind != "log" {
			add(p+".kind", "must be webhook or log (got %q)", k.Kind)
		}
	}
	c.sinks = sinks
}

// timeline checks the timeline steps: one action each, known targets, no two
// steps on one target at once.
func (c *checker) timeline() {
	s, env, add, addErr := c.s, c.env, c.add, c.addErr
	sinks := c.sinks
	steps := map[string]bool{}
	type span struct {
		step     int
		from, to int64
	}
	busy := map[string][]span{}
	for i := range s.Timeline {
		st := &s.Timeline[i]
		p := fmt.Sprintf("timeline.%d", i)
		if st.Name == "" {
			add(p+".name", "required")
		} else if steps[st.Name] {
			add(p+".name", "duplicate step name %q", st.Name)
		}
		steps[st.Name] = true
		if s.Duration > 0 && st.At >= s.Duration {
			add(p+".at", "%s is not before the end of the run (%s)", st.At, s.Duration)
		}
		var actions []string
		for _, a := range []struct {
			name string
			set  bool
		}{{"fault", st.Fault != nil}, {"kill", st.Kill != ""}, {"reload", st.Reload != nil}, {"sink_down", st.SinkDown != ""}, {"store", st.Store != nil}} {
			if a.set {
				actions = append(actions, a.name)
			}
		}
		switch len(actions) {
		case 0:
			add(p, "the step does nothing: set one of fault, kill, reload, sink_down and store")
			continue
		case 1:
		default:
			add(p, "the step sets %s: set exactly one of fault, kill, reload, sink_down and store", strings.Join(actions, " and "))
			continue
		}
		s.validateRepeat(st, p, add)
		if st.Relative != nil {
			s.resolveRelative(st, p, add)
		}
		var targets []string
		switch st.Kind() {
		case StepFault:
			if st.Target == "" {
				add(p+".target", "required: \"provider/model\" or \"provider\"")
			} else if ts, ok := s.expandTarget(st.Target); !ok && env.providersKnown {
				add(p+".target", "unknown target %q (known: %s)", st.Target, strings.Join(s.knownTargets(), ", "))
			} else {
				targets = ts
			}
			if err := st.Fault.Validate(); err != nil {
				var fe *faults.FieldError
				if errors.As(err, &fe) {
					add(p+".fault."+fe.Field, "%s", fe.Msg)
				} else {
					add(p+".fault", "%v", err)
				}
			}
			if st.Fault.Provider != "" || st.Fault.Model != "" {
				add(p+".fault", "the step's target picks the provider and model; remove provider/model from the fault")
			}
		case StepKill:
			if st.Target != "" {
				add(p+".target", "kill names its provider; remove target")
			}
			ts, ok := s.expandTarget(st.Kill)
			if strings.ContainsAny(st.Kill, "/:") || !ok && env.providersKnown {
				add(p+".kill", "unknown provider %q (known: %s)", st.Kill, strings.Join(sortedKeys(env.models), ", "))
			}
			targets = ts
		case StepReload:
			if env.blackBox {
				add(p+".reload", "cannot reload a black-box gateway")
			} else if st.Reload.Config == "" {
				add(p+".reload.config", "required")
			} else if s.missingFile(p+".reload.config", st.Reload.Config, addErr) {
				break
			} else if _, _, err := loadGateway(s.rel(st.Reload.Config)); err != nil && !errors.Is(err, os.ErrNotExist) {
				// A reload to an invalid file is a legitimate game day
				// (the gateway must reject it), so only a missing file is an error.
				_ = err
			} else if err != nil {
				add(p+".reload.config", "%v", err)
			}
		case StepSinkDown:
			if !sinks[st.SinkDown] {
				add(p+".sink_down", "unknown alert sink %q", st.SinkDown)
			}
		case StepStoreDown, StepStoreSlow:
			s.validateStoreStep(st, p, add)
		}
		for _, at := range s.starts(st) {
			rep := *st
			rep.At = yamlfile.Duration(at)
			from, to := int64(at), int64(s.stepEnd(&rep))
			if st.For <= 0 {
				to = int64(s.Duration) + 1
			}
			for _, t := range targets {
				for _, o := range busy[t] {
					if o.step != i && from < o.to && o.from < to {
						add(p+".at", "step %q overlaps step %q on %s", st.Name, s.Timeline[o.step].Name, t)
					}
				}
				busy[t] = append(busy[t], span{i, from, to})
			}
		}
	}
	c.steps = steps
}

// stopWhen checks the stop condition and the Prometheus rule files.
func (c *checker) stopWhen() {
	s, add, addErr := c.s, c.add, c.addErr
	if sw := s.StopWhen; sw != nil {
		switch {
		case sw.SuccessRateBelow <= 0 && sw.PromQL == "":
			add("stop_when.success_rate_below", "required, e.g. 50%% (or promql: an expression)")
		case sw.SuccessRateBelow > 0 && sw.PromQL != "":
			add("stop_when", "set success_rate_below or promql, not both")
		}
	}
	s.validatePromRules(add, addErr)
}

// expectations checks the expectations: named alerts, steps and targets that
// exist, well-formed bounds.
func (c *checker) expectations() {
	s, env, add := c.s, c.env, c.add
	sinks := c.sinks
	steps := c.steps
	e := &s.Expect
	for i, a := range e.Alerts {
		p := fmt.Sprintf("expect.alerts.%d", i)
		if a.Name == "" {
			add(p+".name", "required")
		} else if len(env.rules) > 0 && !slices.ContainsFunc(env.rules, func(r alerts.Rule) bool { return r.Name == a.Name }) {
			add(p+".name", "no alert rule named %q in the gateway config", a.Name)
		}
		for _, k := range []struct{ f, v string }{{"delivered_to", a.DeliveredTo}, {"undelivered_to", a.UndeliveredTo}} {
			if k.v != "" && !sinks[k.v] {
				add(p+"."+k.f, "unknown alert sink %q", k.v)
			}
		}
	}
	penalty := func(p string, b *score.PenaltyBound) {
		if b == nil {
			return
		}
		if f, msg := b.Check(); msg != "" {
			add(strings.TrimSuffix(p+".latency_penalty."+f, "."), "%s", msg)
		}
	}
	penalty("expect", e.LatencyPenalty)
	for _, name := range sortedKeys(e.Steps) {
		se := e.Steps[name]
		penalty("expect.steps."+name, se.LatencyPenalty)
		for _, k := range sortedKeys(se.Targets) {
			penalty("expect.steps."+name+".targets."+k, se.Targets[k].LatencyPenalty)
		}
	}
	for name, se := range e.Steps {
		p := "expect.steps." + name
		if !steps[name] {
			add(p, "no timeline step named %q", name)
			continue
		}
		if se.DetectedBy != "" && !validDetectedBy(se.DetectedBy) {
			add(p+".detected_by", "%s", badDetectedBy(se.DetectedBy))
		}
		faulted := s.stepTargets(name)
		for _, k := range sortedKeys(se.Targets) {
			if !slices.Contains(faulted, score.NormTarget(k)) {
				add(p+".targets."+k, "step %q does not fault %q (it faults: %s)", name, k, strings.Join(faulted, ", "))
			}
			if tb := se.Targets[k]; tb.DetectedBy != "" && !validDetectedBy(tb.DetectedBy) {
				add(p+".targets."+k+".detected_by", "%s", badDetectedBy(tb.DetectedBy))
			}
		}
	}
	for name := range e.Targets {
		if !env.targets[score.NormTarget(name)] && env.providersKnown {
			add("expect.targets."+name, "unknown target %q (known: %s)", name, strings.Join(s.knownTargets(), ", "))
		}
	}
}

// checkMeasurable reports every expectation on a score the scenario's
// configuration cannot measure (a black box's flaps, cost without prices):
// such an expectation could only pass on a figure nobody measured.
func (s *Scenario) checkMeasurable(blackBox bool, add func(path, format string, args ...any)) {
	env, e := s.env, &s.Expect
	primaryKnown := len(env.primary) > 0
	um := score.Unmeasurable(blackBox, primaryKnown, env.scorePrices())
	check := func(path, name string, set bool) {
		if why, ok := um[name]; ok && set {
			add(path, "%s cannot be measured in this game day: %s", name, why)
		}
	}
	check("expect.flaps", "flaps", e.Flaps != nil)
	check("expect.degraded", "degraded", e.Degraded != nil)
	check("expect.cost_multiplier", "cost_multiplier", e.CostMultiplier != nil)
	for i := range e.Alerts {
		check(fmt.Sprintf("expect.alerts.%d", i), "alerts", true)
	}
	bounds := func(p string, b *score.StepBounds) {
		check(p+".flaps", "flaps", b.Flaps != nil)
		check(p+".cost_multiplier", "cost_multiplier", b.CostMultiplier != nil)
		check(p+".detected_by", "detected_by", b.DetectedBy != "" && b.DetectedBy != "traffic_shift")
	}
	for _, name := range sortedKeys(e.Steps) {
		se := e.Steps[name]
		bounds("expect.steps."+name, &se.StepBounds)
		for _, k := range sortedKeys(se.Targets) {
			tb := se.Targets[k]
			bounds("expect.steps."+name+".targets."+k, &tb)
		}
	}
	for _, name := range sortedKeys(e.Targets) {
		check("expect.targets."+name+".flaps", "flaps", e.Targets[name].Flaps != nil)
	}
	if blackBox && e.Fleet != nil {
		// Fleet scores read each replica's events.
		add("expect.fleet", "fleet scores cannot be measured in this game day: %s", score.WhyBlackBoxEvents)
	}
}

// stepTargets returns the provider:model targets the named step faults or
// kills.
func (s *Scenario) stepTargets(name string) []string {
	var out []string
	for i := range s.Timeline {
		st := &s.Timeline[i]
		if st.Name != name {
			continue
		}
		t := st.Target
		if st.Kind() == StepKill {
			t = st.Kill
		}
		ks, _ := s.expandTarget(t)
		out = append(out, ks...)
	}
	return out
}

// validDetectedBy reports whether s names a detection source of
// FaultScore.DetectedBy, or "detector" for any detector.
func validDetectedBy(s string) bool {
	if alts := score.DetectionSources(s); len(alts) > 1 {
		for _, a := range alts {
			if !validDetectedBy(a) {
				return false
			}
		}
		return true
	}
	switch s {
	case "detector", "breaker", "health", "probe", "traffic_shift":
		return true
	}
	name, ok := strings.CutPrefix(s, "detector:")
	return ok && slices.Contains(evals.DetectorNames, name)
}

// detectionSources are the sources detected_by names besides
// "detector:<name>".
var detectionSources = []string{"detector", "breaker", "health", "probe", "traffic_shift"}

// badDetectedBy says why s is not a detection source, with what was likely
// meant: a detector's bare name ("json_invalid") for "detector:json_invalid",
// a misspelt source or detector for the one it is close to.
func badDetectedBy(s string) string {
	const sources = "detector:<name>, detector, breaker, health, probe, traffic_shift, or alternatives such as \"detector | health\""
	alts := score.DetectionSources(s)
	fixed := make([]string, 0, len(alts))
	for _, a := range alts {
		if validDetectedBy(a) {
			fixed = append(fixed, a)
			continue
		}
		name, isDetector := strings.CutPrefix(a, "detector:")
		var guess string
		switch {
		case slices.Contains(evals.DetectorNames, a):
			guess = "detector:" + a
		case isDetector:
			if g := yamlfile.Suggest(name, evals.DetectorNames); g != "" {
				guess = "detector:" + g
			} else {
				return fmt.Sprintf("%q is not a detection source: %q is not a detector (detectors: %s)", s, name, strings.Join(evals.DetectorNames, ", "))
			}
		default:
			if g := yamlfile.Suggest(a, detectionSources); g != "" {
				guess = g
			} else if g := yamlfile.Suggest(a, evals.DetectorNames); g != "" {
				guess = "detector:" + g
			}
		}
		if guess == "" {
			return fmt.Sprintf("%q is not a detection source (%s)", s, sources)
		}
		fixed = append(fixed, guess)
	}
	return fmt.Sprintf("%q is not a detection source (did you mean %q?)", s, strings.Join(fixed, " | "))
}

// expandTarget turns "provider/model" or "provider" into provider:model
// keys. A whole provider expands to the models the gateway routes to (all of
// its models when none is routed or the gateway is a black box).
func (s *Scenario) expandTarget(t string) ([]string, bool) {
	env := s.env
	if strings.ContainsAny(t, "/:") {
		k := score.NormTarget(t)
		return []string{k}, env.targets[k]
	}
	ms, ok := env.models[t]
	var all, routed []string
	for _, m := range ms {
		k := t + ":" + m
		all = append(all, k)
		if _, r := env.prices[k]; r {
			routed = append(routed, k)
		}
	}
	if len(routed) > 0 {
		return routed, ok
	}
	return all, ok
}

func (s *Scenario) knownTargets() []string {
	var out []string
	for k := range s.env.targets {
		p, m, _ := strings.Cut(k, ":")
		out = append(out, p+"/"+m)
	}
	slices.Sort(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkHeader checks a request header of the scenario and resolves its
// value from the environment; it returns what is wrong ("" for nothing),
// naming an unset variable but never a value.
func checkHeader(name string, v *gateway.Secret) string {
	if name == "" || strings.IndexFunc(name, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r)
	}) >= 0 {
		return "not a valid header name"
	}
	switch http.CanonicalHeaderKey(name) {
	case "X-Request-Id", "Content-Type", "Content-Length", "Host":
		return "the game day sets " + http.CanonicalHeaderKey(name) + " itself"
	}
	if err := v.Resolve(nil); err != nil {
		return err.Error()
	}
	if strings.ContainsAny(v.Value(), "\r\n\x00") {
		return "the value holds a line break or NUL"
	}
	return ""
}

// scorePrices are the prices scoring reads: the gateway config's, and the
// providers file's for the targets the config does not price (every target
// of a black box). Where both price a target, Warnings holds them to agree.
func (env *environment) scorePrices() map[string]score.Price {
	out := make(map[string]score.Price, len(env.prices)+len(env.mockPrices))
	for k, p := range env.mockPrices {
		out[k] = p
	}
	for k, p := range env.prices {
		out[k] = p
	}
	return out
}

// modelTarget returns the provider:model target an answer's model field
// names ("gpt-4o-mini", or "openai/gpt-4o-mini"), or "" when none or more
// than one target serves that model.
func (s *Scenario) modelTarget(model string) string {
	if model == "" {
		return ""
	}
	if k := score.NormTarget(model); s.env.targets[k] {
		return k
	}
	found := ""
	for p, ms := range s.env.models {
		if slices.Contains(ms, model) {
			if found != "" {
				return ""
			}
			found = p + ":" + model
		}
	}
	return found
}
