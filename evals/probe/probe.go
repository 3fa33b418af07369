package probe

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

// Config tunes probing. Its zero value is usable: each zero field takes the
// default its comment states.
type Config struct {
	// MinInterval and MaxInterval bound the time between probes of a healthy
	// target; each interval is drawn uniformly between them. Defaults 30s, 60s.
	MinInterval yamlfile.Duration `yaml:"min_interval" json:"min_interval,omitempty"`
	MaxInterval yamlfile.Duration `yaml:"max_interval" json:"max_interval,omitempty"`
	// Failures is the number of consecutive failed probes that asks for the
	// target's breaker to open. Default 3.
	Failures int `yaml:"failures" json:"failures,omitempty"`
	// MaxBackoff caps the interval of a failing or rate-limited target.
	// Default 10m.
	MaxBackoff yamlfile.Duration `yaml:"max_backoff" json:"max_backoff,omitempty"`
	// Timeout bounds one probe (the shell applies it). Default 10s.
	Timeout yamlfile.Duration `yaml:"timeout" json:"timeout,omitempty"`
}

func (c Config) withDefaults() Config {
	def := func(d *yamlfile.Duration, v time.Duration) {
		if *d <= 0 {
			*d = yamlfile.Duration(v)
		}
	}
	def(&c.MinInterval, 30*time.Second)
	def(&c.MaxInterval, 60*time.Second)
	def(&c.MaxBackoff, 10*time.Minute)
	def(&c.Timeout, 10*time.Second)
	if c.Failures <= 0 {
		c.Failures = 3
	}
	return c
}

// Validate reports a configuration error naming the field.
func (c Config) Validate() error {
	if c.MinInterval < 0 || c.MaxInterval < 0 || c.MaxBackoff < 0 || c.Timeout < 0 {
		return errors.New("durations must not be negative")
	}
	if c.MinInterval > 0 && c.MaxInterval > 0 && c.MaxInterval < c.MinInterval {
		return fmt.Errorf("max_interval: %s is less than min_interval %s", c.MaxInterval, c.MinInterval)
	}
	if c.Failures < 0 {
		return fmt.Errorf("failures: %d is negative", c.Failures)
	}
	return nil
}

// Definition is one probe: the request to send and the checks its answer
// must pass.
type Definition struct {
	Name    string
	Request llm.Request
	Checks  []evals.Check
}

// Default returns the standard probe: ask for one known word and check that
// the answer contains it and finished normally.
func Default() Definition {
	zero := 0.0
	re, _ := evals.Regex(`(?i)\bpong\b`)
	return Definition{
		Name: "pong",
		Request: llm.Request{
			Messages: []llm.Message{
				{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("Reply with the single word pong and nothing else.")}},
			},
			MaxTokens:   16,
			Temperature: &zero,
		},
		Checks: []evals.Check{re.Named("says pong"), evals.FinishReason(llm.FinishStop)},
	}
}

// RequestFor returns the probe's request addressed to model.
func (d Definition) RequestFor(model string) *llm.Request {
	r := d.Request
	r.Model = model
	r.Messages = slices.Clone(d.Request.Messages)
	return &r
}

// Outcome is the judged result of one probe.
type Outcome struct {
	OK bool
	// RateLimited: the provider refused the probe for rate (429 or a
	// rate_limit error). It is not counted as a failure, but the next probe
	// waits at least RetryAfter.
	RateLimited bool
	RetryAfter  time.Duration
	Reason      string // why it failed
}

// Evaluate judges a probe's answer: err is the transport or provider error
// (an *llm.Error when the provider answered non-2xx), resp the response.
func (d Definition) Evaluate(resp *llm.Response, err error) Outcome {
	if err != nil {
		var le *llm.Error
		if errors.As(err, &le) {
			if le.Status == 429 || le.Type == llm.ErrRateLimit {
				return Outcome{RateLimited: true, RetryAfter: le.RetryAfter, Reason: le.Error()}
			}
		}
		return Outcome{Reason: err.Error()}
	}
	if resp == nil {
		return Outcome{Reason: "no response"}
	}
	for _, c := range d.Checks {
		if r := c.Run(resp); !r.Pass {
			return Outcome{Reason: r.Check + ": " + r.Reason}
		}
	}
	return Outcome{OK: true}
}

