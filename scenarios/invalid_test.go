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
