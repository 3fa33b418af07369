package yamlfile

import (
	"errors"
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
		{"bad duration", "steps:\n  - at: 90\n", "a.yaml:2:9: invalid duration \"90\""},
		{"negative duration", "steps:\n  - at: -5s\n", "a.yaml:2:9: duration \"-5s\" must not be negative"},
		{"percent out of range", "steps:\n  - probability: 150%\n", "a.yaml:2:18: percentage \"150%\" must be between 0% and 100%"},
		{"type mismatch", "version: one\n", "a.yaml:1:10: cannot unmarshal !!str `one` into int"},
		{"syntax", "version: 1\n  steps: [\n", "a.yaml:2"},
		{"duplicate key", "version: 1\nversion: 2\n", "a.yaml:2:1: version: duplicate key"},
		{"empty", "", "a.yaml:1:1: empty document"},
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
