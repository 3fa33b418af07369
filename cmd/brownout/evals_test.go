package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/openai"
)

const suiteYAML = `version: 1
name: mini
cases:
  - name: extract
    route: extract
    prompt: "Invoice INV-1, total 10 EUR"
    response_format: {type: json_object}
    checks:
      - type: json_valid
  - name: capital
    route: chat
    prompt: What is the capital of France?
    checks:
      - type: contains
        text: Paris
`

// openAIServer answers in the OpenAI format; drift wraps JSON in prose. It
// records the Authorization headers it saw.
func openAIServer(t *testing.T, drift bool, auth *[]string, mu *sync.Mutex) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		*auth = append(*auth, r.Header.Get("Authorization"))
		mu.Unlock()
		req, err := openai.Codec{}.DecodeRequest(body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		resp := &llm.Response{ID: "x", Model: req.Model, FinishReason: llm.FinishStop, Content: "Paris."}
		if req.ResponseFormat != nil {
			resp.Content = `{"invoice": "INV-1", "total": 10}`
			if drift {
				resp.Content = "Here you go: " + resp.Content
			}
		}
		b, _ := openai.Codec{}.EncodeResponse(resp)
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func writeSuite(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "suite.yaml")
	require.NoError(t, os.WriteFile(p, []byte(suiteYAML), 0o644))
	return p
}

func TestEvalsRunCommand(t *testing.T) {
	var auth []string
	var mu sync.Mutex
	srv := openAIServer(t, false, &auth, &mu)
	suite := writeSuite(t)
	out := filepath.Join(t.TempDir(), "report.json")
	t.Setenv("OPENAI_API_KEY", "sk-never-printed")
	code, stdout, stderr := runCLI(t, "evals", "run", suite, "--target", "openai/gpt-4o", "--url", srv.URL, "--out", out, "--min-pass-rate", "100%")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "suite mini against openai:gpt-4o: 2/2 passed (100.0%)")
	require.Contains(t, stdout, "extract  json_valid    1/1     100.0%")
	require.NotContains(t, stdout+stderr, "sk-never-printed")
	require.Equal(t, []string{"Bearer sk-never-printed", "Bearer sk-never-printed"}, auth)

	var rep evals.Report
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Equal(t, 2, rep.Passed)
	require.NotContains(t, string(b), "sk-never-printed")
}

func TestEvalsRunBelowMinPassRateFails(t *testing.T) {
	var auth []string
	var mu sync.Mutex
	srv := openAIServer(t, true, &auth, &mu)
	code, stdout, _ := runCLI(t, "evals", "run", writeSuite(t), "--target", "x/drifty", "--url", srv.URL, "--min-pass-rate", "90%", "--api-key-env", "NO_SUCH_KEY_VAR")
	require.Equal(t, exitFailed, code)
	require.Contains(t, stdout, "1/2 passed (50.0%)")
	require.Contains(t, stdout, "extract  extract  json_valid: content is not valid JSON")
	require.Contains(t, stdout, "pass rate 50.0% is below 90.0%")
	require.Equal(t, []string{"", ""}, auth, "no key variable, no Authorization header")
}

func TestEvalsQualifyCommand(t *testing.T) {
	var auth []string
	var mu sync.Mutex
	primary := openAIServer(t, false, &auth, &mu)
	drift := openAIServer(t, true, &auth, &mu)
	out := filepath.Join(t.TempDir(), "qualification.json")
	code, stdout, stderr := runCLI(t, "evals", "qualify", "--suite", writeSuite(t),
		"--primary", "openai/gpt-4o", "--fallback", "cheapco/cheap-1", "--threshold", "95%",
		"--endpoint", "openai="+primary.URL, "--endpoint", "cheapco=openai@"+drift.URL, "--out", out)
	require.Equal(t, exitFailed, code, "an unqualified fallback fails the command; stderr: %s", stderr)
	require.Contains(t, stdout, "unqualified  extract  openai:gpt-4o  cheapco:cheap-1  0/1     0.0%")
	require.Contains(t, stdout, "qualified    chat     openai:gpt-4o  cheapco:cheap-1  1/1     100.0%")
	q, err := evals.LoadQualification(out)
	require.NoError(t, err)
	require.False(t, q.Qualified("extract", "cheapco:cheap-1"))
	require.True(t, q.Qualified("chat", "cheapco:cheap-1"))
	require.InDelta(t, 0.95, q.Threshold, 1e-9)
}

