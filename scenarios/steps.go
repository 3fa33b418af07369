package scenarios

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
)

// validateRepeat checks a step's every and count and its name, which must
// leave '#' to the repeats.
func (s *Scenario) validateRepeat(st *Step, p string, add func(path, format string, args ...any)) {
	if strings.Contains(st.Name, "#") {
		add(p+".name", "%q: '#' is kept for the names of repeats (NAME#2)", st.Name)
	}
	switch {
	case st.Count < 0:
		add(p+".count", "must be 0 (until the run ends) or more")
	case st.Every < 0:
		add(p+".every", "must be positive, e.g. \"2m\"")
	case st.Count > 0 && st.Every == 0:
		add(p+".every", "required with count: how long after each start the step starts again")
	case st.Every > 0 && (st.For <= 0 || st.For >= st.Every):
		add(p+".for", "a repeating step needs a for shorter than its every (%s)", st.Every)
	}
}

// starts returns the offsets at which a step starts: At, then every Every
// (Count times, or until the run ends).
func (s *Scenario) starts(st *Step) []time.Duration {
	if st.Every <= 0 {
		return []time.Duration{st.At.D()}
	}
	var out []time.Duration
	for at := st.At.D(); at < s.Duration.D() && (st.Count == 0 || len(out) < st.Count); at += st.Every.D() {
		out = append(out, at)
	}
	return out
}

// expandRepeats returns the timeline with each repeating step written out:
// NAME, NAME#2, NAME#3...
func (s *Scenario) expandRepeats() []Step {
	var out []Step
	for i := range s.Timeline {
		st := &s.Timeline[i]
		for k, at := range s.starts(st) {
			rep := *st
			rep.At, rep.Every, rep.Count = yamlfile.Duration(at), 0, 0
			if k > 0 {
				rep.Name = fmt.Sprintf("%s#%d", st.Name, k+1)
			}
			out = append(out, rep)
		}
	}
	return out
}

// resolveRelative sets a fault step's relative knobs from each faulted
// model's base: its token rate or its typical time to first token.
func (s *Scenario) resolveRelative(st *Step, p string, add func(path, format string, args ...any)) {
	r := st.Relative
	switch {
	case st.Fault == nil:
		add(p+".relative", "relative knobs need a fault")
		return
	case r.TokenRate < 0 || r.TTFT < 0 || (r.TokenRate == 0 && r.TTFT == 0):
		add(p+".relative", "set token_rate or ttft to a positive factor, e.g. {token_rate: 0.5}")
		return
	case r.TokenRate > 0 && st.Fault.Kind != faults.KindTokenRate:
		add(p+".relative.token_rate", "needs a token_rate fault (got %s)", st.Fault.Kind)
		return
	case r.TTFT > 0 && st.Fault.Kind != faults.KindTTFT:
		add(p+".relative.ttft", "needs a ttft fault (got %s)", st.Fault.Kind)
		return
	}
	targets, _ := s.expandTarget(st.Target)
	st.resolved = map[string]faults.Spec{}
	for _, t := range targets {
		m, ok := s.modelSpec(t)
		spec := *st.Fault
		switch {
		case !ok:
			continue // an unknown target is reported with the step's target
		case r.TokenRate > 0:
			if m.TokensPerSecond <= 0 {
				add(p+".relative.token_rate", "%s has no base token rate (tokens_per_second) to scale", t)
				continue
			}
			spec.Rate = m.TokensPerSecond * r.TokenRate
		default:
			base := typical(m.TTFT)
			if base <= 0 {
				add(p+".relative.ttft", "%s has no base time to first token (ttft) to scale", t)
				continue
			}
			d := faults.Fixed(time.Duration(float64(base) * r.TTFT))
			spec.Delay, spec.Mode = &d, "set"
		}
		st.resolved[t] = spec
		// The step's own fault is validated as its first target's.
		if len(st.resolved) == 1 {
			*st.Fault = spec
		}
	}
}

// modelSpec returns the mock behaviour of a provider:model target.
func (s *Scenario) modelSpec(target string) (mockprovider.ModelSpec, bool) {
	prov, model, _ := strings.Cut(target, ":")
	for _, p := range s.env.providers {
		if p.name != prov {
			continue
		}
		for _, m := range p.spec.Models {
			if ok, _ := path.Match(m.Name, model); ok || m.Name == model {
				return m, true
			}
		}
	}
	return mockprovider.ModelSpec{}, false
}

// typical is a latency distribution's usual value: its fixed value, median
// or mean, or the middle of its range.
func typical(l faults.Latency) time.Duration {
	for _, d := range []yamlfile.Duration{l.Fixed, l.Median, l.Mean} {
		if d > 0 {
			return d.D()
		}
	}
	return (l.Min.D() + l.Max.D()) / 2
}
