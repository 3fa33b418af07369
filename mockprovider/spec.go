package mockprovider

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
	"github.com/brownout-dev/brownout/yamlfile"
	"gopkg.in/yaml.v3"
)

// File is a providers YAML file.
type File struct {
	Version   int            `yaml:"version"`
	Providers []ProviderSpec `yaml:"providers"`
}

// ProviderSpec describes one mock provider: its wire format, address,
// models, capacity, content rules and the faults active from the start.
type ProviderSpec struct {
	Name   string     `yaml:"name" json:"name"`
	Format llm.Format `yaml:"format" json:"format"`
	// Listen is the address to serve on ("127.0.0.1:9101"); empty picks a
	// free loopback port.
	Listen string `yaml:"listen,omitempty" json:"listen,omitempty"`
	// ProxyTo forwards requests to a real upstream and applies the faults to
	// its answers instead of generating content.
	ProxyTo string `yaml:"proxy_to,omitempty" json:"proxy_to,omitempty"`
	// Seed seeds the provider's random source (default 1).
	Seed   uint64      `yaml:"seed,omitempty" json:"seed,omitempty"`
	Models []ModelSpec `yaml:"models" json:"models"`
	// Capacity limits the provider as a whole.
	Capacity    Capacity      `yaml:"capacity,omitempty" json:"capacity,omitempty"`
	PromptCache *CacheSpec    `yaml:"prompt_cache,omitempty" json:"prompt_cache,omitempty"`
	Rules       []Rule        `yaml:"rules,omitempty" json:"rules,omitempty"`
	Faults      []faults.Spec `yaml:"faults,omitempty" json:"faults,omitempty"`
	// JournalSize bounds the journal (default 100000 entries; the oldest go first).
	JournalSize int `yaml:"journal_size,omitempty" json:"journal_size,omitempty"`
}

// ModelSpec is the behaviour of one model.
type ModelSpec struct {
	// Name is the model name or a path.Match glob ("gpt-4o*").
	Name string `yaml:"name" json:"name"`
	// TTFT is the time to first token (default 0).
	TTFT faults.Latency `yaml:"ttft,omitempty" json:"ttft,omitempty"`
	// TokensPerSecond paces the tokens after the first; 0 sends them all at TTFT.
	TokensPerSecond float64 `yaml:"tokens_per_second,omitempty" json:"tokens_per_second,omitempty"`
	// Jitter varies each token gap by up to ±Jitter.
	Jitter yamlfile.Percent `yaml:"jitter,omitempty" json:"jitter,omitempty"`
	// OutputTokens is the length of generated (filler) answers (default 64).
	OutputTokens Length `yaml:"output_tokens,omitempty" json:"output_tokens,omitempty"`
	// MaxOutputTokens caps every answer (finish reason length); 0 for none.
	MaxOutputTokens int `yaml:"max_output_tokens,omitempty" json:"max_output_tokens,omitempty"`
	// ContextWindow rejects prompts (plus max_tokens) above it with 400
	// context_length_exceeded; 0 for none.
	ContextWindow int `yaml:"context_window,omitempty" json:"context_window,omitempty"`
	// Prefill is how the model takes an assistant message as the last
	// message (a prefill): true continues it, in every conversation state;
	// "ignore" accepts it and answers from scratch, as a model that does not
	// take prefill does (a restart with another text); false (the default)
	// rejects such a request with a 400.
	Prefill Prefill `yaml:"prefill,omitempty" json:"prefill,omitempty"`
	// Price is informational (for gateways and reports reading the file).
	Price Price `yaml:"price,omitempty" json:"price,omitempty"`
	// Capacity limits this model, on top of the provider's capacity.
	Capacity Capacity `yaml:"capacity,omitempty" json:"capacity,omitempty"`
	// Steps script the tool loop that follows each user message: step k
	// (from 0) answers a conversation holding k assistant turns after its
	// last user message (call → result → call → result → answer). Rules
	// come first; past the last step the model answers by default.
	Steps []Step `yaml:"steps,omitempty" json:"steps,omitempty"`
}

// Prefill is how a model takes an assistant prefill. In YAML and JSON it
// is true, false or "ignore".
type Prefill uint8

