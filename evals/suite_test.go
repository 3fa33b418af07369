package evals

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

func TestLoadExampleSuite(t *testing.T) {
	s, err := LoadSuite("../examples/evals/support.yaml")
	require.NoError(t, err)
	require.Equal(t, "support-assistant", s.Name)
	require.Equal(t, []string{"extract", "tools", "chat"}, s.Routes())
	var names []string
	for _, c := range s.Cases {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"extract-invoice/acme", "extract-invoice/northwind", "extract-invoice/pembroke",
		"extract-invoice/handwritten", "weather-lookup#1", "weather-lookup#2", "weather-lookup#3",
		"capital-of-france", "capital-of-france-streamed", "password-reset"}, names)

	ex := s.Cases[0]
	require.True(t, ex.Structured)
	require.Equal(t, 512, ex.Request.MaxTokens)
	require.Equal(t, 0.0, *ex.Request.Temperature)
	require.Equal(t, llm.ResponseJSONSchema, ex.Request.ResponseFormat.Type)
	require.Contains(t, string(ex.Request.ResponseFormat.Schema), "line_items")
	require.Equal(t, llm.RoleSystem, ex.Request.Messages[0].Role)
	require.Contains(t, ex.Request.Messages[1].Text(), "INV-2026-0412")

	good := &llm.Response{FinishReason: llm.FinishStop, Usage: llm.Usage{OutputTokens: 80}, Content: `{"invoice_number": "INV-2026-0412",
		"issue_date": "2026-03-12", "currency": "EUR", "total": 236.9,
		"line_items": [{"description": "Torque wrench", "quantity": 3, "unit_price": 49}]}`}
	for _, c := range ex.Checks {
		require.True(t, c.Run(good).Pass, "%s: %s", c.Name, c.Run(good).Reason)
	}
	drift := *good
	drift.Content = "```json\n" + good.Content + "\n```"
	require.False(t, ex.Checks[1].Run(&drift).Pass)

	tools := s.Cases[4]
	require.Equal(t, llm.ToolChoiceRequired, tools.Request.ToolChoice.Mode)
	require.False(t, tools.Structured)
	call := &llm.Response{FinishReason: llm.FinishToolCalls, ToolCalls: []llm.ToolCall{{Name: "get_weather", Arguments: `{"city": "Lisbon"}`}}}
	require.True(t, tools.Checks[0].Run(call).Pass)
	call.ToolCalls[0].Arguments = `{"city": "Lisbon", "unit": "kelvin"}`
	require.False(t, tools.Checks[0].Run(call).Pass)

	require.False(t, s.Cases[7].Request.Stream)
	require.True(t, s.Cases[8].Request.Stream)
	require.Equal(t, "mentions reset", s.Cases[9].Checks[0].Name)
}

func TestSuitePromptsFileAndDefaults(t *testing.T) {
	src := `version: 1
name: s
route: default-route
refusals: ["nope"]
cases:
  - name: file
    prompts_file: prompts.jsonl
    system: general
    checks:
      - type: refusal
  - name: schema
    route: other
    prompt: give me a
    max_tokens: 50
    temperature: 0.7
    checks:
      - type: json_schema
        schema_file: a.schema.json
`
	s, err := ParseSuite("testdata/suite.yaml", []byte(src))
	require.NoError(t, err)
	require.Len(t, s.Cases, 3)
	require.Equal(t, "file#1", s.Cases[0].Name)
	require.Equal(t, "file/two", s.Cases[1].Name)
	require.Equal(t, "default-route", s.Cases[0].Route)
	require.Equal(t, "general", s.Cases[0].Request.Messages[0].Text())
	require.Equal(t, "be terse", s.Cases[1].Request.Messages[0].Text(), "a JSONL system overrides the case's")
	require.False(t, s.Cases[0].Run(&llm.Response{Content: "Nope."}))
	require.True(t, s.Cases[0].Run(&llm.Response{Content: "I can't help with that"}), "suite refusals replace the defaults")
	sc := s.Cases[2]
	require.Equal(t, "other", sc.Route)
	require.True(t, sc.Structured)
	require.Equal(t, 50, sc.Request.MaxTokens)
	require.Equal(t, 0.7, *sc.Request.Temperature)
	require.True(t, sc.Run(&llm.Response{Content: `{"a": 1}`}))
	require.False(t, sc.Run(&llm.Response{Content: `{"b": 1}`}))
}

// Run on a Case: all checks pass (test helper).
func (c Case) Run(r *llm.Response) bool {
	for _, ch := range c.Checks {
		if !ch.Run(r).Pass {
			return false
		}
	}
	return true
}

func TestSuiteErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // each a full error line
	}{
		{"unknown field", "version: 1\nname: s\ncases:\n  - name: a\n    route: r\n    promt: hi\n    checks: [{type: json_valid}]\n",
			[]string{"bad.yaml:6:5: promt: unknown field"}},
		{"version and name", "version: 2\ncases: []\n",
			[]string{"bad.yaml:1:10: version: unsupported version 2 (want 1)", "bad.yaml:1:1: name: missing",
				"bad.yaml:2:8: cases: a suite needs at least one case"}},
		{"case problems collected", `version: 1
name: s
cases:
  - name: a
    prompt: hi
    checks:
      - type: regexp
      - type: regex
        pattern: "("
      - type: contains
        pattern: x
      - type: finish_reason
        expect: [done]
      - type: length
  - name: b
    route: r
    prompt: x
    prompts: [y]
    checks: []
`, []string{
			"bad.yaml:4:5: cases.0.route: missing (and the suite sets no default route)",
			"bad.yaml:7:15: cases.0.checks.0.type: unknown check \"regexp\": want one of json_valid, json_schema, regex, contains, not_contains, length, refusal, tool_call, finish_reason",
			"bad.yaml:9:18: cases.0.checks.1.pattern: regex: error parsing regexp: missing closing ): `(`",
			"bad.yaml:11:18: cases.0.checks.2.pattern: not used by a contains check",
			"bad.yaml:13:18: cases.0.checks.3.expect.0: \"done\" is not stop, length, tool_calls, content_filter or error",
			"bad.yaml:14:9: cases.0.checks.4: a length check needs min_chars, max_chars, min_tokens or max_tokens",
			"bad.yaml:17:13: cases.1.prompt: set only one of prompt, prompts and prompts_file",
			"bad.yaml:19:13: cases.1.checks: a case needs at least one check",
		}},
		{"schemas and tools", `version: 1
name: s
route: r
cases:
  - name: a
    prompt: hi
    response_format: {type: json_schema, schema: {type: objekt}}
    tool_choice: lookup
    checks:
      - type: json_schema
      - type: tool_call
  - name: b
    prompt: hi
    tools:
      - name: lookup
        parameters_file: missing.json
    checks:
      - type: tool_call
        tool: other
`, []string{
			"bad.yaml:7:50: cases.0.response_format.schema: not a valid JSON Schema: at '/type': value must be one of",
			"bad.yaml:7:22: cases.0.response_format.name: missing: json_schema formats need a name",
			"bad.yaml:8:18: cases.0.tool_choice: set but the case declares no tools",
			"bad.yaml:11:9: cases.0.checks.1: a tool_call check needs the case to declare tools",
			"bad.yaml:16:26: cases.1.tools.0.parameters_file: open testdata/missing.json: no such file or directory",
			"bad.yaml:19:15: cases.1.checks.0.tool: tool_call: tool \"other\" is not among the request's tools",
		}},
		{"json_schema check without any schema", "version: 1\nname: s\nroute: r\ncases:\n  - name: a\n    prompt: x\n    tool_choice: nope\n    tools: [{name: t}]\n    checks: [{type: json_schema}]\n",
			[]string{
				`bad.yaml:7:18: cases.0.tool_choice: "nope" is not auto, required, none or a tool of this case`,
				"bad.yaml:9:14: cases.0.checks.0.schema: missing: set schema or schema_file, or give the case a json_schema response_format",
			}},
		{"bad jsonl", "version: 1\nname: s\nroute: r\ncases:\n  - name: a\n    prompts_file: bad-prompts.jsonl\n    checks: [{type: json_valid}]\n",
			[]string{`bad.yaml:6:19: cases.0.prompts_file: testdata/bad-prompts.jsonl:2: json: unknown field "extra"`}},
		{"duplicate names", "version: 1\nname: s\nroute: r\ncases:\n  - name: a\n    prompt: x\n    checks: [{type: json_valid}]\n  - name: a\n    prompt: y\n    checks: [{type: json_valid}]\n",
			[]string{`bad.yaml:8:11: cases.1.name: case "a" already defined at 5:5`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSuite("testdata/bad.yaml", []byte(tt.src))
			require.Error(t, err)
			var es yamlfile.Errors
			require.ErrorAs(t, err, &es)
			var got []string
			for _, e := range es {
				got = append(got, strings.Replace(e.Error(), "testdata/", "", 1))
			}
			require.Len(t, got, len(tt.want), "got:\n%s", strings.Join(got, "\n"))
			for i := range tt.want {
				require.True(t, strings.HasPrefix(got[i], tt.want[i]), "error %d:\n got  %s\n want %s", i, got[i], tt.want[i])
			}
		})
	}
}

func TestLoadSuiteMissingFile(t *testing.T) {
	_, err := LoadSuite(filepath.Join(t.TempDir(), "nope.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