// ActionKind is what the caller must do after a probe result.
type ActionKind int

// Actions. There is deliberately no action that closes a breaker.
const (
	ActionNone        ActionKind = iota
	ActionOpenBreaker            // pass to policy Engine.Signal as "open breaker"
)

func (k ActionKind) String() string {
	if k == ActionOpenBreaker {
		return "open_breaker"
	}
	return "none"
}

// Action is the scheduler's answer to a probe result.
type Action struct {
	Kind     ActionKind
	Target   string
	Failures int    // consecutive failures so far
	Reason   string // the last failure's reason
}

// TargetState is the probe state of one target, for /admin/state.
type TargetState struct {
	Target      string    `json:"target"`
	Next        time.Time `json:"next"`
	InFlight    bool      `json:"in_flight"`
	Failures    int       `json:"failures"`     // consecutive failed probes
	RateLimited int       `json:"rate_limited"` // consecutive rate-limited probes
	LastReason  string    `json:"last_reason,omitempty"`
}

type state struct {
	next        time.Time
	inFlight    bool
	failures    int
	rateLimited int
	reason      string
}

// Scheduler decides when each target is probed. It is pure: the caller
// passes the time. It is not safe for concurrent use; the gateway guards it
// with its own lock.
type Scheduler struct {
	cfg     Config
	rnd     *rand.Rand
	targets map[string]*state
}

// NewScheduler returns a scheduler; rnd (seeded by the caller) draws the
// jitter.
func NewScheduler(cfg Config, rnd *rand.Rand) *Scheduler {
	return &Scheduler{cfg: cfg.withDefaults(), rnd: rnd, targets: make(map[string]*state)}
}

// Config returns the configuration in effect, defaults filled in.
func (s *Scheduler) Config() Config { return s.cfg }

// Add starts probing target; its first probe is due at a jittered point
// within one interval so that targets do not probe in lockstep. Adding a
// known target does nothing.
func (s *Scheduler) Add(now time.Time, target string) {
	if _, ok := s.targets[target]; ok {
		return
	}
	s.targets[target] = &state{next: now.Add(s.jitter(0, s.cfg.MaxInterval.D()))}
}

// Remove stops probing target.
func (s *Scheduler) Remove(target string) { delete(s.targets, target) }

