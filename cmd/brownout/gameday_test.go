package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

func TestGamedayRun(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "gameday", "run", "../../scenarios/testdata/short.yaml", "--seed", "7", "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "PASS  game day short (sim, seed 7,")
	require.NotContains(t, out, "\x1b[", "no colour when stdout is not a terminal")
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	require.NoError(t, err)
	var res struct {
		Schema int    `json:"schema"`
		Seed   uint64 `json:"seed"`
		Pass   bool   `json:"pass"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	require.Equal(t, score.SchemaVersion, res.Schema)
	require.True(t, res.Pass)
	for _, f := range []string{"events.jsonl", "report.html", "report.md", "junit.xml"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		require.Positive(t, fi.Size(), f)
	}
}

func TestGamedaySeedSweep(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "gameday", "run", "../../scenarios/testdata/short.yaml", "--seeds", "3", "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "short — sim, 3 seeds (7…9)")
	require.Contains(t, out, "3/3 passed")
	var sw scenarios.Sweep
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sw))
	require.Equal(t, []uint64{7, 8, 9}, sw.Seeds)

	code, _, _ = runCLI(t, "gameday", "run", "../../scenarios/testdata/short.yaml", "--seeds", "3", "--mode", "live")
	require.Equal(t, exitUsageErr, code, "a sweep is simulated")
	code, _, errOut = runCLI(t, "gameday", "run", "../../scenarios/testdata/short.yaml", "--traces")
	require.Equal(t, exitUsageErr, code, "traces come from a live run")
	require.Contains(t, errOut, "--traces: traces come from the gateway of a live run")
	code, _, errOut = runCLI(t, "report", "diff", filepath.Join(dir, "sweep.json"), filepath.Join(dir, "sweep.json"))
	require.Equal(t, exitOK, code, errOut)
}

func TestGamedayExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"expectations fail", []string{"gameday", "run", "../../scenarios/testdata/failing.yaml"}, exitFailed, "FAIL"},
		{"invalid file", []string{"gameday", "run", "../../scenarios/testdata/invalid.yaml"}, exitUsageErr, ""},
		{"missing file", []string{"gameday", "run", "nope.yaml"}, exitUsageErr, ""},
		{"bad mode", []string{"gameday", "run", "--mode", "dream", "../../scenarios/testdata/short.yaml"}, exitUsageErr, ""},
		{"validate ok", []string{"gameday", "validate", "../../scenarios/testdata/short.yaml"}, exitOK, "short.yaml: ok"},
		{"validate reports every problem", []string{"gameday", "validate", "../../scenarios/testdata/short.yaml", "../../scenarios/testdata/invalid.yaml"},
			exitUsageErr, "invalid.yaml:25:13: timeline.2.target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			require.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			require.Contains(t, out, tt.out)
		})
	}
}

// TestGamedayMissingFile: a misspelt game-day file is an input error that
// names the file meant.
func TestGamedayMissingFile(t *testing.T) {
	code, out, errOut := runCLI(t, "gameday", "run", "../../examples/gamedays/quick-429-brust.yaml")
	require.Equal(t, exitUsageErr, code)
	require.Empty(t, out)
	require.Equal(t, "error: ../../examples/gamedays/quick-429-brust.yaml: no such file; did you mean ../../examples/gamedays/quick-429-burst.yaml?\n", errOut)
}

// TestMain lets a test run this package's main in a child process (the
// test binary re-executed with BROWNOUT_TEST_AS_CLI=1), to send it real
// signals.
func TestMain(m *testing.M) {
	if os.Getenv("BROWNOUT_TEST_AS_CLI") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestCtrlCWritesPartialReport: Ctrl-C (SIGINT to the process) in a live
// game day stops it cleanly: exit 1, and every file written — result.json
// marked aborted, the report saying so, the events of the part played.
func TestCtrlCWritesPartialReport(t *testing.T) {
	if testing.Short() {
		t.Skip("a live run interrupted after a few seconds")
	}
	_, _, game := liveFiles(t, "60s")
	out := filepath.Join(t.TempDir(), "out")
	base := freePort(t) - 3
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "--base-port", fmt.Sprint(base), "gameday", "run", game, "--mode", "live", "--out", out)
	cmd.Env = append(os.Environ(), "BROWNOUT_TEST_AS_CLI=1")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	require.NoError(t, cmd.Start())
	// Interrupt once the run reports progress (traffic is flowing).
	var log bytes.Buffer
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "left") { // the progress line's time left
			break
		}
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt), "log:\n%s", log.String())
	rest, _ := io.ReadAll(stderr)
	log.Write(rest)
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr:\n%s", log.String())
	require.Equal(t, exitFailed, ee.ExitCode(), "stderr:\n%s", log.String())

	var res struct {
		Aborted bool `json:"aborted"`
		Overall struct {
			Availability struct {
				Requests int `json:"requests"`
			} `json:"availability"`
		} `json:"overall"`
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	require.NoError(t, err, "stderr:\n%s", log.String())
	require.NoError(t, json.Unmarshal(b, &res))
	require.True(t, res.Aborted, "result.json marked aborted")
	require.Positive(t, res.Overall.Availability.Requests, "the requests played before Ctrl-C are scored")
	for _, f := range []string{"events.jsonl", "report.md", "report.html", "junit.xml"} {
		require.FileExists(t, filepath.Join(out, f))
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	require.Contains(t, strings.ToLower(string(md)), "aborted")
}