const (
	// PrefillRejected (false): a request ending with an assistant message
	// is a 400.
	PrefillRejected Prefill = iota
	// PrefillContinue (true): the answer continues the prefill.
	PrefillContinue
	// PrefillIgnore ("ignore"): the prefill is accepted and ignored: the
	// answer is the one the conversation without it gets, from its start.
	PrefillIgnore
)

// prefillIgnore is the spelling of PrefillIgnore.
const prefillIgnore = "ignore"

func (p Prefill) String() string {
	switch p {
	case PrefillRejected:
		return "false"
	case PrefillContinue:
		return "true"
	case PrefillIgnore:
		return prefillIgnore
	}
	return fmt.Sprintf("Prefill(%d)", uint8(p))
}

// Accepts reports whether a request ending with a prefill is answered.
func (p Prefill) Accepts() bool { return p == PrefillContinue || p == PrefillIgnore }

func parsePrefill(s string) (Prefill, error) {
	switch s {
	case "true":
		return PrefillContinue, nil
	case "false":
		return PrefillRejected, nil
	case prefillIgnore:
		return PrefillIgnore, nil
	}
	return 0, fmt.Errorf("prefill must be true, false or %q, got %q", prefillIgnore, s)
}

// UnmarshalYAML accepts true, false or "ignore".
func (p *Prefill) UnmarshalYAML(n *yaml.Node) error {
	v, err := parsePrefill(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		return &yamlfile.Error{Line: n.Line, Col: n.Column, Msg: fmt.Sprintf("prefill must be true, false or %q", prefillIgnore)}
	}
	*p = v
	return nil
}

// MarshalYAML writes true, false or "ignore".
func (p Prefill) MarshalYAML() (any, error) {
	if p == PrefillIgnore {
		return prefillIgnore, nil
	}
	return p == PrefillContinue, nil
}

// MarshalJSON writes true, false or "ignore".
func (p Prefill) MarshalJSON() ([]byte, error) {
	if p == PrefillIgnore {
		return []byte(`"` + prefillIgnore + `"`), nil
	}
	return []byte(strconv.FormatBool(p == PrefillContinue)), nil
}

