package sdkcheck_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/responses"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/sdkcheck"
)

// jsDir holds the pinned JavaScript clients and the check script.
const jsDir = "js"

// nodeOrSkip returns the node binary, or skips (fails with
// BROWNOUT_REQUIRE_NODE=1) when node, a recent enough one, or the installed
// clients are missing.
func nodeOrSkip(t *testing.T) string {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("BROWNOUT_REQUIRE_NODE") == "1" {
			t.Fatalf("%s (BROWNOUT_REQUIRE_NODE=1)", msg)
		}
		t.Skipf("%s; set BROWNOUT_REQUIRE_NODE=1 to fail instead", msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
		return ""
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		missing("node --version: %v", err)
		return ""
	}
	major, err := sdkcheck.NodeMajor(string(out))
	if err != nil {
		missing("%v", err)
		return ""
	}
	if major < sdkcheck.MinNodeMajor {
		missing("node %s is older than v%d", strings.TrimSpace(string(out)), sdkcheck.MinNodeMajor)
		return ""
	}
	if _, err := os.Stat(filepath.Join(jsDir, "node_modules", "openai", "package.json")); err != nil {
		missing("the JavaScript clients are not installed (run npm ci in sdkcheck/js)")
		return ""
	}
	// Read by the test process, so that go test's cache knows the result
	// depends on them (node reads them, which the cache cannot see).
	for _, f := range []string{"check.mjs", "package.json", "package-lock.json"} {
		if _, err := os.ReadFile(filepath.Join(jsDir, f)); err != nil {
			t.Fatalf("sdkcheck/js: %v", err)
		}
	}
	return node
}

// loopSteps script the tool loop every mock model answers: three tool
// calls, then an answer quoting the last result.
var loopSteps = []mockprovider.Step{
	{ToolCall: &mockprovider.RuleToolCall{Name: "find_city", Arguments: map[string]any{"city": "Paris"}}},
	{ToolCall: &mockprovider.RuleToolCall{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}},
	{ToolCall: &mockprovider.RuleToolCall{Name: "get_time", Arguments: map[string]any{"city": "Paris"}}},
	{Answer: "Done: {{tool_result}}"},
}

func startMock(t *testing.T, name string, f llm.Format, model string, seed uint64) *mockprovider.Provider {
	t.Helper()
	prefill := mockprovider.PrefillRejected
	if f == llm.FormatAnthropic {
		prefill = mockprovider.PrefillContinue
	}
	return mockprovider.StartTest(t, mockprovider.ProviderSpec{Name: name, Format: f, Seed: seed,
		Models: []mockprovider.ModelSpec{{Name: model, Prefill: prefill, OutputTokens: mockprovider.Length{Fixed: 24}, Steps: loopSteps}}})
}

const gatewayConfig = `version: 1
providers:
  - {name: alpha, kind: openai, base_url: "%s/v1", api_key: "${ALPHA_KEY}"}
  - {name: beta, kind: anthropic, base_url: "%s", api_key: "${BETA_KEY}"}
  - {name: gamma, kind: gemini, base_url: "%s", api_key: "${GAMMA_KEY}"}
routes:
  - name: chat
    tiers: [primary, equivalent, smaller]
    targets:
      - {provider: alpha, model: gpt-4o, tier: primary, retry: {attempts: 1},
         capabilities: {streaming: true, tools: true, structured_output: true},
         timeouts: {connect: 1s, first_token: 2s, idle: 2s, total: 10s}}
      - {provider: beta, model: claude-sonnet, tier: equivalent, retry: {attempts: 1},
         capabilities: {streaming: true, tools: true, structured_output: true, prefill: true},
         timeouts: {first_token: 2s, idle: 2s, total: 10s}}
      - {provider: gamma, model: gemini-flash, tier: smaller, retry: {attempts: 1},
         capabilities: {streaming: true, tools: true, structured_output: true},
         timeouts: {first_token: 2s, idle: 2s, total: 10s}}
policy:
  max_attempts: 4
  breaker: {min_samples: 1000}
responses: {store_ttl: 5m}
`

// result is one line of check.mjs's output.
type result struct {
	Client, Check, Target, Phase, Error string
	OK                                  bool
	MS                                  int
}

