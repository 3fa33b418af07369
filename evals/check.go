package evals

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/brownout-dev/brownout/llm"
)

// Kind names a check.
type Kind string

// The checks.
const (
	KindJSONValid    Kind = "json_valid"
	KindJSONSchema   Kind = "json_schema"
	KindRegex        Kind = "regex"
	KindContains     Kind = "contains"
	KindNotContains  Kind = "not_contains"
	KindLength       Kind = "length"
	KindRefusal      Kind = "refusal" // passes when the response is NOT a refusal
	KindToolCall     Kind = "tool_call"
	KindFinishReason Kind = "finish_reason"
)

// Kinds lists every check kind, in documentation order.
var Kinds = []Kind{KindJSONValid, KindJSONSchema, KindRegex, KindContains, KindNotContains,
	KindLength, KindRefusal, KindToolCall, KindFinishReason}

// Result is the verdict of one check on one response.
type Result struct {
	Check  string `json:"check"` // the check's Name
	Kind   Kind   `json:"kind"`
	Pass   bool   `json:"pass"`
	Reason string `json:"reason,omitempty"` // why it failed; empty on pass
}

// Check is one compiled test of a response. Build checks with the constructors
// ([JSONValid], [JSONSchema], [Regex], ...) or from YAML with [CheckSpec.Compile].
// A Check is immutable and safe for concurrent use.
type Check struct {
	Kind Kind
	// Name labels results and per-check pass rates; the constructors set it to
	// the kind, and suites may override it.
	Name string

	text    string
	re      *regexp.Regexp
	schema  *jsonschema.Schema
	bounds  Bounds
	phrases []string
	tool    string                        // tool_call: required tool name ("" any)
	tools   map[string]*jsonschema.Schema // tool_call: parameter schemas by tool name
	finish  []llm.FinishReason
}

// Bounds are inclusive length limits; a zero field is no limit. Chars counts
// Unicode code points of the content; tokens are the response's usage output
// tokens.
type Bounds struct {
	MinChars  int `yaml:"min_chars" json:"min_chars,omitempty"`
	MaxChars  int `yaml:"max_chars" json:"max_chars,omitempty"`
	MinTokens int `yaml:"min_tokens" json:"min_tokens,omitempty"`
	MaxTokens int `yaml:"max_tokens" json:"max_tokens,omitempty"`
}

// DefaultRefusals are the phrases that mark a refusal when a check or an
// observation is given none. Matching is ASCII case-insensitive; curly
// apostrophes in content are matched by straight ones in phrases.
var DefaultRefusals = []string{
	"i can't help with",
	"i cannot help with",
	"i can't assist with",
	"i cannot assist with",
	"i can't provide",
	"i cannot provide",
	"i can't comply",
	"i cannot comply",
	"i'm unable to help",
	"i am unable to help",
	"i'm not able to help",
	"i am not able to help",
	"i won't be able to help",
	"i'm sorry, but i can't",
	"i'm sorry, but i cannot",
	"sorry, i can't",
	"as an ai language model",
	"i must decline",
}

// JSONValid passes when the content, trimmed of surrounding white space, is
// one valid JSON value. Prose around JSON and Markdown code fences fail.
func JSONValid() Check { return Check{Kind: KindJSONValid, Name: string(KindJSONValid)} }

// JSONSchema passes when the content is valid JSON that the schema (JSON
// text, any draft; 2020-12 when "$schema" is absent) accepts.
func JSONSchema(schema []byte) (Check, error) {
	s, err := compileSchema("schema.json", schema)
	if err != nil {
		return Check{}, err
	}
	return Check{Kind: KindJSONSchema, Name: string(KindJSONSchema), schema: s}, nil
}

// Regex passes when the pattern (Go RE2 syntax) matches somewhere in the content.
func Regex(pattern string) (Check, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return Check{}, fmt.Errorf("regex: %w", err)
	}
	return Check{Kind: KindRegex, Name: string(KindRegex), re: re}, nil
}

