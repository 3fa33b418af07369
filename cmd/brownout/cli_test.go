package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExitCodes: 0 success, 1 a failed verdict, 2 usage or input errors —
// unknown commands at every level with a suggestion, bad flags, bad files,
// an --out that cannot be written (before the run, not after).
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"version flag", []string{"--version"}, exitOK, ""},
		{"help", []string{"--help"}, exitOK, ""},
		{"group without subcommand shows help", []string{"gameday"}, exitOK, ""},
		{"unknown top-level command", []string{"gamedya"}, exitUsageErr, `unknown command "gamedya"`},
		{"unknown subcommand", []string{"gameday", "rnu"}, exitUsageErr, `unknown command "rnu" for "brownout gameday" (did you mean run?); commands: compare, run, validate`},
		{"unknown report subcommand", []string{"report", "difff"}, exitUsageErr, `(did you mean diff?)`},
		{"unknown usage subcommand", []string{"usage", "reprot"}, exitUsageErr, `(did you mean report?)`},
		{"unknown flag", []string{"gameday", "run", "--seeed", "1", "x.yaml"}, exitUsageErr, "unknown flag: --seeed"},
		{"invalid file", []string{"gameday", "validate", "../../scenarios/testdata/invalid/tab.yaml"}, exitUsageErr, "1 of 1 files invalid"},
		{"out is not writable", []string{"gameday", "run", "../../scenarios/testdata/short.yaml", "--out", filepath.Join(notDir, "out")}, exitUsageErr, "--out: mkdir " + notDir + ": not a directory"},
		{"failed expectations", []string{"gameday", "run", "../../scenarios/testdata/failing.yaml"}, exitFailed, ""},
		{"passing game day", []string{"gameday", "run", "../../scenarios/testdata/short.yaml"}, exitOK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			assert.Equal(t, tc.code, code, errOut)
			assert.Contains(t, errOut, tc.stderr)
		})
	}
}

// TestEveryCommandHasExamples: each command's help has an Examples section,
// and the root's help states the exit codes.
func TestEveryCommandHasExamples(t *testing.T) {
	root := NewCmdRoot(&Factory{IO: IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}})
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		n++
		assert.NotEmpty(t, c.Example, "%s has no Examples section", c.CommandPath())
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	assert.GreaterOrEqual(t, n, 17)
	assert.Contains(t, root.Long, "Exit status")
	_, out, _ := runCLI(t, "--help")
	assert.Contains(t, out, "2  usage or input error")
}

// TestInitStarterPasses: `brownout init DIR` writes a starter that
// `gameday run` passes as written, and never overwrites it.
func TestInitStarterPasses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "starter")
	code, out, errOut := runCLI(t, "init", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "next: brownout gameday run "+filepath.Join(dir, "gameday.yaml"))
	code, out, errOut = runCLI(t, "gameday", "run", filepath.Join(dir, "gameday.yaml"), "--out", filepath.Join(dir, "out"))
	require.Equal(t, exitOK, code, errOut+out)
	assert.Contains(t, out, "PASS  game day")
	code, _, errOut = runCLI(t, "init", dir)
	assert.Equal(t, exitUsageErr, code)
	assert.Contains(t, errOut, "file exists")
}
