package gateway_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

const prefillProbeConfig = `version: 1
providers:
  - {name: alpha, kind: openai, base_url: "http://alpha.test/v1"}
  - {name: beta, kind: anthropic, base_url: "http://beta.test"}
  - {name: gamma, kind: anthropic, base_url: "http://gamma.test"}
routes:
  - name: chat
    targets:
      - {provider: alpha, model: gpt-4o}
      - {provider: beta, model: claude-keeps, priority: 1, capabilities: {streaming: true, prefill: true}}
      - {provider: gamma, model: claude-ignores, priority: 1, capabilities: {streaming: true, prefill: true}}
probes:
  continuation: true
%s
seed: 42
`

// newPrefillProbeRig starts a gateway whose two fall-backs declare prefill:
// beta continues a prefill, gamma ignores it (it answers from scratch). It
// must run inside a synctest bubble.
func newPrefillProbeRig(t *testing.T, probes string) (*gateway.Server, *events.Log, *mockprovider.Model) {
	t.Helper()
	var primary *mockprovider.Model
	handler := func(name string, f llm.Format, model string, p mockprovider.Prefill) http.Handler {
		m, err := mockprovider.NewModel(mockprovider.ProviderSpec{Name: name, Format: f, Seed: 1,
			Rules:  []mockprovider.Rule{{Contains: "pong", Answer: "pong"}},
			Models: []mockprovider.ModelSpec{{Name: model, Prefill: p, OutputTokens: mockprovider.Length{Fixed: 40}}}}, nil)
		require.NoError(t, err)
		h, err := mockprovider.NewServer(m, mockprovider.ServerOptions{})
		require.NoError(t, err)
		if primary == nil {
			primary = m
		}
		return h
	}
	log := &events.Log{}
	cfg, err := gateway.ParseConfig("prefill.yaml", []byte(fmt.Sprintf(prefillProbeConfig, probes)), gateway.LoadOptions{})
	require.NoError(t, err)
	srv, err := gateway.New(cfg, gateway.Options{Logger: discardLogger(), Events: log, Transport: inProcess{
		"alpha.test": handler("alpha", llm.FormatOpenAI, "gpt-4o", mockprovider.PrefillRejected),
		"beta.test":  handler("beta", llm.FormatAnthropic, "claude-keeps", mockprovider.PrefillContinue),
		"gamma.test": handler("gamma", llm.FormatAnthropic, "claude-ignores", mockprovider.PrefillIgnore),
	}})
	require.NoError(t, err)
	return srv, log, primary
}

func verdicts(log *events.Log, target string) []events.Event {
	var out []events.Event
	for _, e := range log.Events() {
		if e.Kind == events.PrefillVerdict && e.Target == target {
			out = append(out, e)
		}
	}
	return out
}

// TestContinuationProbe: with probes.continuation, every target that
// declares prefill is checked at start: the one that continues the cut
// text is verified, the one that answers from scratch fails, and the
// policy no longer continues answers on it (visible in the state and the
// events); with active probes on, the check repeats with each probe.
func TestContinuationProbe(t *testing.T) {
	const keeps, ignores = "beta:claude-keeps", "gamma:claude-ignores"
	synctest.Test(t, func(t *testing.T) {
		srv, log, _ := newPrefillProbeRig(t, "")
		defer srv.Close()
		synctest.Wait()

		require.Equal(t, policy.PrefillVerified, breakerState(srv, keeps).Prefill)
		require.Equal(t, policy.PrefillFailed, breakerState(srv, ignores).Prefill)
		require.Empty(t, breakerState(srv, "alpha:gpt-4o").Prefill, "no prefill declared: not checked")
		v := verdicts(log, ignores)
		require.Len(t, v, 1, "checked once at start")
		require.False(t, v[0].OK)
		require.NotEmpty(t, v[0].Reason)
		require.True(t, verdicts(log, keeps)[0].OK)
		found := false
		for _, ts := range srv.State().Policy.Targets {
			if ts.Key == ignores {
				found = true
				require.Equal(t, policy.PrefillFailed, ts.Prefill, "/admin/state shows it")
			}
		}
		require.True(t, found)

		// Turned off by a reload, the verdicts are dropped; turned on
		// again, every target is checked again.
		reload := func(on string) {
			text := strings.Replace(fmt.Sprintf(prefillProbeConfig, ""), "continuation: true", "continuation: "+on, 1)
			cfg, err := gateway.ParseConfig("prefill.yaml", []byte(text), gateway.LoadOptions{})
			require.NoError(t, err)
			require.NoError(t, srv.Reload(cfg))
			synctest.Wait()
		}
		reload("false")
		require.Empty(t, breakerState(srv, ignores).Prefill, "no verdict: the declared capability stands")
		reload("true")
		require.Equal(t, policy.PrefillFailed, breakerState(srv, ignores).Prefill)
		require.Len(t, verdicts(log, ignores), 2, "checked again on the reload")
	})
	synctest.Test(t, func(t *testing.T) {
		srv, log, _ := newPrefillProbeRig(t, "  enabled: true\n  min_interval: 30s\n  max_interval: 60s")
		defer srv.Close()
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		require.GreaterOrEqual(t, len(verdicts(log, keeps)), 3, "at start and with each active probe")
		for _, e := range verdicts(log, ignores) {
			require.False(t, e.OK)
		}
		require.Equal(t, policy.PrefillFailed, breakerState(srv, ignores).Prefill)
	})
}