// TestJavaScriptClients runs the real JavaScript clients (sdkcheck/js)
// against the mocks and the gateway: every check of check.mjs must pass,
// with the primary healthy, then with the primary cutting every stream
// after five tokens (the gateway continues on its equivalent).
// BROWNOUT_JS_ONLY=<client> runs one client's checks (while debugging).
func TestJavaScriptClients(t *testing.T) {
	node := nodeOrSkip(t)
	openai := startMock(t, "alpha", llm.FormatOpenAI, "gpt-4o", 1)
	anthropic := startMock(t, "beta", llm.FormatAnthropic, "claude-sonnet", 2)
	gemini := startMock(t, "gamma", llm.FormatGemini, "gemini-flash", 3)
	resp := startMock(t, "delta", responses.Format, "gpt-4o", 4)

	env := map[string]string{"ALPHA_KEY": "sk-alpha-secret", "BETA_KEY": "sk-beta-secret", "GAMMA_KEY": "sk-gamma-secret"}
	cfg, err := gateway.ParseConfig("sdkcheck.yaml", fmt.Appendf(nil, gatewayConfig, openai.URL, anthropic.URL, gemini.URL),
		gateway.LoadOptions{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	require.NoError(t, err)
	log := &events.Log{}
	srv, err := gateway.New(cfg, gateway.Options{Events: log})
	require.NoError(t, err)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close()
	})

	urls := map[string]string{"BROWNOUT_GATEWAY": hs.URL, "BROWNOUT_OPENAI": openai.URL, "BROWNOUT_RESPONSES": resp.URL,
		"BROWNOUT_ANTHROPIC": anthropic.URL, "BROWNOUT_GEMINI": gemini.URL}
	for _, phase := range []string{"healthy", "failing"} {
		t.Run(phase, func(t *testing.T) {
			if phase == "failing" {
				after := 5
				_, err := openai.Model().AddFault(time.Now(), faults.Spec{Kind: faults.KindCut, After: &after})
				require.NoError(t, err)
			}
			equivalent := anthropic.Model().JournalLen()
			seen := len(log.Events())
			results := runChecks(t, node, phase, urls)
			// Only thinking (the check that sends it) ever skips a target: a
			// field a client sends by default would skip the primary and
			// pass unnoticed.
			for _, e := range log.Events()[seen:] {
				if e.Kind == events.AttemptEnd && e.Class == "skipped" && !strings.Contains(e.Reason, "'thinking'") {
					t.Errorf("a target was skipped: %s %s", e.Target, e.Reason)
				}
			}
			if phase == "failing" && os.Getenv("BROWNOUT_JS_ONLY") == "" {
				require.Greater(t, anthropic.Model().JournalLen()-equivalent, 10, "the gateway served the failing phase on its equivalent")
			}
			require.NotEmpty(t, results, "check.mjs reported no checks")
			passed := map[string]int{}
			total := map[string]int{}
			for _, r := range results {
				total[r.Client]++
				if r.OK {
					passed[r.Client]++
					continue
				}
				t.Errorf("%s %q against the %s: %s", r.Client, r.Check, r.Target, r.Error)
			}
			for c, n := range total {
				t.Logf("%s: %d/%d checks pass", c, passed[c], n)
			}
		})
	}
}

// runChecks runs check.mjs for phase and reads its result lines.
func runChecks(t *testing.T, node, phase string, urls map[string]string) []result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "check.mjs")
	cmd.Dir = jsDir
	// Loopback only: no proxy, no telemetry.
	cmd.Env = append(os.Environ(), "BROWNOUT_PHASE="+phase, "NO_PROXY=*", "HTTP_PROXY=", "HTTPS_PROXY=", "http_proxy=", "https_proxy=",
		"OPENAI_AGENTS_DISABLE_TRACING=1", "LANGCHAIN_TRACING_V2=false")
	for k, v := range urls {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if only := os.Getenv("BROWNOUT_JS_ONLY"); only != "" {
		cmd.Env = append(cmd.Env, "BROWNOUT_ONLY="+only)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check.mjs: %v\n%s", err, stderr.String())
	}
	var results []result
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var r result
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("check.mjs printed %q: %v", line, err)
		}
		results = append(results, r)
	}
	return results
}