// Contains passes when the content contains s (case-sensitive).
func Contains(s string) Check {
	return Check{Kind: KindContains, Name: string(KindContains), text: s}
}

// NotContains passes when the content does not contain s (case-sensitive).
func NotContains(s string) Check {
	return Check{Kind: KindNotContains, Name: string(KindNotContains), text: s}
}

// Length passes when the content and output tokens lie within b.
func Length(b Bounds) Check { return Check{Kind: KindLength, Name: string(KindLength), bounds: b} }

// NoRefusal passes when the response is not a refusal: no provider refusal
// field, no content_filter finish, and none of phrases (DefaultRefusals when
// empty) in the content.
func NoRefusal(phrases ...string) Check {
	if len(phrases) == 0 {
		phrases = DefaultRefusals
	}
	return Check{Kind: KindRefusal, Name: string(KindRefusal), phrases: lowerAll(phrases)}
}

// ToolCall passes when the response calls a tool (the one named, when name is
// not empty) and every call has non-empty arguments that parse as a JSON
// object and satisfy the tool's parameters schema from tools (calls to tools
// without a schema only need a JSON object).
func ToolCall(name string, tools []llm.Tool) (Check, error) {
	c := Check{Kind: KindToolCall, Name: string(KindToolCall), tool: name}
	found := name == ""
	for _, t := range tools {
		if t.Name == name {
			found = true
		}
		if len(bytes.TrimSpace(t.Parameters)) == 0 {
			continue
		}
		s, err := compileSchema("tool-"+t.Name+".json", t.Parameters)
		if err != nil {
			return Check{}, fmt.Errorf("tool %q parameters: %w", t.Name, err)
		}
		if c.tools == nil {
			c.tools = make(map[string]*jsonschema.Schema)
		}
		c.tools[t.Name] = s
	}
	if !found && len(tools) > 0 {
		return Check{}, fmt.Errorf("tool_call: tool %q is not among the request's tools", name)
	}
	return c, nil
}

// FinishReason passes when the response's finish reason is one of rs.
func FinishReason(rs ...llm.FinishReason) Check {
	return Check{Kind: KindFinishReason, Name: string(KindFinishReason), finish: rs}
}

// Named returns c labelled name.
func (c Check) Named(name string) Check {
	if name != "" {
		c.Name = name
	}
	return c
}

// Run checks one response.
func (c Check) Run(r *llm.Response) Result {
	res := Result{Check: c.Name, Kind: c.Kind}
	if r == nil {
		res.Reason = "no response"
		return res
	}
	res.Reason = c.run(r)
	res.Pass = res.Reason == ""
	return res
}

