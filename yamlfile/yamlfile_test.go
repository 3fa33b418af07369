package yamlfile

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type step struct {
	Name string   `yaml:"name"`
	At   Duration `yaml:"at"`
	P    Percent  `yaml:"probability"`
}

type file struct {
	Version int    `yaml:"version"`
	Steps   []step `yaml:"steps"`
}

func TestDecodeOK(t *testing.T) {
	var f file
	doc, err := Decode("a.yaml", []byte("version: 1\nsteps:\n  - name: x\n    at: 90s\n    probability: 50%\n  - name: y\n    probability: 0.25\n"), &f)
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, f.Steps[0].At.D())
	require.InDelta(t, 0.5, f.Steps[0].P.F(), 1e-9)
	require.InDelta(t, 0.25, f.Steps[1].P.F(), 1e-9)
	line, col := doc.Pos("steps.1.name")
	require.Equal(t, []int{6, 11}, []int{line, col})
	e := doc.Errorf("steps.1.target", "unknown target %q", "x/y")
	require.Equal(t, "a.yaml:6:5: steps.1.target: unknown target \"x/y\"", e.Error())
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"unknown field", "version: 1\nsteps:\n  - name: x\n    colour: red\n", "a.yaml:4:5: colour: unknown field"},
		{"bad duration", "steps:\n  - at: 90\n", "a.yaml:2:9: steps.0.at: invalid duration \"90\""},
		{"negative duration", "steps:\n  - at: -5s\n", "a.yaml:2:9: steps.0.at: duration \"-5s\" must not be negative"},
		{"percent out of range", "steps:\n  - probability: 150%\n", "a.yaml:2:18: steps.0.probability: 150% is not a percentage between 0% and 100%"},
		{"type mismatch", "version: one\n", "a.yaml:1:10: version: want a whole number, got \"one\""},
		{"syntax", "version: 1\n  steps: [\n", "a.yaml:2"},
		{"duplicate key", "version: 1\nversion: 2\n", "a.yaml:2:1: version: duplicate key"},
		{"empty", "", "a.yaml:1:1: empty document"},
		{"percent without sign", "steps:\n  - probability: 15\n", `a.yaml:2:18: steps.0.probability: 15 is not a share between 0 and 1 (did you mean "15%"?)`},
		{"list for a number", "version: [1]\n", "a.yaml:1:10: version: want a whole number, got a list"},
		{"misspelt field", "version: 1\nsteps:\n  - nmae: x\n", `a.yaml:3:5: nmae: unknown field (did you mean "name"?)`},
		{"unknown field lists the known", "version: 1\nsteps:\n  - colour: x\n", `a.yaml:3:5: colour: unknown field (one of at, name, probability)`},
		{"tab", "version: 1\nsteps:\n  - name: x\n\t at: 5s\n", "a.yaml:4:1: tab in indentation: YAML indents with spaces"},
		{"indented too deep", "version: 1\nsteps:\n  - name: x\n      at: 5s\n", "a.yaml:4:7: unexpected indentation: 6 spaces where the line above allows 4"},
		{"indented to no level", "version: 1\nsteps:\n    - name: x\n      at: 5s\n  - name: y\n", "a.yaml:5:3: indentation of 2 spaces matches no enclosing level (the lines above use 0, 4, 6)"},
		{"too large", "version: 1\n#" + strings.Repeat("x", MaxSize) + "\n", "a.yaml: the file is 4.0 MiB; brownout reads YAML files of up to 4.0 MiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f file
			_, err := Decode("a.yaml", []byte(tc.in), &f)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			var es Errors
			require.True(t, errors.As(err, &es))
		})
	}
}

func TestErrorsCollectsAll(t *testing.T) {
	var f file
	_, err := Decode("a.yaml", []byte("version: 1\nsteps:\n  - name: x\n    colour: red\n  - size: 3\n"), &f)
	var es Errors
	require.True(t, errors.As(err, &es))
	require.Len(t, es, 2)
}

// TestDecodeGoesOnAfterABadValue: a rejected value does not stop decoding,
// so the fields after it are set and a validator sees the whole file.
func TestDecodeGoesOnAfterABadValue(t *testing.T) {
	var f file
	doc, err := Decode("a.yaml", []byte("version: 1\nsteps:\n  - at: 5 minutes\n    name: x\n    probability: 15\n  - name: y\n"), &f)
	var es Errors
	require.True(t, errors.As(err, &es))
	require.Len(t, es, 2)
	require.Equal(t, []string{"x", "y"}, []string{f.Steps[0].Name, f.Steps[1].Name})
	require.NotNil(t, doc)
}

// TestSettle: validation errors about a value that failed to decode (or
// about what it holds) are dropped; others are kept, sorted, once each.
func TestSettle(t *testing.T) {
	var f file
	doc, err := Decode("a.yaml", []byte("version: 1\nsteps:\n  - at: 5 minutes\n    name: x\n"), &f)
	var decode Errors
	require.True(t, errors.As(err, &decode))
	validate := Errors{
		doc.Errorf("steps.0.at", "required"),
		doc.Errorf("steps.0.name", "duplicate step name"),
		doc.Errorf("steps.0.name", "duplicate step name"),
		doc.Errorf("version", "must be 2"),
	}
	got := doc.Settle(decode, validate)
	require.Equal(t, "a.yaml:1:10: version: must be 2\n"+
		"a.yaml:3:9: steps.0.at: invalid duration \"5 minutes\" (use a unit, e.g. \"30s\", \"2m\", \"250ms\")\n"+
		"a.yaml:4:11: steps.0.name: duplicate step name", got.Error())
}

func TestSuggest(t *testing.T) {
	kinds := []string{"http_error", "stall", "cut", "truncate", "token_rate"}
	require.Equal(t, "http_error", Suggest("http_eror", kinds))
	require.Equal(t, "stall", Suggest("stal", kinds))
	require.Equal(t, "", Suggest("latency", kinds))
	require.Equal(t, "", Suggest("x", nil))
}
