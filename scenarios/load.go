package scenarios

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/evals/probe"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/gateway/policy"
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
