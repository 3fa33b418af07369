package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/scenarios"
)

// TestGamedayRunOutputJSON: --output json puts the result on stdout, byte
// for byte what --out writes to result.json and nothing else; the "wrote"
// line goes to stderr. The exit status is the verdict's, as in text mode.
func TestGamedayRunOutputJSON(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "gameday", "run", "../../scenarios/testdata/short.yaml", "--output", "json", "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	file, err := os.ReadFile(filepath.Join(dir, "result.json"))
	require.NoError(t, err)
	require.Equal(t, string(file), out, "stdout is result.json")
	assert.Contains(t, errOut, "wrote "+dir)

	code, out, errOut = runCLI(t, "gameday", "run", "../../scenarios/testdata/failing.yaml", "-o", "json")
	require.Equal(t, exitFailed, code, errOut)
	var res struct {
		Pass *bool `json:"pass"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), "stdout holds JSON only")
	require.NotNil(t, res.Pass)
	assert.False(t, *res.Pass)
}

// TestGamedayRunQuiet: --quiet prints nothing but errors; the exit status
// carries the verdict.
func TestGamedayRunQuiet(t *testing.T) {
	tests := []struct {
		file string
		code int
	}{
		{"../../scenarios/testdata/short.yaml", exitOK},
		{"../../scenarios/testdata/failing.yaml", exitFailed},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, "gameday", "run", tt.file, "--quiet", "--out", t.TempDir())
		assert.Equal(t, tt.code, code, tt.file)
		assert.Empty(t, out, tt.file)
		assert.Empty(t, errOut, tt.file)
	}
	code, out, errOut := runCLI(t, "gameday", "run", "nope.yaml", "-q")
	assert.Equal(t, exitUsageErr, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "nope.yaml")
}

// TestGamedaySweepOutputJSON: a sweep's JSON is sweep.json's.
func TestGamedaySweepOutputJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "gameday", "run", "../../scenarios/testdata/short.yaml", "--seeds", "2", "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var sw scenarios.Sweep
	require.NoError(t, json.Unmarshal([]byte(out), &sw))
	assert.Equal(t, []uint64{7, 8}, sw.Seeds)
}

// TestGamedayValidateOutputJSON: every file's verdict with its errors as
// data (file, line, col, field, message); exit 2 when one is invalid.
func TestGamedayValidateOutputJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "gameday", "validate", "../../scenarios/testdata/short.yaml", "../../scenarios/testdata/invalid.yaml", "--output", "json")
	require.Equal(t, exitUsageErr, code, errOut)
	assert.Contains(t, errOut, "1 of 2 files invalid")
	var v struct {
		Files []struct {
			File   string `json:"file"`
			Valid  bool   `json:"valid"`
			Errors []struct {
				File    string `json:"file"`
				Line    int    `json:"line"`
				Col     int    `json:"col"`
				Field   string `json:"field"`
				Message string `json:"message"`
			} `json:"errors"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	require.Len(t, v.Files, 2)
	assert.True(t, v.Files[0].Valid)
	assert.Empty(t, v.Files[0].Errors)
	require.False(t, v.Files[1].Valid)
	found := false
	for _, e := range v.Files[1].Errors {
		if e.Field == "timeline.2.target" {
			found = true
			assert.Equal(t, [2]int{25, 13}, [2]int{e.Line, e.Col})
			assert.Equal(t, "../../scenarios/testdata/invalid.yaml", e.File)
			assert.NotEmpty(t, e.Message)
		}
	}
	assert.True(t, found, out)

	code, out, _ = runCLI(t, "gameday", "validate", "../../scenarios/testdata/short.yaml", "--quiet")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, out)
	code, out, errOut = runCLI(t, "gameday", "validate", "../../scenarios/testdata/invalid.yaml", "--quiet")
	assert.Equal(t, exitUsageErr, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "invalid.yaml:25:13: timeline.2.target", "quiet keeps the problems")
}

// TestEvalsRunOutputJSON: stdout is the report --out writes; the verdict
// line moves to stderr.
func TestEvalsRunOutputJSON(t *testing.T) {
	var auth []string
	var mu sync.Mutex
	srv := openAIServer(t, true, &auth, &mu)
	file := filepath.Join(t.TempDir(), "report.json")
	code, out, errOut := runCLI(t, "evals", "run", writeSuite(t), "--target", "x/drifty", "--url", srv.URL, "--api-key-env", "NO_SUCH_KEY_VAR", "--output", "json", "--out", file)
	require.Equal(t, exitFailed, code, errOut)
	var rep evals.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, 1, rep.Passed)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.JSONEq(t, string(b), out)
	assert.Contains(t, errOut, "1 of 2 cases failed")
}

// TestOutputFlagErrors: an unknown --output is a usage error on every
// command that has the flag, before anything runs.
func TestOutputFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"gameday", "run", "../../scenarios/testdata/short.yaml"},
		{"gameday", "validate", "../../scenarios/testdata/short.yaml"},
		{"gameday", "compare", "../../scenarios/testdata/short.yaml", "--gateway", "a=http://127.0.0.1:1"},
		{"evals", "run", "suite.yaml", "--target", "a/b", "--url", "http://127.0.0.1:1"},
	} {
		code, out, errOut := runCLI(t, append(args, "--output", "yaml")...)
		assert.Equal(t, exitUsageErr, code, args)
		assert.Empty(t, out, args)
		assert.Contains(t, errOut, `--output: "yaml" is not text or json`, args)
	}
}
