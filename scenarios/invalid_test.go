package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/internal/golden"
)

// TestInvalidCorpus: each broken file of testdata/invalid gets the messages
// of its golden file — every independent problem once, at its line:col, in
// plain words (go test -run InvalidCorpus -update rewrites them).
func TestInvalidCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			_, err := Load(f)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrInvalid))
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".golden", []byte(err.Error()+"\n"))
		})
	}
}

// TestInputSizeCap: a file past yamlfile.MaxSize is refused before parsing.
func TestInputSizeCap(t *testing.T) {
	f := filepath.Join(t.TempDir(), "huge.yaml")
	require.NoError(t, os.WriteFile(f, []byte("version: 1\n#"+strings.Repeat("x", 50<<20)+"\n"), 0o644))
	_, err := Load(f)
	require.ErrorIs(t, err, ErrInvalid)
	require.Equal(t, f+": the file is 50.0 MiB; brownout reads YAML files of up to 4.0 MiB", err.Error())
}

// TestWarningsRecoveryCannotFit: a fault step ending closer to the end of
// the run than the least recovery time (health window, breaker open_for)
// gets a warning at its `for`; one with room gets none.
func TestWarningsRecoveryCannotFit(t *testing.T) {
	cases := []struct {
		file string
		want []string
	}{
		{"testdata/fidelity.yaml", []string{`testdata/fidelity.yaml:11:36: timeline.0.for: step "gpt4o-503" ends at 9s, 3s before the run ends, but a demoted target needs at least 30s to take traffic back (policy.health.window or policy.breaker.open_for): its time to recover can only read "not recovered"; lengthen duration or end the step earlier`}},
		{"testdata/short.yaml", nil},
	}
	for _, tc := range cases {
		s, err := Load(tc.file)
		require.NoError(t, err)
		var got []string
		for _, w := range s.Warnings() {
			got = append(got, w.Error())
		}
		require.Equal(t, tc.want, got, tc.file)
	}
}
