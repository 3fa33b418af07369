package faults

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/yamlfile"
	"gopkg.in/yaml.v3"
)

// Distribution names.
const (
	DistFixed     = "fixed"
	DistUniform   = "uniform"
	DistNormal    = "normal"
	DistLognormal = "lognormal"
)

// z99 is the standard normal quantile of 0.99.
const z99 = 2.3263478740408408

// Latency is a distribution of durations. In YAML it is either a plain
// duration ("300ms", fixed) or a mapping whose fields pick the distribution:
//
//	{fixed: 300ms}
//	{min: 100ms, max: 900ms}              # uniform
//	{mean: 400ms, stddev: 100ms}          # normal, clamped at 0 (and to min/max if given)
//	{median: 400ms, p99: 2s}              # lognormal
//
// An explicit `dist:` may be given; it must agree with the fields.
type Latency struct {
	Dist   string            `yaml:"dist,omitempty" json:"dist,omitempty"`
	Fixed  yamlfile.Duration `yaml:"fixed,omitempty" json:"fixed,omitempty"`
	Min    yamlfile.Duration `yaml:"min,omitempty" json:"min,omitempty"`
	Max    yamlfile.Duration `yaml:"max,omitempty" json:"max,omitempty"`
	Mean   yamlfile.Duration `yaml:"mean,omitempty" json:"mean,omitempty"`
	Stddev yamlfile.Duration `yaml:"stddev,omitempty" json:"stddev,omitempty"`
	Median yamlfile.Duration `yaml:"median,omitempty" json:"median,omitempty"`
	P99    yamlfile.Duration `yaml:"p99,omitempty" json:"p99,omitempty"`
}

// Fixed returns a distribution that always yields d.
func Fixed(d time.Duration) Latency {
	return Latency{Dist: DistFixed, Fixed: yamlfile.Duration(d)}
}

// latencyFields is Latency without methods, for decoding.
type latencyFields Latency

// UnmarshalYAML accepts a scalar duration or a mapping.
func (l *Latency) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var d yamlfile.Duration
		if err := n.Decode(&d); err != nil {
			return err
		}
		*l = Fixed(d.D())
		return nil
	}
	if err := CheckKeys(n, "dist", "fixed", "min", "max", "mean", "stddev", "median", "p99"); err != nil {
		return err
	}
	var f latencyFields
	if err := n.Decode(&f); err != nil {
		return err
	}
	*l = Latency(f)
	l.infer()
	return nil
}

// CheckKeys rejects mapping keys outside allowed, for custom YAML
// unmarshalers (which yaml.v3 does not decode strictly). The error carries
// the key's line and column.
func CheckKeys(n *yaml.Node, allowed ...string) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !contains(allowed, k.Value) {
			return &yamlfile.Error{Line: k.Line, Col: k.Column, Field: k.Value, Msg: "unknown field (one of " + strings.Join(allowed, ", ") + ")"}
		}
	}
	return nil
}

// UnmarshalJSON accepts a duration string or an object.
func (l *Latency) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q", s)
		}
		*l = Fixed(d)
		return nil
	}
	var f latencyFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*l = Latency(f)
	l.infer()
	return nil
}

// infer fills Dist from the fields when it is not given.
func (l *Latency) infer() {
	if l.Dist != "" {
		return
	}
	switch {
	case l.Median > 0 || l.P99 > 0:
		l.Dist = DistLognormal
	case l.Mean > 0 || l.Stddev > 0:
		l.Dist = DistNormal
	case l.Max > 0:
		l.Dist = DistUniform
	default:
		l.Dist = DistFixed
	}
}

// IsZero reports whether l is unset.
func (l Latency) IsZero() bool { return l == Latency{} }

// Validate checks the distribution's parameters; the error names the field.
func (l Latency) Validate() error {
	l.infer()
	switch l.Dist {
	case DistFixed:
	case DistUniform:
		if l.Max < l.Min {
			return &FieldError{Field: "max", Msg: fmt.Sprintf("must not be below min (%s)", l.Min)}
		}
	case DistNormal:
		if l.Mean <= 0 {
			return &FieldError{Field: "mean", Msg: "must be positive for a normal distribution"}
		}
	case DistLognormal:
		if l.Median <= 0 {
			return &FieldError{Field: "median", Msg: "must be positive for a lognormal distribution"}
		}
		if l.P99 < l.Median {
			return &FieldError{Field: "p99", Msg: fmt.Sprintf("must be at least the median (%s)", l.Median)}
		}
	default:
		return &FieldError{Field: "dist", Msg: fmt.Sprintf("unknown distribution %q (fixed, uniform, normal, lognormal)", l.Dist)}
	}
	return nil
}

// Sample draws one duration. A fixed distribution draws nothing from r.
func (l Latency) Sample(r *rand.Rand) time.Duration {
	s := l.Sampler()
	return s.Sample(r)
}

// Sampler is a Latency prepared for drawing: the distribution is resolved
// and its logarithms taken once. Its samples are Latency.Sample's, draw for
// draw.
type Sampler struct {
	dist              distKind
	fixed             time.Duration
	min, max          float64
	mean, stddev      float64
	lo, hi, mu, sigma float64
	zero              bool
}

// distKind is a distribution name, resolved once so that Sample switches
// on a small integer rather than comparing strings.
type distKind uint8

const (
	kindFixed distKind = iota // also an unknown name (Validate rejects it)
	kindUniform
	kindNormal
	kindLognormal
)

func kindOf(dist string) distKind {
	switch dist {
	case DistUniform:
		return kindUniform
	case DistNormal:
		return kindNormal
	case DistLognormal:
		return kindLognormal
	}
	return kindFixed
}

// Sampler prepares l for drawing many samples.
func (l Latency) Sampler() Sampler {
	zero := l.IsZero()
	l.infer()
	s := Sampler{dist: kindOf(l.Dist), fixed: l.Fixed.D(), min: float64(l.Min), max: float64(l.Max),
		mean: float64(l.Mean), stddev: float64(l.Stddev), zero: zero}
	switch l.Dist {
	case DistUniform:
		s.lo, s.hi = float64(l.Min), float64(l.Max)
	case DistLognormal:
		s.mu = math.Log(float64(l.Median))
		if l.P99 > l.Median {
			s.sigma = math.Log(float64(l.P99)/float64(l.Median)) / z99
		}
	}
	return s
}

// IsZero reports whether the Latency was unset (it always yields 0).
func (s *Sampler) IsZero() bool { return s.zero }

// Sample draws one duration. A fixed distribution draws nothing from r.
func (s *Sampler) Sample(r *rand.Rand) time.Duration {
	var v float64
	switch s.dist {
	case kindUniform:
		v = s.lo + r.Float64()*(s.hi-s.lo)
	case kindNormal:
		v = s.mean + r.NormFloat64()*s.stddev
	case kindLognormal:
		v = math.Exp(s.mu + s.sigma*r.NormFloat64())
	default:
		return s.fixed
	}
	if s.dist != kindUniform {
		if s.min > 0 && v < s.min {
			v = s.min
		}
		if s.max > 0 && v > s.max {
			v = s.max
		}
	}
	if v < 0 || math.IsNaN(v) {
		return 0
	}
	if v > math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return time.Duration(v)
}