// UnmarshalJSON accepts true, false or "ignore".
func (p *Prefill) UnmarshalJSON(b []byte) error {
	v, err := parsePrefill(strings.Trim(string(b), `"`))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Price is USD per million tokens.
type Price struct {
	InputPerMTok       float64 `yaml:"input_per_mtok,omitempty" json:"input_per_mtok,omitempty"`
	OutputPerMTok      float64 `yaml:"output_per_mtok,omitempty" json:"output_per_mtok,omitempty"`
	CachedInputPerMTok float64 `yaml:"cached_input_per_mtok,omitempty" json:"cached_input_per_mtok,omitempty"`
}

// Capacity limits concurrency, requests per minute and tokens per minute
// (prompt tokens plus the planned output). 0 means unlimited. RPM and TPM
// are token buckets that refill continuously and start full.
type Capacity struct {
	MaxConcurrency int `yaml:"max_concurrency,omitempty" json:"max_concurrency,omitempty"`
	RPM            int `yaml:"rpm,omitempty" json:"rpm,omitempty"`
	TPM            int `yaml:"tpm,omitempty" json:"tpm,omitempty"`
}

// CacheSpec is the prompt-cache model: a prompt prefix (at message
// boundaries) seen within TTL is reported as cached input tokens when it is
// at least MinTokens long.
type CacheSpec struct {
	TTL       yamlfile.Duration `yaml:"ttl" json:"ttl"`
	MinTokens int               `yaml:"min_tokens,omitempty" json:"min_tokens,omitempty"`
}

// Rule is a canned answer for requests whose last user message contains a
// string or matches a regular expression, and whose conversation is in a
// given state: every condition set must hold (a rule sets at least one).
// Rules are tried in order; the first that matches answers.
type Rule struct {
	Contains string `yaml:"contains,omitempty" json:"contains,omitempty"`
	Regex    string `yaml:"regex,omitempty" json:"regex,omitempty"`
	// Model restricts the rule to model names matching this glob.
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	// LastRole matches the role of the conversation's last message: user,
	// assistant (a prefill) or tool (a tool result).
	LastRole llm.Role `yaml:"last_role,omitempty" json:"last_role,omitempty"`
	// ToolResult matches conversations that hold (true) or do not hold
	// (false) a tool result after their last user message: the model is
	// (or is not) inside a tool loop.
	ToolResult *bool `yaml:"tool_result,omitempty" json:"tool_result,omitempty"`
	// Turn matches the assistant turn being answered: 1 plus the assistant
	// messages of the whole conversation.
	Turn int `yaml:"turn,omitempty" json:"turn,omitempty"`
	// Answer is the text answer; "{{tool_result}}" in it is replaced by the
	// text of the conversation's last tool result.
	Answer string `yaml:"answer,omitempty" json:"answer,omitempty"`
	// ToolCall makes the model call a tool, when the request offers it. A
	// rule with a tool call and no conversation condition (last_role,
	// tool_result, turn) calls it once per user message: after its result
	// the rule no longer matches, and the model answers.
	ToolCall *RuleToolCall `yaml:"tool_call,omitempty" json:"tool_call,omitempty"`

	re *regexp.Regexp
}

// Step is one step of a model's scripted tool loop (ModelSpec.Steps): a
// tool call or the final answer.
type Step struct {
	// Answer ends the loop with this text ("{{tool_result}}" as in Rule).
	Answer string `yaml:"answer,omitempty" json:"answer,omitempty"`
	// ToolCall calls a tool, when the request offers it.
	ToolCall *RuleToolCall `yaml:"tool_call,omitempty" json:"tool_call,omitempty"`
}

// RuleToolCall is the tool call a rule makes. Without Arguments they are
// generated from the tool's parameter schema.
type RuleToolCall struct {
	Name      string         `yaml:"name" json:"name"`
	Arguments map[string]any `yaml:"arguments,omitempty" json:"arguments,omitempty"`
}

// Length is a distribution of token counts. In YAML it is a plain number
// (fixed) or a mapping: {min, max} uniform, {mean, stddev} normal,
// {median, p99} lognormal; results are at least 1.
type Length struct {
	Fixed  int `yaml:"fixed,omitempty" json:"fixed,omitempty"`
	Min    int `yaml:"min,omitempty" json:"min,omitempty"`
	Max    int `yaml:"max,omitempty" json:"max,omitempty"`
	Mean   int `yaml:"mean,omitempty" json:"mean,omitempty"`
	Stddev int `yaml:"stddev,omitempty" json:"stddev,omitempty"`
	Median int `yaml:"median,omitempty" json:"median,omitempty"`
	P99    int `yaml:"p99,omitempty" json:"p99,omitempty"`
}

type lengthFields Length

// UnmarshalYAML accepts a number or a mapping.
func (l *Length) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		v, err := strconv.Atoi(n.Value)
		if err != nil {
			return &yamlfile.Error{Line: n.Line, Col: n.Column, Msg: fmt.Sprintf("length must be a whole number of tokens or a mapping, got %q", n.Value)}
		}
		*l = Length{Fixed: v}
		return nil
	}
	if err := faults.CheckKeys(n, "fixed", "min", "max", "mean", "stddev", "median", "p99"); err != nil {
		return err
	}
	var f lengthFields
	if err := n.Decode(&f); err != nil {
		return err
	}
	*l = Length(f)
	return nil
}

// DefaultOutputTokens is the generated answer length when none is configured.
const DefaultOutputTokens = 64

// Sample draws a length (at least 1).
func (l Length) Sample(r *rand.Rand) int {
	var v float64
	switch {
	case l.Median > 0:
		sigma := 0.0
		if l.P99 > l.Median {
			sigma = math.Log(float64(l.P99)/float64(l.Median)) / 2.3263478740408408
		}
		v = math.Exp(math.Log(float64(l.Median)) + sigma*r.NormFloat64())
	case l.Mean > 0:
		v = float64(l.Mean) + r.NormFloat64()*float64(l.Stddev)
	case l.Max > 0:
		v = float64(l.Min + r.IntN(l.Max-l.Min+1))
	case l.Fixed > 0:
		v = float64(l.Fixed)
	default:
		v = DefaultOutputTokens
	}
	if l.Min > 0 && v < float64(l.Min) {
		v = float64(l.Min)
	}
	if l.Max > 0 && v > float64(l.Max) {
		v = float64(l.Max)
	}
	return max(int(math.Round(v)), 1)
}

