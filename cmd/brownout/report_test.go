package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios/score"
)

func writeResult(t *testing.T, dir string, r *score.Result) string {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	p := filepath.Join(dir, "result.json")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func sampleResult(ttd time.Duration) *score.Result {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &score.Result{Schema: score.SchemaVersion, Scenario: "s", Mode: score.ModeSim, Start: t0,
		Overall: score.Overall{Availability: score.Availability{Requests: 10, Served: 10, Success: 1}},
		Faults:  []score.FaultScore{{Step: "f", Target: "openai:gpt-4o", Start: t0, End: t0.Add(time.Minute), Detected: true, TTD: ttd}}}
}

func TestReportDiffExitCodes(t *testing.T) {
	dir := t.TempDir()
	old := writeResult(t, filepath.Join(dir, "a"), sampleResult(2*time.Second))
	worse := writeResult(t, filepath.Join(dir, "b"), sampleResult(9*time.Second))

	code, out, _ := runCLI(t, "report", "diff", old, worse)
	require.Equal(t, 0, code, "without --fail-on-regression a regression is reported, not failed")
	require.Contains(t, out, "REGRESSION")

	code, _, _ = runCLI(t, "report", "diff", "--fail-on-regression", old, worse)
	require.Equal(t, exitFailed, code)

	code, _, _ = runCLI(t, "report", "diff", "--fail-on-regression", "--tolerance-time", "10s", old, worse)
	require.Equal(t, 0, code)

	code, _, errOut := runCLI(t, "report", "diff", old, filepath.Join(dir, "missing.json"))
	require.Equal(t, exitUsageErr, code)
	require.Contains(t, errOut, "missing.json")
}

func TestReportTrendAndRender(t *testing.T) {
	dir := t.TempDir()
	writeResult(t, filepath.Join(dir, "q1"), sampleResult(5*time.Second))
	p := writeResult(t, filepath.Join(dir, "q2"), sampleResult(3*time.Second))
	page := filepath.Join(dir, "trend.html")
	code, out, errOut := runCLI(t, "report", "trend", dir, "--html", page)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "q1")
	require.Contains(t, out, "q2")
	require.FileExists(t, page)

	outDir := filepath.Join(dir, "render")
	code, out, errOut = runCLI(t, "report", "render", p, "--out", outDir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "s")
	for _, f := range []string{"report.html", "report.md", "junit.xml"} {
		require.FileExists(t, filepath.Join(outDir, f))
	}
}

func TestReportFidelity(t *testing.T) {
	dir := t.TempDir()
	sim := writeResult(t, filepath.Join(dir, "sim"), sampleResult(2*time.Second))
	live := sampleResult(2500 * time.Millisecond)
	live.Mode = score.ModeLive
	near := writeResult(t, filepath.Join(dir, "live"), live)
	live.Faults[0].TTD = 9 * time.Second
	far := writeResult(t, filepath.Join(dir, "far"), live)

	code, out, errOut := runCLI(t, "report", "fidelity", "--fail-on-disagreement", sim, near)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "| s | f · openai:gpt-4o | 2s / 2.5s |")

	code, out, _ = runCLI(t, "report", "fidelity", sim, far)
	require.Equal(t, 0, code, "without --fail-on-disagreement a difference is reported, not failed")
	require.Contains(t, out, "2s / 9s ✗")
	code, _, _ = runCLI(t, "report", "fidelity", "--fail-on-disagreement", sim, far)
	require.Equal(t, exitFailed, code)

	code, _, errOut = runCLI(t, "report", "fidelity", sim)
	require.Equal(t, exitUsageErr, code)
	require.Contains(t, errOut, "pairs")
	code, _, errOut = runCLI(t, "report", "fidelity", near, sim)
	require.Equal(t, exitUsageErr, code, "live first")
	require.Contains(t, errOut, "want a simulated and a live run")
}