func (c Check) run(r *llm.Response) string {
	switch c.Kind {
	case KindJSONValid:
		s := strings.TrimSpace(r.Content)
		if s == "" {
			return "content is empty"
		}
		if !json.Valid([]byte(s)) {
			return "content is not valid JSON: " + jsonError(s) + " (starts " + quoteStart(s) + ")"
		}
	case KindJSONSchema:
		s := strings.TrimSpace(r.Content)
		if s == "" {
			return "content is empty"
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
		if err != nil {
			return "content is not valid JSON: " + jsonError(s) + " (starts " + quoteStart(s) + ")"
		}
		if err := c.schema.Validate(v); err != nil {
			return "schema: " + schemaReason(err)
		}
	case KindRegex:
		if !c.re.MatchString(r.Content) {
			return fmt.Sprintf("content does not match /%s/", c.re)
		}
	case KindContains:
		if !strings.Contains(r.Content, c.text) {
			return fmt.Sprintf("content does not contain %q", c.text)
		}
	case KindNotContains:
		if i := strings.Index(r.Content, c.text); i >= 0 {
			return fmt.Sprintf("content contains %q at byte %d", c.text, i)
		}
	case KindLength:
		return c.bounds.check(r)
	case KindRefusal:
		if r.Refusal != "" {
			return "provider refusal: " + quoteStart(r.Refusal)
		}
		if r.FinishReason == llm.FinishContentFilter {
			return "finish_reason content_filter"
		}
		if p, ok := findPhrase(r.Content, c.phrases, 0); ok {
			return fmt.Sprintf("refusal phrase %q", p)
		}
	case KindToolCall:
		return c.checkToolCalls(r)
	case KindFinishReason:
		if !slices.Contains(c.finish, r.FinishReason) {
			return fmt.Sprintf("finish_reason %q, want %s", r.FinishReason, joinReasons(c.finish))
		}
	default:
		return fmt.Sprintf("unknown check kind %q", c.Kind)
	}
	return ""
}

func (b Bounds) check(r *llm.Response) string {
	if b.MinChars > 0 || b.MaxChars > 0 {
		n := utf8.RuneCountInString(r.Content)
		if b.MinChars > 0 && n < b.MinChars {
			return fmt.Sprintf("%d characters, want at least %d", n, b.MinChars)
		}
		if b.MaxChars > 0 && n > b.MaxChars {
			return fmt.Sprintf("%d characters, want at most %d", n, b.MaxChars)
		}
	}
	n := r.Usage.OutputTokens
	if b.MinTokens > 0 && n < b.MinTokens {
		return fmt.Sprintf("%d output tokens, want at least %d", n, b.MinTokens)
	}
	if b.MaxTokens > 0 && n > b.MaxTokens {
		return fmt.Sprintf("%d output tokens, want at most %d", n, b.MaxTokens)
	}
	return ""
}

func (c Check) checkToolCalls(r *llm.Response) string {
	if len(r.ToolCalls) == 0 {
		if c.tool != "" {
			return fmt.Sprintf("no tool call, want a call to %q", c.tool)
		}
		return "no tool call"
	}
	named := c.tool == ""
	for i, tc := range r.ToolCalls {
		if tc.Name == c.tool {
			named = true
		}
		args := strings.TrimSpace(tc.Arguments)
		if args == "" || args == "{}" {
			return fmt.Sprintf("tool call %d (%s): empty arguments", i, tc.Name)
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
		if err != nil {
			return fmt.Sprintf("tool call %d (%s): arguments are not valid JSON: %s", i, tc.Name, jsonError(args))
		}
		if _, ok := v.(map[string]any); !ok {
			return fmt.Sprintf("tool call %d (%s): arguments are not a JSON object", i, tc.Name)
		}
		if s := c.tools[tc.Name]; s != nil {
			if err := s.Validate(v); err != nil {
				return fmt.Sprintf("tool call %d (%s): arguments: %s", i, tc.Name, schemaReason(err))
			}
		}
	}
	if !named {
		return fmt.Sprintf("no call to %q (called %s)", c.tool, r.ToolCalls[0].Name)
	}
	return ""
}

func compileSchema(name string, schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(name)
	if err != nil {
		var se *jsonschema.SchemaValidationError
		if errors.As(err, &se) {
			if ve, ok := se.Err.(*jsonschema.ValidationError); ok {
				return nil, fmt.Errorf("not a valid JSON Schema: %s", schemaReason(ve))
			}
		}
		return nil, fmt.Errorf("schema: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	return s, nil
}

// schemaReason flattens a validation error to one line.
func schemaReason(err error) string {
	if ve, ok := err.(*jsonschema.ValidationError); ok {
		var parts []string
		for _, leaf := range leaves(ve) {
			parts = append(parts, strings.Join(strings.Fields(leaf.Error()), " "))
		}
		if len(parts) > 0 {
			return strings.Join(parts, "; ")
		}
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func jsonError(s string) string {
	var v any
	err := json.Unmarshal([]byte(s), &v)
	if err == nil {
		return "trailing data"
	}
	return err.Error()
}

func quoteStart(s string) string {
	const max = 40
	if len(s) > max {
		i := max
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		return fmt.Sprintf("%q…", s[:i])
	}
	return fmt.Sprintf("%q", s)
}

func joinReasons(rs []llm.FinishReason) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%q", r)
	}
	return strings.Join(parts, " or ")
}

func lowerAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ReplaceAll(strings.ToLower(s), "\u2019", "'")
	}
	return out
}