func (l Length) validate() (string, error) {
	switch {
	case l.Fixed < 0 || l.Min < 0 || l.Max < 0 || l.Mean < 0 || l.Stddev < 0 || l.Median < 0 || l.P99 < 0:
		return "", fmt.Errorf("token counts must not be negative")
	case l.Median > 0 && l.P99 > 0 && l.P99 < l.Median:
		return "p99", fmt.Errorf("must be at least the median (%d)", l.Median)
	case l.Max > 0 && l.Max < l.Min:
		return "max", fmt.Errorf("must not be below min (%d)", l.Min)
	}
	return "", nil
}

// LoadFile reads and validates a providers YAML file. Every error carries
// file:line:col; all problems are reported at once (yamlfile.Errors).
func LoadFile(path string) ([]ProviderSpec, error) {
	var f File
	doc, err := yamlfile.ReadFile(path, &f)
	if err != nil {
		return nil, err
	}
	if err := f.validate(doc); err != nil {
		return nil, err
	}
	return f.Providers, nil
}

// Parse decodes and validates providers YAML held in memory (file names it in errors).
func Parse(file string, data []byte) ([]ProviderSpec, error) {
	var f File
	doc, err := yamlfile.Decode(file, data, &f)
	if err != nil {
		return nil, err
	}
	if err := f.validate(doc); err != nil {
		return nil, err
	}
	return f.Providers, nil
}

func (f *File) validate(doc *yamlfile.Doc) error {
	var errs yamlfile.Errors
	if f.Version != 1 {
		errs = append(errs, doc.Errorf("version", "must be 1, got %d", f.Version))
	}
	if len(f.Providers) == 0 {
		errs = append(errs, doc.Errorf("providers", "at least one provider is required"))
	}
	names := map[string]bool{}
	listens := map[string]bool{}
	for i := range f.Providers {
		p := &f.Providers[i]
		at := fmt.Sprintf("providers.%d", i)
		for _, fe := range p.check() {
			errs = append(errs, doc.Errorf(at+"."+fe.Field, "%s", fe.Msg))
		}
		if p.Name != "" && names[p.Name] {
			errs = append(errs, doc.Errorf(at+".name", "duplicate provider name %q", p.Name))
		}
		names[p.Name] = true
		if p.Listen != "" && listens[p.Listen] {
			errs = append(errs, doc.Errorf(at+".listen", "address %s is used by another provider", p.Listen))
		}
		listens[p.Listen] = true
	}
	return errs.Err()
}

// Validate checks the spec; the error names the first bad field.
func (p *ProviderSpec) Validate() error {
	if fes := p.check(); len(fes) > 0 {
		return fes[0]
	}
	return nil
}