// TestContinuationProbeSteersContinuations: on loopback mocks, a stream cut
// mid-answer is continued on the fall-back whose prefill the probe
// verified; the one that ignores prefill (same priority) continues
// nothing.
func TestContinuationProbeSteersContinuations(t *testing.T) {
	const keeps, ignores = "beta:claude-keeps", "gamma:claude-ignores"
	mock := func(name string, f llm.Format, model string, p mockprovider.Prefill, fs ...faults.Spec) *mockprovider.Provider {
		return mockprovider.StartTest(t, mockprovider.ProviderSpec{Name: name, Format: f, Seed: 3, Faults: fs,
			Models: []mockprovider.ModelSpec{{Name: model, Prefill: p, OutputTokens: mockprovider.Length{Fixed: 40}}}})
	}
	var cut faults.Spec
	require.NoError(t, decodeYAML([]byte("{kind: cut, after: 10}"), &cut))
	alpha := mock("alpha", llm.FormatOpenAI, "gpt-4o", mockprovider.PrefillRejected, cut)
	beta := mock("beta", llm.FormatAnthropic, "claude-keeps", mockprovider.PrefillContinue)
	gamma := mock("gamma", llm.FormatAnthropic, "claude-ignores", mockprovider.PrefillIgnore)
	text := fmt.Sprintf(`version: 1
providers:
  - {name: alpha, kind: openai, base_url: "%s/v1", api_key: sk-a}
  - {name: beta, kind: anthropic, base_url: "%s", api_key: sk-b}
  - {name: gamma, kind: anthropic, base_url: "%s", api_key: sk-c}
routes:
  - name: chat
    targets:
      - {provider: alpha, model: gpt-4o, retry: {attempts: 1}, capabilities: {streaming: true}}
      - {provider: gamma, model: claude-ignores, priority: 1, retry: {attempts: 1}, capabilities: {streaming: true, prefill: true}}
      - {provider: beta, model: claude-keeps, priority: 1, retry: {attempts: 1}, capabilities: {streaming: true, prefill: true}}
policy:
  breaker: {min_samples: 1000}
probes:
  continuation: true
`, alpha.URL, beta.URL, gamma.URL)
	cfg, err := gateway.ParseConfig("steer.yaml", []byte(text), gateway.LoadOptions{})
	require.NoError(t, err)
	g := startGateway(t, cfg, gateway.Options{Logger: discardLogger()})
	require.Eventually(t, func() bool {
		return breakerState(g.srv, ignores).Prefill != "" && breakerState(g.srv, keeps).Prefill != ""
	}, 10*time.Second, 5*time.Millisecond, "the start check gives both verdicts")
	require.Equal(t, policy.PrefillFailed, breakerState(g.srv, ignores).Prefill)
	require.Equal(t, policy.PrefillVerified, breakerState(g.srv, keeps).Prefill)

	for range 4 {
		s := readStream(t, g, streamBody(""))
		require.True(t, s.done, "continued to a clean end")
		require.Empty(t, s.errBody)
	}
	n := 0
	for _, e := range g.log.Events() {
		if e.Kind == events.StreamContinuation {
			n++
			require.Equal(t, keeps, e.To, "the failed target continues nothing")
			require.Equal(t, events.OutcomeContinued, e.Outcome, e.Reason)
		}
	}
	require.Positive(t, n, "streams were cut and continued")
	require.Equal(t, 0.0, metricValue(t, g, `brownout_target_prefill_verified{model="claude-ignores",provider="gamma",target="gamma:claude-ignores"}`))
	require.Equal(t, 1.0, metricValue(t, g, `brownout_target_prefill_verified{model="claude-keeps",provider="beta",target="beta:claude-keeps"}`))
}
