package faults

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

// Kind names a fault kind.
type Kind string

// The fault kinds, one file each in this package.
const (
	KindAuthFailure          Kind = "auth_failure"
	KindRejectParam          Kind = "reject_param"
	KindContextLength        Kind = "context_length"
	KindHTTPError            Kind = "http_error"
	KindReset                Kind = "reset"
	KindNoResponse           Kind = "no_response"
	KindRefusal              Kind = "refusal"
	KindContentFilter        Kind = "content_filter"
	KindQualityDrop          Kind = "quality_drop"
	KindMalformedJSONContent Kind = "malformed_json_content"
	KindEmptyToolArgs        Kind = "empty_tool_args"
	KindTruncate             Kind = "truncate"
	KindTokenRate            Kind = "token_rate"
	KindTTFT                 Kind = "ttft"
	KindSlowHeaders          Kind = "slow_headers"
	KindStall                Kind = "stall"
	KindCut                  Kind = "cut"
	KindMalformedChunk       Kind = "malformed_chunk"
	KindMissingDone          Kind = "missing_done"
)

// Spec is one fault as written in YAML or posted to the control API:
//
//	{kind: http_error, status: 429, retry_after: 2s, probability: 50%, model: gpt-4o}
//
// Kind picks the fault; the parameters it accepts are listed in Kinds; the
// Selector fields (inline) pick the requests it applies to. Setting a
// parameter that the kind does not use is an error.
type Spec struct {
	Kind Kind `yaml:"kind" json:"kind"`
	// ID names the fault for removal; assigned when empty.
	ID string `yaml:"id,omitempty" json:"id,omitempty"`

	// Status is the HTTP status of http_error (default 500).
	Status int `yaml:"status,omitempty" json:"status,omitempty"`
	// RetryAfter is sent as Retry-After by http_error.
	RetryAfter yamlfile.Duration `yaml:"retry_after,omitempty" json:"retry_after,omitempty"`
	// Message replaces the provider-shaped error message (error kinds).
	Message string `yaml:"message,omitempty" json:"message,omitempty"`
	// ErrorType overrides the normalized type of http_error (default from the status).
	ErrorType llm.ErrorType `yaml:"error_type,omitempty" json:"error_type,omitempty"`
	// Delay is the added or set latency of ttft and slow_headers.
	Delay *Latency `yaml:"delay,omitempty" json:"delay,omitempty"`
	// Mode is "add" (default) or "set" for ttft.
	Mode string `yaml:"mode,omitempty" json:"mode,omitempty"`
	// Rate is tokens per second for token_rate.
	Rate float64 `yaml:"rate,omitempty" json:"rate,omitempty"`
	// Jitter varies each token gap of token_rate by up to ±Jitter.
	Jitter yamlfile.Percent `yaml:"jitter,omitempty" json:"jitter,omitempty"`
	// After is the number of tokens sent before stall, cut, an output
	// content_filter or an in-band http_error takes effect.
	After *int `yaml:"after,omitempty" json:"after,omitempty"`
	// For is how long no_response holds and stall pauses.
	For yamlfile.Duration `yaml:"for,omitempty" json:"for,omitempty"`
	// Close makes stall close the connection instead of resuming.
	Close bool `yaml:"close,omitempty" json:"close,omitempty"`
	// At is the token count of truncate, or the token event index of malformed_chunk.
	At *int `yaml:"at,omitempty" json:"at,omitempty"`
	// Param is the request parameter reject_param refuses (default "temperature").
	Param string `yaml:"param,omitempty" json:"param,omitempty"`
	// Text is the refusal text.
	Text string `yaml:"text,omitempty" json:"text,omitempty"`
	// Window is the context window context_length enforces; 0 rejects every request.
	Window int `yaml:"window,omitempty" json:"window,omitempty"`
	// Stage is "output" (default: the answer stops with finish reason
	// content_filter) or "prompt" (400 content_filter) for content_filter.
	Stage string `yaml:"stage,omitempty" json:"stage,omitempty"`

	Selector `yaml:",inline"`
}

// Selector picks the requests a fault applies to. Every set field must hold.
// The counting fields (First, Every) count requests that pass the static
// fields (provider, model, header) inside the time window; the probability
// (or ramp) is drawn last from the provider's seeded source.
type Selector struct {
	// Provider is the provider name (exact).
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty"`
	// Model is the model name or a path.Match glob ("gpt-4o*").
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	// Header requires request headers to have these values ("*": present).
	Header map[string]string `yaml:"header,omitempty" json:"header,omitempty"`
	// Probability is the share of matching requests affected (default 100%).
	Probability *yamlfile.Percent `yaml:"probability,omitempty" json:"probability,omitempty"`
	// First limits the fault to the first N matching requests.
	First int `yaml:"first,omitempty" json:"first,omitempty"`
	// Every applies the fault to every Nth matching request (the Nth, 2Nth...).
	Every int `yaml:"every,omitempty" json:"every,omitempty"`
	// Start and Duration bound a window relative to the fault's activation;
	// a zero Duration never ends.
	Start    yamlfile.Duration `yaml:"start,omitempty" json:"start,omitempty"`
	Duration yamlfile.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Ramp raises the probability linearly over time (instead of Probability).
	Ramp *Ramp `yaml:"ramp,omitempty" json:"ramp,omitempty"`
}