// check returns every problem, fields as dotted paths relative to the provider.
func (p *ProviderSpec) check() []*faults.FieldError {
	var out []*faults.FieldError
	bad := func(field, format string, args ...any) {
		out = append(out, &faults.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if p.Name == "" {
		bad("name", "required")
	}
	if p.Format == "" {
		bad("format", "required: one of %s", codecs.Names())
	} else if _, err := codecs.Lookup(p.Format); err != nil {
		bad("format", "%v", err)
	}
	if p.ProxyTo != "" {
		if u, err := url.Parse(p.ProxyTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("proxy_to", "must be an http(s) URL, got %q", p.ProxyTo)
		}
	}
	if len(p.Models) == 0 && p.ProxyTo == "" {
		bad("models", "at least one model is required")
	}
	seen := map[string]bool{}
	for i, m := range p.Models {
		at := fmt.Sprintf("models.%d.", i)
		if m.Name == "" {
			bad(at+"name", "required")
		} else if _, err := path.Match(m.Name, ""); err != nil {
			bad(at+"name", "bad glob %q: %v", m.Name, err)
		}
		if seen[m.Name] {
			bad(at+"name", "duplicate model %q", m.Name)
		}
		seen[m.Name] = true
		if err := m.TTFT.Validate(); err != nil && !m.TTFT.IsZero() {
			if fe, ok := err.(*faults.FieldError); ok {
				bad(at+"ttft."+fe.Field, "%s", fe.Msg)
			} else {
				bad(at+"ttft", "%v", err)
			}
		}
		if m.TokensPerSecond < 0 {
			bad(at+"tokens_per_second", "must not be negative")
		}
		if m.Jitter < 0 || m.Jitter > 1 {
			bad(at+"jitter", "must be between 0%% and 100%%")
		}
		if f, err := m.OutputTokens.validate(); err != nil {
			bad(at+"output_tokens"+dot(f), "%v", err)
		}
		if m.MaxOutputTokens < 0 {
			bad(at+"max_output_tokens", "must not be negative")
		}
		if m.ContextWindow < 0 {
			bad(at+"context_window", "must not be negative")
		}
		for _, fe := range m.Capacity.check() {
			bad(at+"capacity."+fe.Field, "%s", fe.Msg)
		}
		for j, st := range m.Steps {
			sat := fmt.Sprintf("%ssteps.%d.", at, j)
			switch {
			case st.Answer == "" && st.ToolCall == nil:
				bad(sat+"answer", "a step needs answer or tool_call")
			case st.Answer != "" && st.ToolCall != nil:
				bad(sat+"tool_call", "a step is an answer or a tool call, not both")
			case st.ToolCall != nil:
				out = append(out, st.ToolCall.check(sat+"tool_call.")...)
			}
		}
	}
	for _, fe := range p.Capacity.check() {
		bad("capacity."+fe.Field, "%s", fe.Msg)
	}
	if p.PromptCache != nil && p.PromptCache.TTL <= 0 {
		bad("prompt_cache.ttl", "required: how long a prefix stays cached (e.g. 5m)")
	}
	for i := range p.Rules {
		r := &p.Rules[i]
		at := fmt.Sprintf("rules.%d.", i)
		if r.Contains == "" && r.Regex == "" && r.LastRole == "" && r.ToolResult == nil && r.Turn == 0 {
			bad(at+"contains", "a rule needs a condition: contains, regex, last_role, tool_result or turn")
		}
		switch r.LastRole {
		case "", llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
		default:
			bad(at+"last_role", "unknown role %q (user, assistant or tool)", r.LastRole)
		}
		if r.Turn < 0 {
			bad(at+"turn", "must not be negative")
		}
		if r.Regex != "" {
			if _, err := regexp.Compile(r.Regex); err != nil {
				bad(at+"regex", "%v", err)
			}
		}
		if r.Answer == "" && r.ToolCall == nil {
			bad(at+"answer", "a rule needs answer or tool_call")
		}
		if r.ToolCall != nil {
			out = append(out, r.ToolCall.check(at+"tool_call.")...)
		}
	}
	for i, s := range p.Faults {
		if err := s.Validate(); err != nil {
			if fe, ok := err.(*faults.FieldError); ok {
				bad(fmt.Sprintf("faults.%d.%s", i, fe.Field), "%s", fe.Msg)
			} else {
				bad(fmt.Sprintf("faults.%d", i), "%v", err)
			}
		}
	}
	if p.JournalSize < 0 {
		bad("journal_size", "must not be negative")
	}
	return out
}

// check validates a tool call; at prefixes the fields.
func (tc *RuleToolCall) check(at string) []*faults.FieldError {
	var out []*faults.FieldError
	if tc.Name == "" {
		out = append(out, &faults.FieldError{Field: at + "name", Msg: "required"})
	}
	if _, err := json.Marshal(tc.Arguments); err != nil {
		out = append(out, &faults.FieldError{Field: at + "arguments", Msg: fmt.Sprintf("not representable as JSON: %v", err)})
	}
	return out
}

func (c Capacity) check() []*faults.FieldError {
	var out []*faults.FieldError
	if c.MaxConcurrency < 0 {
		out = append(out, &faults.FieldError{Field: "max_concurrency", Msg: "must not be negative"})
	}
	if c.RPM < 0 {
		out = append(out, &faults.FieldError{Field: "rpm", Msg: "must not be negative"})
	}
	if c.TPM < 0 {
		out = append(out, &faults.FieldError{Field: "tpm", Msg: "must not be negative"})
	}
	return out
}

func dot(f string) string {
	if f == "" {
		return ""
	}
	return "." + f
}
