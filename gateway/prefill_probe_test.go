package gateway_test

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
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
func newPrefillProbeRig(t *testing.T, probes string) (*gateway.Server, *events.Log) {
	t.Helper()
	handler := func(name string, f llm.Format, model string, p mockprovider.Prefill) http.Handler {
		m, err := mockprovider.NewModel(mockprovider.ProviderSpec{Name: name, Format: f, Seed: 1,
			Rules:  []mockprovider.Rule{{Contains: "pong", Answer: "pong"}},
			Models: []mockprovider.ModelSpec{{Name: model, Prefill: p}}}, nil)
		require.NoError(t, err)
		h, err := mockprovider.NewServer(m, mockprovider.ServerOptions{})
		require.NoError(t, err)
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
	return srv, log
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
		srv, log := newPrefillProbeRig(t, "")
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
	})
	synctest.Test(t, func(t *testing.T) {
		srv, log := newPrefillProbeRig(t, "  enabled: true\n  min_interval: 30s\n  max_interval: 60s")
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
