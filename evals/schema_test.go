package evals

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func compiledSuiteSchema(t *testing.T) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SuiteSchema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("suite.schema.json", doc))
	s, err := c.Compile("suite.schema.json")
	require.NoError(t, err)
	return s
}

func yamlAsJSON(t *testing.T, src []byte) any {
	var v any
	require.NoError(t, yaml.Unmarshal(src, &v))
	b, err := json.Marshal(v)
	require.NoError(t, err)
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	return out
}

func TestSuiteSchemaAcceptsExample(t *testing.T) {
	s := compiledSuiteSchema(t)
	src, err := os.ReadFile("../examples/evals/support.yaml")
	require.NoError(t, err)
	require.NoError(t, s.Validate(yamlAsJSON(t, src)))
}

func TestSuiteSchemaRejects(t *testing.T) {
	s := compiledSuiteSchema(t)
	for name, src := range map[string]string{
		"unknown field":      "version: 1\nname: s\ncases: [{name: a, prompt: x, promt: y, checks: [{type: json_valid}]}]\n",
		"unknown check":      "version: 1\nname: s\ncases: [{name: a, prompt: x, checks: [{type: regexp}]}]\n",
		"regex without":      "version: 1\nname: s\ncases: [{name: a, prompt: x, checks: [{type: regex}]}]\n",
		"two prompt sources": "version: 1\nname: s\ncases: [{name: a, prompt: x, prompts: [y], checks: [{type: json_valid}]}]\n",
		"no prompt":          "version: 1\nname: s\ncases: [{name: a, checks: [{type: json_valid}]}]\n",
		"empty length":       "version: 1\nname: s\ncases: [{name: a, prompt: x, checks: [{type: length}]}]\n",
		"bad finish reason":  "version: 1\nname: s\ncases: [{name: a, prompt: x, checks: [{type: finish_reason, expect: [done]}]}]\n",
		"wrong version":      "version: 2\nname: s\ncases: [{name: a, prompt: x, checks: [{type: json_valid}]}]\n",
	} {
		t.Run(name, func(t *testing.T) {
			require.Error(t, s.Validate(yamlAsJSON(t, []byte(src))))
		})
	}
}

// The schema names exactly the YAML fields of the Go types.
func TestSuiteSchemaInSyncWithTypes(t *testing.T) {
	var root map[string]any
	require.NoError(t, json.Unmarshal(SuiteSchema, &root))
	defs := root["$defs"].(map[string]any)
	props := func(m any) []string {
		var out []string
		for k := range m.(map[string]any)["properties"].(map[string]any) {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	caseProps := defs["case"].(map[string]any)
	for _, tt := range []struct {
		typ    reflect.Type
		schema any
	}{
		{reflect.TypeFor[SuiteFile](), root},
		{reflect.TypeFor[CaseSpec](), caseProps},
		{reflect.TypeFor[CheckSpec](), defs["check"]},
		{reflect.TypeFor[Defaults](), root["properties"].(map[string]any)["defaults"]},
		{reflect.TypeFor[ResponseFormatSpec](), caseProps["properties"].(map[string]any)["response_format"]},
		{reflect.TypeFor[ToolSpec](), caseProps["properties"].(map[string]any)["tools"].(map[string]any)["items"]},
	} {
		require.Equal(t, yamlFields(tt.typ), props(tt.schema), tt.typ.Name())
	}
}

func yamlFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if opts == "inline" {
			out = append(out, yamlFields(f.Type)...)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