// Ramp is a probability rising linearly from From to To over Over, starting
// at the window's start.
type Ramp struct {
	From yamlfile.Percent  `yaml:"from" json:"from"`
	To   yamlfile.Percent  `yaml:"to" json:"to"`
	Over yamlfile.Duration `yaml:"over" json:"over"`
}

// FieldError is a Spec validation error naming the offending field by its
// YAML name ("status", "ramp.over").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// params lists the kind-specific parameters that are set, by YAML name.
func (s *Spec) params() []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(s.Status != 0, "status")
	add(s.RetryAfter != 0, "retry_after")
	add(s.Message != "", "message")
	add(s.ErrorType != "", "error_type")
	add(s.Delay != nil, "delay")
	add(s.Mode != "", "mode")
	add(s.Rate != 0, "rate")
	add(s.Jitter != 0, "jitter")
	add(s.After != nil, "after")
	add(s.For != 0, "for")
	add(s.Close, "close")
	add(s.At != nil, "at")
	add(s.Param != "", "param")
	add(s.Text != "", "text")
	add(s.Window != 0, "window")
	add(s.Stage != "", "stage")
	return out
}

// Validate checks the spec; the error is a *FieldError naming the field.
func (s Spec) Validate() error {
	if s.Kind == "" {
		return fieldErr("kind", "missing (one of %s)", kindNames())
	}
	k, ok := lookup(s.Kind)
	if !ok {
		names := strings.Split(kindNames(), ", ")
		if near := yamlfile.Suggest(string(s.Kind), names); near != "" {
			return fieldErr("kind", "unknown fault kind %q (did you mean %q?)", s.Kind, near)
		}
		return fieldErr("kind", "unknown fault kind %q (one of %s)", s.Kind, kindNames())
	}
	for _, p := range s.params() {
		if !contains(k.params, p) {
			if len(k.params) == 0 {
				return fieldErr(p, "does not apply to %s, which takes no parameters", s.Kind)
			}
			return fieldErr(p, "does not apply to %s (its parameters: %s)", s.Kind, strings.Join(k.params, ", "))
		}
	}
	if s.After != nil && *s.After < 0 {
		return fieldErr("after", "must not be negative")
	}
	if s.At != nil && *s.At < 0 {
		return fieldErr("at", "must not be negative")
	}
	if k.check != nil {
		if err := k.check(&s); err != nil {
			return err
		}
	}
	return s.Selector.validate()
}

func (sel *Selector) validate() error {
	if sel.Model != "" {
		if _, err := path.Match(sel.Model, ""); err != nil {
			return fieldErr("model", "bad glob %q: %v", sel.Model, err)
		}
	}
	for k := range sel.Header {
		if k == "" {
			return fieldErr("header", "empty header name")
		}
	}
	if sel.First < 0 {
		return fieldErr("first", "must not be negative")
	}
	if sel.Every < 0 {
		return fieldErr("every", "must not be negative")
	}
	if sel.Probability != nil && (*sel.Probability < 0 || *sel.Probability > 1) {
		return fieldErr("probability", "must be between 0%% and 100%%")
	}
	if sel.Ramp != nil {
		if sel.Probability != nil {
			return fieldErr("ramp", "cannot be combined with probability")
		}
		if sel.Ramp.Over <= 0 {
			return fieldErr("ramp.over", "must be a positive duration")
		}
		if sel.Ramp.From < 0 || sel.Ramp.From > 1 {
			return fieldErr("ramp.from", "must be between 0%% and 100%%")
		}
		if sel.Ramp.To < 0 || sel.Ramp.To > 1 {
			return fieldErr("ramp.to", "must be between 0%% and 100%%")
		}
	}
	return nil
}

// inWindow reports whether elapsed (time since activation) is inside the window.
func (sel *Selector) inWindow(elapsed time.Duration) bool {
	if elapsed < sel.Start.D() {
		return false
	}
	return sel.Duration == 0 || elapsed < sel.Start.D()+sel.Duration.D()
}

// matchStatic checks provider, model and headers.
func (sel *Selector) matchStatic(e *Env) bool {
	if sel.Provider != "" && sel.Provider != e.Provider {
		return false
	}
	if sel.Model != "" && sel.Model != e.Model {
		if ok, _ := path.Match(sel.Model, e.Model); !ok {
			return false
		}
	}
	for k, want := range sel.Header {
		got := e.Header(k)
		if want == "*" {
			if got == "" {
				return false
			}
		} else if got != want {
			return false
		}
	}
	return true
}

// probability returns the chance of applying at elapsed time since activation.
func (sel *Selector) probability(elapsed time.Duration) float64 {
	if sel.Ramp != nil {
		t := float64(elapsed-sel.Start.D()) / float64(sel.Ramp.Over.D())
		t = min(max(t, 0), 1)
		return sel.Ramp.From.F() + (sel.Ramp.To.F()-sel.Ramp.From.F())*t
	}
	if sel.Probability != nil {
		return sel.Probability.F()
	}
	return 1
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
