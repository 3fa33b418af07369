package yamlfile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type portsDoc struct {
	Listen  string `yaml:"listen"`
	BaseURL string `yaml:"base_url"`
	Count   int    `yaml:"count"`
}

// TestBasePortPlaceholders: ${BROWNOUT_BASE_PORT+N} reads as the base
// (BROWNOUT_BASE_PORT, or DefaultBasePort) plus N, and errors after a
// placeholder on its line keep the columns of the file as written.
func TestBasePortPlaceholders(t *testing.T) {
	t.Setenv(BasePortEnv, "")
	var d portsDoc
	_, err := Decode("f.yaml", []byte("listen: 127.0.0.1:${BROWNOUT_BASE_PORT+80}\nbase_url: http://127.0.0.1:${BROWNOUT_BASE_PORT}/v1\n"), &d)
	require.NoError(t, err)
	assert.Equal(t, portsDoc{Listen: "127.0.0.1:8080", BaseURL: "http://127.0.0.1:8000/v1"}, d)

	t.Setenv(BasePortEnv, "20000")
	d = portsDoc{}
	_, err = Decode("f.yaml", []byte("listen: 127.0.0.1:${BROWNOUT_BASE_PORT+1101}\n"), &d)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:21101", d.Listen)

	// A type error after a placeholder, on the same line: the column is
	// the written file's.
	line := `{listen: "127.0.0.1:${BROWNOUT_BASE_PORT+1}", count: many}`
	_, err = Decode("f.yaml", []byte(line+"\n"), &portsDoc{})
	require.Error(t, err)
	assert.Equal(t, `f.yaml:1:54: count: want a whole number, got "many"`, err.Error())
	// An unknown field after a placeholder.
	_, err = Decode("f.yaml", []byte(`{listen: "127.0.0.1:${BROWNOUT_BASE_PORT+1}", cuont: 1}`+"\n"), &portsDoc{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "f.yaml:1:47: cuont: unknown field")
}

func TestBasePortErrors(t *testing.T) {
	cases := []struct {
		base, src, want string
	}{
		{"", "listen: 127.0.0.1:${BROWNOUT_BASE_PORT+eighty}\n", "f.yaml:1:19: ${BROWNOUT_BASE_PORT+eighty}: want ${BROWNOUT_BASE_PORT+N}, N a whole number of 0 or more"},
		{"abc", "a: 1\nlisten: 127.0.0.1:${BROWNOUT_BASE_PORT+1}\n", `f.yaml:2:19: BROWNOUT_BASE_PORT="abc" is not a port number (1-65535)`},
		{"65000", "listen: 127.0.0.1:${BROWNOUT_BASE_PORT+1101}\n", "f.yaml:1:19: ${BROWNOUT_BASE_PORT+1101} is port 66101 with BROWNOUT_BASE_PORT=65000: past 65535; choose a lower base"},
	}
	for _, tc := range cases {
		t.Setenv(BasePortEnv, tc.base)
		_, err := Decode("f.yaml", []byte(tc.src), &portsDoc{})
		require.Error(t, err)
		assert.Equal(t, tc.want, err.Error())
	}
}

func TestWrittenCol(t *testing.T) {
	// "x: ${BROWNOUT_BASE_PORT+1} ${BROWNOUT_BASE_PORT} z" -> "x: 8001 8000 z"
	edits := map[int][]edit{1: {{col: 4, old: 23, new: 4}, {col: 28, old: 21, new: 4}}}
	for _, tc := range []struct{ expanded, written int }{{1, 1}, {4, 4}, {6, 4}, {8, 27}, {9, 28}, {12, 28}, {13, 49}, {14, 50}} {
		assert.Equal(t, tc.written, writtenCol(edits, 1, tc.expanded), "expanded col %d", tc.expanded)
	}
	assert.Equal(t, 7, writtenCol(edits, 2, 7))
}
