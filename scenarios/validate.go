package scenarios

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/brownout-dev/brownout/evals/probe"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/scenarios/score"
	"github.com/brownout-dev/brownout/yamlfile"
)

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
