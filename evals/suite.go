package evals

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

// SuiteVersion is the suite file format version this package reads.
const SuiteVersion = 1

// SuiteFile is the YAML form of a suite (see examples/evals/).
type SuiteFile struct {
	Version     int    `yaml:"version"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Route is the default route of cases that name none.
	Route string `yaml:"route"`
	// Refusals replaces DefaultRefusals for refusal checks without phrases.
	Refusals []string   `yaml:"refusals"`
	Defaults Defaults   `yaml:"defaults"`
	Cases    []CaseSpec `yaml:"cases"`
}

// Defaults apply to every case's request unless the case sets its own.
type Defaults struct {
	MaxTokens   int      `yaml:"max_tokens"`
	Temperature *float64 `yaml:"temperature"`
}

// CaseSpec is one entry of `cases:`: one or more prompts sharing a request
// shape and checks. Exactly one of Prompt, Prompts and PromptsFile is set.
type CaseSpec struct {
	Name   string `yaml:"name"`
	Route  string `yaml:"route"`
	System string `yaml:"system"`
	Prompt string `yaml:"prompt"`
	// Prompts are several inline prompts; cases are named NAME#1, NAME#2...
	Prompts []string `yaml:"prompts"`
	// PromptsFile is a JSON Lines file (relative to the suite) of objects
	// {"prompt": "...", "name": "...", "system": "..."}; name and system are
	// optional.
	PromptsFile string   `yaml:"prompts_file"`
	MaxTokens   int      `yaml:"max_tokens"`
	Temperature *float64 `yaml:"temperature"`
	// Stream sends the case as a streamed request; the answer is checked
	// once the stream ends (a cut stream fails the case).
	Stream         bool                `yaml:"stream"`
	ResponseFormat *ResponseFormatSpec `yaml:"response_format"`
	Tools          []ToolSpec          `yaml:"tools"`
	// ToolChoice is auto, required, none, or the name of one tool.
	ToolChoice string      `yaml:"tool_choice"`
	Checks     []CheckSpec `yaml:"checks"`
}

// ResponseFormatSpec asks for structured output.
type ResponseFormatSpec struct {
	Type       string `yaml:"type"` // json_object or json_schema
	Name       string `yaml:"name"`
	Schema     any    `yaml:"schema"`
	SchemaFile string `yaml:"schema_file"`
	Strict     bool   `yaml:"strict"`
}

// ToolSpec declares a tool the model may call.
type ToolSpec struct {
	Name           string `yaml:"name"`
	Description    string `yaml:"description"`
	Parameters     any    `yaml:"parameters"`
	ParametersFile string `yaml:"parameters_file"`
}

// CheckSpec is the YAML form of a check. Type selects the check; only the
// fields that check uses may be set:
//
//	json_valid                    (no fields)
//	json_schema    schema | schema_file (default: the case's response_format schema)
//	regex          pattern
//	contains       text
//	not_contains   text
//	length         min_chars, max_chars, min_tokens, max_tokens (at least one)
//	refusal        phrases (default: the suite's refusals, else DefaultRefusals)
//	tool_call      tool (optional: the tool that must be called)
//	finish_reason  expect (list)
type CheckSpec struct {
	Type       string `yaml:"type"`
	Name       string `yaml:"name"`
	Schema     any    `yaml:"schema"`
	SchemaFile string `yaml:"schema_file"`
	Pattern    string `yaml:"pattern"`
	Text       string `yaml:"text"`
	Bounds     `yaml:",inline"`
	Phrases    []string `yaml:"phrases"`
	Tool       string   `yaml:"tool"`
	Expect     []string `yaml:"expect"`
}

// Compile compiles a check written in another YAML file (a gateway's probe
// definition, say): doc and path place errors, relative schema files resolve
// against doc's directory, and tools are the request's tools (for tool_call
// checks). Errors are yamlfile.Errors.
func (cs *CheckSpec) Compile(doc *yamlfile.Doc, path string, tools []llm.Tool) (Check, error) {
	l := &loader{doc: doc, dir: filepath.Dir(doc.File), sf: &SuiteFile{}}
	c, ok := l.check(path, cs, tools, nil, false)
	if !ok {
		return Check{}, l.errs
	}
	return c, nil
}

// Suite is a loaded suite: one Case per prompt, checks compiled.
type Suite struct {
	File        string
	Name        string
	Description string
	Cases       []Case
}

// Case is one prompt to send and the checks its answer must pass.
type Case struct {
	Name  string
	Route string
	// Request has no Model: the runner addresses it to each target.
	Request llm.Request
	// Structured: the case asks for JSON (response_format or a JSON check),
	// as a structured route does.
	Structured bool
	Checks     []Check
}

// Routes returns the suite's routes in first-appearance order.
func (s *Suite) Routes() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range s.Cases {
		if !seen[c.Route] {
			seen[c.Route] = true
			out = append(out, c.Route)
		}
	}
	return out
}

// LoadSuite reads and validates a suite file. Relative file references
// (prompts_file, schema_file, parameters_file) are resolved against the
// suite's directory. Every problem is reported, each with file:line:col, as
// yamlfile.Errors.
func LoadSuite(path string) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSuite(path, data)
}

// ParseSuite parses suite YAML named file; relative references resolve
// against file's directory.
func ParseSuite(file string, data []byte) (*Suite, error) {
	var sf SuiteFile
	doc, err := yamlfile.Decode(file, data, &sf)
	if err != nil {
		return nil, err
	}
	l := &loader{doc: doc, dir: filepath.Dir(file), sf: &sf}
	s := l.build()
	if err := l.errs.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

type loader struct {
	doc  *yamlfile.Doc
	dir  string
	sf   *SuiteFile
	errs yamlfile.Errors
}

func (l *loader) errorf(path, format string, args ...any) {
	l.errs = append(l.errs, l.doc.Errorf(path, format, args...))
}

func (l *loader) build() *Suite {
	sf := l.sf
	if sf.Version != SuiteVersion {
		if sf.Version == 0 {
			l.errorf("version", "missing: want version: %d", SuiteVersion)
		} else {
			l.errorf("version", "unsupported version %d (want %d)", sf.Version, SuiteVersion)
		}
	}
	if strings.TrimSpace(sf.Name) == "" {
		l.errorf("name", "missing")
	}
	if len(sf.Cases) == 0 {
		l.errorf("cases", "a suite needs at least one case")
	}
	s := &Suite{File: l.doc.File, Name: sf.Name, Description: sf.Description}
	names := map[string]string{}
	for i := range sf.Cases {
		for _, c := range l.buildCase(i, &sf.Cases[i]) {
			if prev, dup := names[c.Name]; dup {
				l.errorf(fmt.Sprintf("cases.%d.name", i), "case %q already defined at %s", c.Name, prev)
				continue
			}
			line, col := l.doc.Pos(fmt.Sprintf("cases.%d", i))
			names[c.Name] = fmt.Sprintf("%d:%d", line, col)
			s.Cases = append(s.Cases, c)
		}
	}
	return s
}

type prompt struct{ name, system, text string }

func (l *loader) buildCase(i int, cs *CaseSpec) []Case {
	at := func(f string) string { return fmt.Sprintf("cases.%d.%s", i, f) }
	nerr := len(l.errs)
	if strings.TrimSpace(cs.Name) == "" {
		l.errorf(at("name"), "missing")
	}
	route := cs.Route
	if route == "" {
		route = l.sf.Route
	}
	if route == "" {
		l.errorf(at("route"), "missing (and the suite sets no default route)")
	}

	// Prompts.
	var prompts []prompt
	set := 0
	if cs.Prompt != "" {
		set++
		prompts = append(prompts, prompt{name: cs.Name, text: cs.Prompt})
	}
	if len(cs.Prompts) > 0 {
		set++
		for j, p := range cs.Prompts {
			if strings.TrimSpace(p) == "" {
				l.errorf(fmt.Sprintf("cases.%d.prompts.%d", i, j), "empty prompt")
			}
			prompts = append(prompts, prompt{name: fmt.Sprintf("%s#%d", cs.Name, j+1), text: p})
		}
	}
	if cs.PromptsFile != "" {
		set++
		ps, err := readPrompts(l.path(cs.PromptsFile))
		if err != nil {
			l.errorf(at("prompts_file"), "%v", err)
		}
		for j, p := range ps {
			if p.name == "" {
				p.name = fmt.Sprintf("%s#%d", cs.Name, j+1)
			} else {
				p.name = cs.Name + "/" + p.name
			}
			prompts = append(prompts, p)
		}
	}
	switch {
	case set == 0:
		l.errorf(at("prompt"), "missing: set prompt, prompts or prompts_file")
	case set > 1:
		l.errorf(at("prompt"), "set only one of prompt, prompts and prompts_file")
	}

	// Request shape.
	base := llm.Request{MaxTokens: l.sf.Defaults.MaxTokens, Temperature: l.sf.Defaults.Temperature}
	if cs.MaxTokens < 0 {
		l.errorf(at("max_tokens"), "%d is negative", cs.MaxTokens)
	}
	if cs.MaxTokens > 0 {
		base.MaxTokens = cs.MaxTokens
	}
	if cs.Temperature != nil {
		base.Temperature = cs.Temperature
	}
	base.Stream = cs.Stream
	structured := false
	var formatSchema []byte
	formatBroken := false
	if rf := cs.ResponseFormat; rf != nil {
		structured = true
		f := &llm.ResponseFormat{Name: rf.Name, Strict: rf.Strict}
		switch rf.Type {
		case string(llm.ResponseJSONObject):
			f.Type = llm.ResponseJSONObject
			if rf.Schema != nil || rf.SchemaFile != "" {
				l.errorf(at("response_format.schema"), "json_object takes no schema (use type: json_schema)")
			}
		case string(llm.ResponseJSONSchema):
			f.Type = llm.ResponseJSONSchema
			formatSchema = l.schema(at("response_format"), rf.Schema, rf.SchemaFile, true)
			formatBroken = formatSchema == nil
			f.Schema = formatSchema
			if f.Name == "" {
				l.errorf(at("response_format.name"), "missing: json_schema formats need a name")
			}
		default:
			l.errorf(at("response_format.type"), "%q is not json_object or json_schema", rf.Type)
		}
		base.ResponseFormat = f
	}
	for j, ts := range cs.Tools {
		tat := fmt.Sprintf("cases.%d.tools.%d", i, j)
		if ts.Name == "" {
			l.errorf(tat+".name", "missing")
		}
		params := l.schemaField(tat, "parameters", ts.Parameters, ts.ParametersFile, false)
		base.Tools = append(base.Tools, llm.Tool{Name: ts.Name, Description: ts.Description, Parameters: params})
	}
	switch cs.ToolChoice {
	case "":
	case "auto", "required", "none":
		base.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceMode(cs.ToolChoice)}
	default:
		found := false
		for _, t := range base.Tools {
			found = found || t.Name == cs.ToolChoice
		}
		if !found && len(cs.Tools) > 0 {
			l.errorf(at("tool_choice"), "%q is not auto, required, none or a tool of this case", cs.ToolChoice)
		}
		base.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: cs.ToolChoice}
	}
	if cs.ToolChoice != "" && len(cs.Tools) == 0 {
		l.errorf(at("tool_choice"), "set but the case declares no tools")
	}

	// Checks.
	if len(cs.Checks) == 0 {
		l.errorf(at("checks"), "a case needs at least one check")
	}
	var checks []Check
	for j := range cs.Checks {
		cat := fmt.Sprintf("cases.%d.checks.%d", i, j)
		c, ok := l.check(cat, &cs.Checks[j], base.Tools, formatSchema, formatBroken)
		if ok {
			checks = append(checks, c)
			if c.Kind == KindJSONValid || c.Kind == KindJSONSchema {
				structured = true
			}
		}
	}
	if len(l.errs) > nerr {
		return nil
	}
	out := make([]Case, 0, len(prompts))
	for _, p := range prompts {
		req := base
		req.Tools = append([]llm.Tool(nil), base.Tools...)
		system := cs.System
		if p.system != "" {
			system = p.system
		}
		if system != "" {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart(system)}})
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(p.text)}})
		out = append(out, Case{Name: p.name, Route: route, Request: req, Structured: structured, Checks: checks})
	}
	return out
}

// check compiles one check spec, reporting misuse of fields at their path.
func (l *loader) check(at string, cs *CheckSpec, tools []llm.Tool, formatSchema []byte, formatBroken bool) (Check, bool) {
	used := map[string]bool{}
	switch Kind(cs.Type) {
	case KindJSONSchema:
		used["schema"], used["schema_file"] = true, true
	case KindRegex:
		used["pattern"] = true
	case KindContains, KindNotContains:
		used["text"] = true
	case KindLength:
		used["min_chars"], used["max_chars"], used["min_tokens"], used["max_tokens"] = true, true, true, true
	case KindRefusal:
		used["phrases"] = true
	case KindToolCall:
		used["tool"] = true
	case KindFinishReason:
		used["expect"] = true
	case KindJSONValid:
	case "":
		l.errorf(at+".type", "missing: one of %s", kindList())
		return Check{}, false
	default:
		l.errorf(at+".type", "unknown check %q: want one of %s", cs.Type, kindList())
		return Check{}, false
	}
	ok := true
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"schema", cs.Schema != nil}, {"schema_file", cs.SchemaFile != ""}, {"pattern", cs.Pattern != ""},
		{"text", cs.Text != ""}, {"min_chars", cs.MinChars != 0}, {"max_chars", cs.MaxChars != 0},
		{"min_tokens", cs.MinTokens != 0}, {"max_tokens", cs.MaxTokens != 0}, {"phrases", cs.Phrases != nil},
		{"tool", cs.Tool != ""}, {"expect", cs.Expect != nil},
	} {
		if f.set && !used[f.name] {
			l.errorf(at+"."+f.name, "not used by a %s check", cs.Type)
			ok = false
		}
	}
	if !ok {
		return Check{}, false
	}
	var c Check
	var err error
	field := at
	switch Kind(cs.Type) {
	case KindJSONValid:
		c = JSONValid()
	case KindJSONSchema:
		schema := formatSchema
		if cs.Schema != nil || cs.SchemaFile != "" {
			schema = l.schema(at, cs.Schema, cs.SchemaFile, true)
		} else if schema == nil {
			if formatBroken {
				return Check{}, false // reported at response_format
			}
			l.errorf(at+".schema", "missing: set schema or schema_file, or give the case a json_schema response_format")
			return Check{}, false
		}
		if schema == nil {
			return Check{}, false
		}
		c, err = JSONSchema(schema)
		field = at + ".schema"
	case KindRegex:
		if cs.Pattern == "" {
			l.errorf(at+".pattern", "missing")
			return Check{}, false
		}
		c, err = Regex(cs.Pattern)
		field = at + ".pattern"
	case KindContains, KindNotContains:
		if cs.Text == "" {
			l.errorf(at+".text", "missing")
			return Check{}, false
		}
		if Kind(cs.Type) == KindContains {
			c = Contains(cs.Text)
		} else {
			c = NotContains(cs.Text)
		}
	case KindLength:
		b := cs.Bounds
		if b == (Bounds{}) {
			l.errorf(at, "a length check needs min_chars, max_chars, min_tokens or max_tokens")
			return Check{}, false
		}
		if b.MinChars < 0 || b.MaxChars < 0 || b.MinTokens < 0 || b.MaxTokens < 0 {
			l.errorf(at, "length bounds must not be negative")
			return Check{}, false
		}
		if b.MaxChars > 0 && b.MinChars > b.MaxChars {
			l.errorf(at+".min_chars", "%d is more than max_chars %d", b.MinChars, b.MaxChars)
			return Check{}, false
		}
		if b.MaxTokens > 0 && b.MinTokens > b.MaxTokens {
			l.errorf(at+".min_tokens", "%d is more than max_tokens %d", b.MinTokens, b.MaxTokens)
			return Check{}, false
		}
		c = Length(b)
	case KindRefusal:
		phrases := cs.Phrases
		if phrases == nil {
			phrases = l.sf.Refusals
		}
		for k, p := range phrases {
			if strings.TrimSpace(p) == "" {
				l.errorf(fmt.Sprintf("%s.phrases.%d", at, k), "empty phrase")
				return Check{}, false
			}
		}
		c = NoRefusal(phrases...)
	case KindToolCall:
		if len(tools) == 0 {
			l.errorf(at, "a tool_call check needs the case to declare tools")
			return Check{}, false
		}
		c, err = ToolCall(cs.Tool, tools)
		field = at + ".tool"
	case KindFinishReason:
		if len(cs.Expect) == 0 {
			l.errorf(at+".expect", "missing: list the accepted finish reasons")
			return Check{}, false
		}
		var rs []llm.FinishReason
		for k, r := range cs.Expect {
			switch llm.FinishReason(r) {
			case llm.FinishStop, llm.FinishLength, llm.FinishToolCalls, llm.FinishContentFilter, llm.FinishError:
				rs = append(rs, llm.FinishReason(r))
			default:
				l.errorf(fmt.Sprintf("%s.expect.%d", at, k), "%q is not stop, length, tool_calls, content_filter or error", r)
				return Check{}, false
			}
		}
		c = FinishReason(rs...)
	}
	if err != nil {
		l.errorf(field, "%v", err)
		return Check{}, false
	}
	return c.Named(cs.Name), true
}

func kindList() string {
	parts := make([]string, len(Kinds))
	for i, k := range Kinds {
		parts[i] = string(k)
	}
	return strings.Join(parts, ", ")
}

// schema returns the JSON of an inline schema or a schema file under at.
func (l *loader) schema(at string, inline any, file string, required bool) []byte {
	return l.schemaField(at, "schema", inline, file, required)
}

func (l *loader) schemaField(at, field string, inline any, file string, required bool) []byte {
	switch {
	case inline != nil && file != "":
		l.errorf(at+"."+field+"_file", "set only one of %s and %s_file", field, field)
		return nil
	case inline != nil:
		b, err := json.Marshal(inline)
		if err != nil {
			l.errorf(at+"."+field, "not representable as JSON: %v", err)
			return nil
		}
		if _, err := compileSchema("x.json", b); err != nil {
			l.errorf(at+"."+field, "%v", err)
			return nil
		}
		return b
	case file != "":
		b, err := os.ReadFile(l.path(file))
		if err != nil {
			l.errorf(at+"."+field+"_file", "%v", err)
			return nil
		}
		if _, err := compileSchema(file, b); err != nil {
			l.errorf(at+"."+field+"_file", "%s: %v", file, err)
			return nil
		}
		return bytes.TrimSpace(b)
	case required:
		l.errorf(at+"."+field, "missing: set %s or %s_file", field, field)
	}
	return nil
}

func (l *loader) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.dir, p)
}

// readPrompts reads a JSON Lines prompts file; errors name file:line.
func readPrompts(path string) ([]prompt, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []prompt
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var rec struct {
			Name   string `json:"name"`
			Prompt string `json:"prompt"`
			System string `json:"system"`
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if strings.TrimSpace(rec.Prompt) == "" {
			return nil, fmt.Errorf("%s:%d: prompt: missing", path, line)
		}
		out = append(out, prompt{name: rec.Name, system: rec.System, text: rec.Prompt})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	if len(out) == 0 {
		return nil, errors.New(path + ": no prompts")
	}
	return out, nil
}
