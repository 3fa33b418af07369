package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeCheckRefusesWhatServeRefuses: each configuration fails `serve
// --check` and `serve` alike, with the same message, before any traffic.
func TestServeCheckRefusesWhatServeRefuses(t *testing.T) {
	dir := t.TempDir()
	const base = "version: 1\nproviders:\n  - {name: a, kind: openai, base_url: \"http://127.0.0.1:9/v1\"}\nroutes:\n  - {name: chat, targets: [{provider: a, model: m}]}\n"
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	cases := []struct {
		name, extra string
		flags       []string
		want        string
	}{
		{"port out of range", "listen: 127.0.0.1:99999\n", nil, `:6:9: listen: "127.0.0.1:99999": port "99999" is not a number from 0 to 65535`},
		{"named port", "listen: 127.0.0.1:http\n", nil, `port "http" is not a number`},
		{"override out of range", "", []string{"--listen", "127.0.0.1:70000"}, `--listen: "127.0.0.1:70000": port "70000"`},
		{"usage directory missing", "usage: {file: " + filepath.Join(dir, "nope", "usage.jsonl") + "}\n", nil, "usage.file: directory " + filepath.Join(dir, "nope") + " does not exist"},
		{"usage file is a directory", "usage: {file: " + dir + "}\n", nil, "usage.file: " + dir + " is a directory"},
		{"usage directory is a file", "usage: {file: " + filepath.Join(notDir, "usage.jsonl") + "}\n", nil, "usage.file: " + notDir + " is not a directory"},
		{"tracing protocol", "tracing: {enabled: true, protocol: udp}\n", nil, `:6:36: tracing.protocol: unknown protocol "udp"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "gw.yaml")
			require.NoError(t, os.WriteFile(f, []byte(base+tc.extra), 0o644))
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a serve that got past its checks returns at once
			for _, check := range []bool{true, false} {
				args := append([]string{"serve", "-c", f}, tc.flags...)
				if check {
					args = append(args, "--check")
				}
				var out, errOut bytes.Buffer
				code := run(ctx, args, IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
				assert.Equal(t, exitUsageErr, code, "check=%v: %s", check, errOut.String())
				assert.Contains(t, errOut.String(), tc.want, "check=%v", check)
			}
		})
	}
}

func TestServeCheck(t *testing.T) {
	for _, k := range []string{"BROWNOUT_ADMIN_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"} {
		t.Setenv(k, "secret-"+k)
	}
	t.Setenv("ALERT_WEBHOOK_URL", "https://hooks.example.com/secret")
	example, err := filepath.Abs("../../examples/gateway/failover.yaml")
	require.NoError(t, err)
	t.Chdir(t.TempDir()) // usage.file: out/usage.jsonl, relative to the working directory
	code, _, errOut := runCLI(t, "serve", "-c", example, "--check")
	assert.Equal(t, exitUsageErr, code)
	assert.Contains(t, errOut, "usage.file: directory out does not exist")
	require.NoError(t, os.Mkdir("out", 0o755))
	code, out, errOut := runCLI(t, "serve", "-c", example, "--check")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "ok (3 providers, 2 routes)")

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("version: 1\nproviders:\n  - name: a\n    kind: openai\n    api_key: ${NOPE_KEY}\nlisten: nowhere\nroutes:\n  - {name: chat, targets: [{provider: a, model: m}]}\n"), 0o644))
	code, _, errOut = runCLI(t, "serve", "-c", bad, "--check")
	assert.Equal(t, exitUsageErr, code)
	assert.Contains(t, errOut, "bad.yaml:5:14: providers.0.api_key")
	assert.Contains(t, errOut, "NOPE_KEY is not set")
	assert.Contains(t, errOut, "bad.yaml:6:9: listen")

	code, _, errOut = runCLI(t, "serve")
	assert.Equal(t, exitUsageErr, code)
	assert.Contains(t, errOut, "--config is required")

	// Qualification: refuse fails the check naming route and target; warn
	// passes it with a warning.
	qual, err := os.ReadFile(filepath.Join(filepath.Dir(example), "../../gateway/testdata/qualification.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "qualification.json"), qual, 0o644))
	for _, mode := range []string{"refuse", "warn"} {
		f := filepath.Join(dir, mode+".yaml")
		require.NoError(t, os.WriteFile(f, []byte(`version: 1
providers:
  - {name: alpha, kind: openai, base_url: "http://127.0.0.1:9/v1"}
  - {name: gamma, kind: gemini, base_url: "http://127.0.0.1:9"}
routes:
  - name: chat
    targets:
      - {provider: alpha, model: gpt-4o}
      - {provider: gamma, model: gemini-flash}
qualification: {file: qualification.json, require: `+mode+"}\n"), 0o644))
		code, out, errOut = runCLI(t, "serve", "-c", f, "--check")
		if mode == "refuse" {
			assert.Equal(t, exitUsageErr, code)
			assert.Contains(t, errOut, "refuse.yaml:9:9: routes.0.targets.1: route \"chat\": fallback gamma:gemini-flash is not qualified")
			continue
		}
		assert.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "ok (2 providers, 1 routes)")
		assert.Contains(t, errOut, "warning: route \"chat\": fallback gamma:gemini-flash is not qualified")
	}
}

// TestServeRuns starts the gateway on a free port, checks it answers, and
// stops it by cancelling the context (as SIGTERM does).
func TestServeRuns(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gw.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`version: 1
providers:
  - {name: up, kind: openai_compatible, base_url: "http://127.0.0.1:1/v1"}
routes:
  - name: chat
    targets: [{provider: up, model: m}]
shutdown: {lame_duck: 0s}
`), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var logs bytes.Buffer
	go func() {
		done <- serveRun(ctx, &ServeOptions{IO: IOStreams{Out: io.Discard, ErrOut: io.Discard}, Config: path,
			Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(&logs, nil)), LookupEnv: os.LookupEnv,
			Ready: func(a string) { ready <- a }})
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/v1/models")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, string(b), `"id":"chat"`)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	assert.True(t, strings.Contains(logs.String(), "gateway stopped"))
}