func TestEvalsUsageErrors(t *testing.T) {
	suite := writeSuite(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("version: 1\nname: x\ncases:\n  - name: a\n    route: r\n    prompt: p\n    checks: [{type: nope}]\n"), 0o644))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"evals", "run", suite, "--url", "http://127.0.0.1:1"}, "--target is required"},
		{[]string{"evals", "run", suite, "--target", "nomodel", "--url", "http://127.0.0.1:1"}, `--target: target "nomodel": want provider/model`},
		{[]string{"evals", "run", suite, "--target", "a/b"}, "--url or --endpoint is required"},
		{[]string{"evals", "run", suite, "--target", "a/b", "--gateway", "--endpoint", "a=http://x"}, "--gateway needs --url"},
		{[]string{"evals", "run", suite, "--target", "a/b", "--url", "http://x", "--format", "cohere"}, "--format: unknown format \"cohere\""},
		{[]string{"evals", "run", bad, "--target", "a/b", "--url", "http://x"}, "bad.yaml:7:21: cases.0.checks.0.type: unknown check \"nope\""},
		{[]string{"evals", "run", suite, "--target", "a/b", "--url", "http://x", "--min-pass-rate", "lots"}, "--min-pass-rate"},
		{[]string{"evals", "qualify", "--suite", suite, "--fallback", "a/b", "--url", "http://x"}, "--primary is required"},
		{[]string{"evals", "qualify", "--suite", suite, "--primary", "a/b", "--url", "http://x"}, "--fallback is required"},
		{[]string{"evals", "qualify", "--suite", suite, "--primary", "a/b", "--fallback", "c/d", "--url", "http://x", "--threshold", "120%"}, "--threshold"},
		{[]string{"evals", "qualify", "--suite", suite, "--primary", "a/b", "--fallback", "c/d", "--endpoint", "nope"}, "--endpoint: endpoint \"nope\""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[1:], " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			require.Equal(t, exitUsageErr, code, stderr)
			require.Contains(t, stderr, tt.want)
		})
	}
}

func TestEvalsRunNoAnswerFails(t *testing.T) {
	code, stdout, _ := runCLI(t, "evals", "run", writeSuite(t), "--target", "a/b", "--url", "http://127.0.0.1:1")
	require.Equal(t, exitFailed, code)
	require.Contains(t, stdout, "no case got an answer from a:b")
}

// TestEvalsRunExitStatus: a failing case fails the command (exit 1) unless
// --min-pass-rate tolerates it; usage errors are 2; the help says so.
func TestEvalsRunExitStatus(t *testing.T) {
	var auth []string
	var mu sync.Mutex
	good := openAIServer(t, false, &auth, &mu)
	drifty := openAIServer(t, true, &auth, &mu) // the JSON case fails: 1 of 2
	suite := writeSuite(t)
	tests := []struct {
		name   string
		url    string
		extra  []string
		code   int
		stdout string
	}{
		{"every case passes", good.URL, nil, exitOK, "2/2 passed"},
		{"a failing case fails the run", drifty.URL, nil, exitFailed, "1 of 2 cases failed"},
		{"min pass rate met tolerates it", drifty.URL, []string{"--min-pass-rate", "50%"}, exitOK, "1/2 passed"},
		{"min pass rate missed", drifty.URL, []string{"--min-pass-rate", "51%"}, exitFailed, "pass rate 50.0% is below 51.0%"},
		{"min pass rate of 100%", drifty.URL, []string{"--min-pass-rate", "100%"}, exitFailed, "pass rate 50.0% is below 100.0%"},
		{"bad min pass rate is a usage error", drifty.URL, []string{"--min-pass-rate", "150%"}, exitUsageErr, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"evals", "run", suite, "--target", "openai/gpt-4o", "--url", tt.url, "--api-key-env", "NO_SUCH_KEY_VAR"}, tt.extra...)
			code, stdout, stderr := runCLI(t, args...)
			require.Equal(t, tt.code, code, stdout+stderr)
			require.Contains(t, stdout, tt.stdout)
		})
	}
	_, help, _ := runCLI(t, "evals", "run", "--help")
	require.Contains(t, help, "1 when a case fails")
	require.Contains(t, help, "2 for\nusage or input errors")
}