// Due returns the targets whose probe is due at now, sorted, and marks them
// in flight: the caller must Report each one.
func (s *Scheduler) Due(now time.Time) []string {
	var out []string
	for t, st := range s.targets {
		if !st.inFlight && !st.next.After(now) {
			st.inFlight = true
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// Next returns when the earliest probe not in flight is due; false when none is.
func (s *Scheduler) Next() (time.Time, bool) {
	var best time.Time
	found := false
	for _, st := range s.targets {
		if st.inFlight {
			continue
		}
		if !found || st.next.Before(best) {
			best, found = st.next, true
		}
	}
	return best, found
}

// Report records the outcome of target's in-flight probe at now and
// schedules the next one. It returns ActionOpenBreaker when the failures
// reach Config.Failures (and again at every further multiple). A report for
// a target that is not in flight (removed, or already reported) is ignored.
func (s *Scheduler) Report(now time.Time, target string, o Outcome) Action {
	st := s.targets[target]
	if st == nil || !st.inFlight {
		return Action{Target: target}
	}
	st.inFlight = false
	a := Action{Target: target}
	switch {
	case o.OK:
		st.failures, st.rateLimited, st.reason = 0, 0, ""
		st.next = now.Add(s.interval(0))
	case o.RateLimited:
		st.rateLimited++
		st.reason = o.Reason
		wait := s.interval(st.rateLimited)
		if o.RetryAfter > wait {
			wait = o.RetryAfter
		}
		st.next = now.Add(wait)
	default:
		st.failures++
		st.rateLimited = 0
		st.reason = o.Reason
		// Before the threshold, keep the normal cadence so a dead target is
		// found within a few intervals; past it, back off.
		st.next = now.Add(s.interval(max(0, st.failures-s.cfg.Failures+1)))
		if st.failures%s.cfg.Failures == 0 {
			a.Kind = ActionOpenBreaker
		}
	}
	a.Failures, a.Reason = st.failures, st.reason
	return a
}

// State returns every target's probe state, sorted by target.
func (s *Scheduler) State() []TargetState {
	out := make([]TargetState, 0, len(s.targets))
	for t, st := range s.targets {
		out = append(out, TargetState{Target: t, Next: st.next, InFlight: st.inFlight,
			Failures: st.failures, RateLimited: st.rateLimited, LastReason: st.reason})
	}
	slices.SortFunc(out, func(a, b TargetState) int {
		if a.Target < b.Target {
			return -1
		}
		if a.Target > b.Target {
			return 1
		}
		return 0
	})
	return out
}

// interval draws the next interval: uniform in [MinInterval, MaxInterval],
// times 2^backoff, capped at MaxBackoff (the cap is jittered down by up to
// a tenth so that backed-off targets do not align).
func (s *Scheduler) interval(backoff int) time.Duration {
	d := s.jitter(s.cfg.MinInterval.D(), s.cfg.MaxInterval.D())
	capd := s.cfg.MaxBackoff.D()
	for range backoff {
		d *= 2
		if d >= capd {
			return capd - s.jitter(0, capd/10)
		}
	}
	return d
}

// jitter returns a duration uniform in [lo, hi].
func (s *Scheduler) jitter(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(s.rnd.Int64N(int64(hi-lo)+1))
}

// Spec is the YAML form of a probe definition, for configuration files:
//
//	probe:
//	  prompt: Reply with the single word pong and nothing else.
//	  max_tokens: 16
//	  checks:
//	    - {type: regex, pattern: '(?i)\bpong\b'}
//	    - {type: finish_reason, expect: [stop]}
type Spec struct {
	Name      string            `yaml:"name"`
	System    string            `yaml:"system"`
	Prompt    string            `yaml:"prompt"`
	MaxTokens int               `yaml:"max_tokens"`
	Checks    []evals.CheckSpec `yaml:"checks"`
}

// Definition compiles s, found at path in doc (for error positions). An
// empty prompt is an error; so is a probe without checks, since a probe that
// only looks at the status cannot see silent degradation.
func (s Spec) Definition(doc *yamlfile.Doc, path string) (Definition, error) {
	var errs yamlfile.Errors
	if strings.TrimSpace(s.Prompt) == "" {
		errs = append(errs, doc.Errorf(path+".prompt", "missing"))
	}
	if s.MaxTokens < 0 {
		errs = append(errs, doc.Errorf(path+".max_tokens", "%d is negative", s.MaxTokens))
	}
	if len(s.Checks) == 0 {
		errs = append(errs, doc.Errorf(path+".checks", "a probe needs at least one check on the content"))
	}
	d := Definition{Name: s.Name}
	if d.Name == "" {
		d.Name = "probe"
	}
	for i := range s.Checks {
		c, err := s.Checks[i].Compile(doc, fmt.Sprintf("%s.checks.%d", path, i), nil)
		if err != nil {
			var es yamlfile.Errors
			if errors.As(err, &es) {
				errs = append(errs, es...)
			} else {
				errs = append(errs, doc.Errorf(fmt.Sprintf("%s.checks.%d", path, i), "%v", err))
			}
			continue
		}
		d.Checks = append(d.Checks, c)
	}
	if err := errs.Err(); err != nil {
		return Definition{}, err
	}
	zero := 0.0
	d.Request = llm.Request{MaxTokens: s.MaxTokens, Temperature: &zero}
	if d.Request.MaxTokens == 0 {
		d.Request.MaxTokens = 16
	}
	if s.System != "" {
		d.Request.Messages = append(d.Request.Messages, llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart(s.System)}})
	}
	d.Request.Messages = append(d.Request.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(s.Prompt)}})
	return d, nil
}

// Event returns the probe.result event for a judged probe of target at now.
func Event(now time.Time, target string, o Outcome) events.Event {
	return events.Event{Time: now, Kind: events.ProbeResult, Target: target, OK: o.OK, Reason: o.Reason}
}
