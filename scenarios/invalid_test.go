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
// the run than a demoted target likely needs to recover (the health
// cooldown's ramp or the breaker's open_for, then one SLO window) gets a
// warning at its `for`; one with room gets none.
func TestWarningsRecoveryCannotFit(t *testing.T) {
	cases := []struct {
		file string
		want []string
	}{
		{"testdata/fidelity.yaml", []string{`testdata/fidelity.yaml:11:36: timeline.0.for: step "gpt4o-503" ends at 9s, 3s before the run ends, but a target demoted near the step's end needs about 1m4s to recover (90% of policy.health.cooldown to ramp its traffic back, or policy.breaker.open_for, then one SLO window for its share to show it): its time to recover will likely read "not recovered"; lengthen duration or end the step earlier`}},
		// 1m left, 1m4s needed (cooldown 1m, SLO window 10s): 7 of 8 seeds
		// end "not recovered".
		{"../examples/gamedays/silent-corruption.yaml", []string{`../examples/gamedays/silent-corruption.yaml:27:10: timeline.0.for: step "broken-json" ends at 4m0s, 1m0s before the run ends, but a target demoted near the step's end needs about 1m4s to recover (90% of policy.health.cooldown to ramp its traffic back, or policy.breaker.open_for, then one SLO window for its share to show it): its time to recover will likely read "not recovered"; lengthen duration or end the step earlier`}},
		// Health off (failures: 1000 in 10s at 16/s at most): only the
		// breaker's 30s counts, and 1m is room enough.
		{"../examples/gamedays/retry-storm-budget-on.yaml", nil},
		{"testdata/short.yaml", []string{`testdata/short.yaml:12:10: timeline.0.for: step "gpt4o-down" ends at 1m0s, 30s before the run ends, but a target demoted near the step's end needs about 1m4s to recover (90% of policy.health.cooldown to ramp its traffic back, or policy.breaker.open_for, then one SLO window for its share to show it): its time to recover will likely read "not recovered"; lengthen duration or end the step earlier`}},
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
