package evals

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
)

var invoiceSchema = []byte(`{
  "type": "object",
  "required": ["invoice_number", "total"],
  "properties": {
    "invoice_number": {"type": "string"},
    "total": {"type": "number", "minimum": 0}
  },
  "additionalProperties": false
}`)

var weatherTool = llm.Tool{Name: "get_weather", Parameters: []byte(`{
  "type": "object",
  "required": ["city"],
  "properties": {"city": {"type": "string", "minLength": 1}, "unit": {"enum": ["c", "f"]}}
}`)}

func text(s string) *llm.Response {
	return &llm.Response{Content: s, FinishReason: llm.FinishStop}
}

func must(c Check, err error) Check {
	if err != nil {
		panic(err)
	}
	return c
}

func TestChecks(t *testing.T) {
	schema := must(JSONSchema(invoiceSchema))
	re := must(Regex(`(?i)\bparis\b`))
	tool := must(ToolCall("get_weather", []llm.Tool{weatherTool, {Name: "noop"}}))
	anyTool := must(ToolCall("", []llm.Tool{weatherTool}))
	call := func(name, args string) *llm.Response {
		return &llm.Response{FinishReason: llm.FinishToolCalls, ToolCalls: []llm.ToolCall{{ID: "c1", Name: name, Arguments: args}}}
	}
	tests := []struct {
		name   string
		check  Check
		resp   *llm.Response
		pass   bool
		reason string // substring of the failure reason
	}{
		{"json_valid object", JSONValid(), text(` {"a": 1} `), true, ""},
		{"json_valid array", JSONValid(), text(`[1,2]`), true, ""},
		{"json_valid prose around", JSONValid(), text(`Here you go: {"a": 1}`), false, "not valid JSON"},
		{"json_valid code fence", JSONValid(), text("```json\n{\"a\": 1}\n```"), false, "not valid JSON"},
		{"json_valid truncated", JSONValid(), text(`{"a": [1, 2`), false, "unexpected end of JSON input"},
		{"json_valid empty", JSONValid(), text("  "), false, "content is empty"},
		{"json_valid nil response", JSONValid(), nil, false, "no response"},

		{"json_schema ok", schema, text(`{"invoice_number": "INV-7", "total": 12.5}`), true, ""},
		{"json_schema missing field", schema, text(`{"invoice_number": "INV-7"}`), false, "missing property 'total'"},
		{"json_schema wrong type", schema, text(`{"invoice_number": 7, "total": 1}`), false, "/invoice_number"},
		{"json_schema extra field", schema, text(`{"invoice_number": "a", "total": 1, "note": "x"}`), false, "additional properties 'note'"},
		{"json_schema negative", schema, text(`{"invoice_number": "a", "total": -1}`), false, "/total"},
		{"json_schema not json", schema, text(`total: 12`), false, "not valid JSON"},

		{"regex match", re, text("The capital is Paris."), true, ""},
		{"regex no match", re, text("The capital is Lyon."), false, "does not match"},

		{"contains", Contains("Paris"), text("It is Paris."), true, ""},
		{"contains missing", Contains("Paris"), text("It is paris."), false, `does not contain "Paris"`},
		{"not_contains", NotContains("As an AI"), text("It is Paris."), true, ""},
		{"not_contains present", NotContains("Paris"), text("It is Paris."), false, "at byte 6"},

		{"length chars ok", Length(Bounds{MinChars: 2, MaxChars: 5}), text("héllo"), true, ""},
		{"length too short", Length(Bounds{MinChars: 10}), text("short"), false, "5 characters, want at least 10"},
		{"length too long", Length(Bounds{MaxChars: 3}), text("four"), false, "4 characters, want at most 3"},
		{"length tokens ok", Length(Bounds{MaxTokens: 100}), &llm.Response{Content: "x", Usage: llm.Usage{OutputTokens: 100}}, true, ""},
		{"length tokens over", Length(Bounds{MaxTokens: 100}), &llm.Response{Content: "x", Usage: llm.Usage{OutputTokens: 101}}, false, "101 output tokens"},
		{"length tokens under", Length(Bounds{MinTokens: 5}), &llm.Response{Content: "x", Usage: llm.Usage{OutputTokens: 2}}, false, "want at least 5"},

		{"refusal none", NoRefusal(), text("Paris is the capital of France."), true, ""},
		{"refusal phrase", NoRefusal(), text("I'm sorry, but I can't help with that request."), false, "refusal phrase"},
		{"refusal curly apostrophe", NoRefusal(), text("I’m sorry, but I can’t do that."), false, "i'm sorry, but i can't"},
		{"refusal upper case", NoRefusal(), text("AS AN AI LANGUAGE MODEL I ..."), false, "as an ai language model"},
		{"refusal field", NoRefusal(), &llm.Response{Refusal: "I cannot do this."}, false, "provider refusal"},
		{"refusal content filter", NoRefusal(), &llm.Response{FinishReason: llm.FinishContentFilter}, false, "content_filter"},
		{"refusal custom phrases", NoRefusal("nope"), text("Nope, not today"), false, `"nope"`},
		{"refusal custom phrases pass", NoRefusal("nope"), text("I can't help with that"), true, ""},

		{"tool_call ok", tool, call("get_weather", `{"city": "Paris", "unit": "c"}`), true, ""},
		{"tool_call none", tool, text("It is sunny."), false, `no tool call, want a call to "get_weather"`},
		{"tool_call empty args", tool, call("get_weather", ""), false, "empty arguments"},
		{"tool_call empty object", tool, call("get_weather", " {} "), false, "empty arguments"},
		{"tool_call invalid json", tool, call("get_weather", `{"city": "Par`), false, "not valid JSON"},
		{"tool_call not object", tool, call("get_weather", `["Paris"]`), false, "not a JSON object"},
		{"tool_call schema violation", tool, call("get_weather", `{"city": "Paris", "unit": "kelvin"}`), false, "/unit"},
		{"tool_call missing required", tool, call("get_weather", `{"unit": "c"}`), false, "missing property 'city'"},
		{"tool_call wrong tool", tool, call("noop", `{"x": 1}`), false, `no call to "get_weather"`},
		{"tool_call any tool", anyTool, call("get_weather", `{"city": "Oslo"}`), true, ""},

		{"finish ok", FinishReason(llm.FinishStop, llm.FinishToolCalls), text("x"), true, ""},
		{"finish length", FinishReason(llm.FinishStop), &llm.Response{FinishReason: llm.FinishLength}, false, `finish_reason "length", want "stop"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.check.Run(tt.resp)
			require.Equal(t, tt.pass, r.Pass, "reason: %s", r.Reason)
			require.Equal(t, tt.check.Kind, r.Kind)
			if tt.pass {
				require.Empty(t, r.Reason)
			} else {
				require.Contains(t, r.Reason, tt.reason)
			}
		})
	}
}

func TestCheckConstructorErrors(t *testing.T) {
	_, err := JSONSchema([]byte(`{"type": "object"`))
	require.ErrorContains(t, err, "schema is not valid JSON")
	_, err = JSONSchema([]byte(`{"type": "objekt"}`))
	require.ErrorContains(t, err, "not a valid JSON Schema: at '/type': value must be one of")
	_, err = Regex(`(unclosed`)
	require.ErrorContains(t, err, "regex: error parsing regexp")
	_, err = ToolCall("missing", []llm.Tool{weatherTool})
	require.ErrorContains(t, err, `tool "missing" is not among the request's tools`)
	_, err = ToolCall("bad", []llm.Tool{{Name: "bad", Parameters: []byte(`{`)}})
	require.ErrorContains(t, err, `tool "bad" parameters`)
}

func TestNamedCheck(t *testing.T) {
	c := Contains("x").Named("mentions x")
	r := c.Run(text("y"))
	require.Equal(t, "mentions x", r.Check)
	require.Equal(t, "contains", Contains("x").Named("").Name)
}

func TestQuoteStartKeepsRunes(t *testing.T) {
	s := strings.Repeat("é", 30)
	q := quoteStart(s)
	require.True(t, strings.HasSuffix(q, "…"))
	require.NotContains(t, q, `\x`)
}
