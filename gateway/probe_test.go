package gateway_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/evals/probe"
	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// inProcess serves upstream requests with mock provider handlers in the
// test's goroutine, so a synctest bubble's virtual clock governs the whole
// exchange (no sockets).
type inProcess map[string]http.Handler

func (m inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	h := m[r.URL.Host]
	if h == nil {
		return nil, fmt.Errorf("no mock at %s", r.URL.Host)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// probeRig is a gateway with probes on and two mock providers: alpha
// serves route chat, beta the cold route nobody calls.
type probeRig struct {
	srv         *gateway.Server
	log         *events.Log
	alpha, beta *mockprovider.Model
}

const probeConfig = `version: 1
providers:
  - {name: alpha, kind: openai, base_url: "http://alpha.test/v1"}
  - {name: beta, kind: anthropic, base_url: "http://beta.test"}
routes:
  - name: chat
    targets:
      - {provider: alpha, model: gpt-4o}
  - name: cold
    targets:
      - {provider: beta, model: claude-cold}
probes:
  enabled: true
  min_interval: 30s
  max_interval: 60s
  failures: 3
seed: 42
`

// newProbeRig must run inside a synctest bubble.
func newProbeRig(t *testing.T, extra string) *probeRig {
	t.Helper()
	pong := []mockprovider.Rule{{Contains: "pong", Answer: "pong"}}
	model := func(name string, f llm.Format, m string) (*mockprovider.Model, http.Handler) {
		mo, err := mockprovider.NewModel(mockprovider.ProviderSpec{Name: name, Format: f, Seed: 1, Rules: pong,
			Models: []mockprovider.ModelSpec{{Name: m}}}, nil)
		require.NoError(t, err)
		h, err := mockprovider.NewServer(mo, mockprovider.ServerOptions{})
		require.NoError(t, err)
		return mo, h
	}
	r := &probeRig{log: &events.Log{}}
	var ha, hb http.Handler
	r.alpha, ha = model("alpha", llm.FormatOpenAI, "gpt-4o")
	r.beta, hb = model("beta", llm.FormatAnthropic, "claude-cold")
	text := strings.Replace(probeConfig, "  failures: 3\n", "  failures: 3\n"+extra, 1) // extra: more of probes:
	cfg, err := gateway.ParseConfig("probes.yaml", []byte(text), gateway.LoadOptions{})
	require.NoError(t, err)
	r.srv, err = gateway.New(cfg, gateway.Options{Logger: discardLogger(), Events: r.log,
		Transport: inProcess{"alpha.test": ha, "beta.test": hb}})
	require.NoError(t, err)
	return r
}

func (r *probeRig) fault(t *testing.T, m *mockprovider.Model, spec string) {
	t.Helper()
	var f faults.Spec
	require.NoError(t, decodeYAML([]byte(spec), &f))
	_, err := m.AddFault(time.Now(), f)
	require.NoError(t, err)
}

// probes returns the probe.result events of target.
func (r *probeRig) probes(target string) []events.Event {
	var out []events.Event
	for _, e := range r.log.Events() {
		if e.Kind == events.ProbeResult && e.Target == target {
			out = append(out, e)
		}
	}
	return out
}

func (r *probeRig) transitions(target string) []string {
	var out []string
	for _, e := range r.log.Events() {
		if e.Kind == events.BreakerTransition && e.Target == target {
			out = append(out, e.From+">"+e.To+" "+e.Reason)
		}
	}
	return out
}

func breakerState(s *gateway.Server, key string) policy.TargetState {
	for _, ts := range s.Engine().State().Targets {
		if ts.Key == key {
			return ts
		}
	}
	return policy.TargetState{}
}

// TestProbesOpenColdBreaker: a target that gets no user traffic at all is
// probed; once a fault makes its probes fail three times in a row, its
// breaker opens. The failure is judged on the content (a 200 refusal fails
// the "says pong" check) as well as on the status.
func TestProbesOpenColdBreaker(t *testing.T) {
	const cold = "beta:claude-cold"
	for _, tc := range []struct {
		name, fault, reason string
	}{
		{"server error", "{kind: http_error, status: 500}", "server_error"},
		{"refusal with 200", "{kind: refusal, text: I cannot help with that.}", "says pong"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newProbeRig(t, "")
				defer r.srv.Close()

				time.Sleep(3 * time.Minute)
				synctest.Wait()
				healthy := r.probes(cold)
				require.GreaterOrEqual(t, len(healthy), 3, "probed every 30-60s")
				for _, e := range healthy {
					require.True(t, e.OK, e.Reason)
				}
				require.Empty(t, r.transitions(cold))

				start := time.Now()
				r.fault(t, r.beta, tc.fault)
				time.Sleep(10 * time.Minute)
				synctest.Wait()

				var failed []events.Event
				for _, e := range r.probes(cold)[len(healthy):] {
					failed = append(failed, e)
					require.False(t, e.OK)
					require.Contains(t, e.Reason, tc.reason)
				}
				require.GreaterOrEqual(t, len(failed), 3)
				tr := r.transitions(cold)
				require.NotEmpty(t, tr)
				require.Equal(t, "closed>open probe_failures", tr[0])
				var opened events.Event
				for _, e := range r.log.Events() {
					if e.Kind == events.BreakerTransition && e.Target == cold {
						opened = e
						break
					}
				}
				assert.Equal(t, failed[2].Time, opened.Time, "opened by the third consecutive failure")
				assert.True(t, opened.Time.After(start))
				// failing probes back off: the gaps grow
				assert.Greater(t, failed[2].Time.Sub(failed[1].Time), failed[1].Time.Sub(failed[0].Time)/2)

				assert.Zero(t, countKind(r.log.Events(), events.RequestStart), "the route got no user traffic")
				assert.Empty(t, r.transitions("alpha:gpt-4o"), "the healthy target is untouched")
				for _, e := range r.probes("alpha:gpt-4o") {
					assert.True(t, e.OK)
				}
			})
		})
	}
}

// TestProbesRespectRetryAfter: a rate-limited probe is not a failure, and
// the next probe waits for the provider's Retry-After.
func TestProbesRespectRetryAfter(t *testing.T) {
	const cold = "beta:claude-cold"
	synctest.Test(t, func(t *testing.T) {
		r := newProbeRig(t, "")
		defer r.srv.Close()
		r.fault(t, r.beta, "{kind: http_error, status: 429, retry_after: 5m}")
		time.Sleep(30 * time.Minute)
		synctest.Wait()

		ps := r.probes(cold)
		require.GreaterOrEqual(t, len(ps), 3)
		for i, e := range ps {
			require.False(t, e.OK)
			if i > 0 {
				gap := e.Time.Sub(ps[i-1].Time)
				assert.GreaterOrEqual(t, gap, 5*time.Minute, "probe %d came %s after a 429 with Retry-After 5m", i, gap)
			}
		}
		assert.LessOrEqual(t, len(ps), 6, "about one probe per Retry-After")
		for _, e := range ps {
			assert.Equal(t, "rate_limited", e.Class)
		}
		rec := httptest.NewRecorder()
		r.srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		assert.Contains(t, rec.Body.String(), fmt.Sprintf(`brownout_probes_total{model="claude-cold",provider="beta",result="rate_limited",target="beta:claude-cold"} %d`, len(ps)))
		assert.Contains(t, rec.Body.String(), `brownout_probes_total{model="gpt-4o",provider="alpha",result="ok",target="alpha:gpt-4o"}`)
		assert.NotRegexp(t, `brownout_probes_total\{[^}]*result="failed"`, rec.Body.String())
		assert.Empty(t, r.transitions(cold), "rate limits do not open the breaker")
		assert.Zero(t, breakerState(r.srv, cold).ProbeFailures)
		var st probe.TargetState
		for _, p := range r.srv.State().Probes {
			if p.Target == cold {
				st = p
			}
		}
		assert.Equal(t, cold, st.Target, "/admin/state shows the probe state")
		assert.Zero(t, st.Failures)
		assert.Equal(t, len(ps), st.RateLimited, "every probe was rate limited")
		assert.False(t, st.Next.Before(ps[len(ps)-1].Time.Add(5*time.Minute)), "the next probe waits for Retry-After")
		assert.GreaterOrEqual(t, len(r.probes("alpha:gpt-4o")), 30, "other targets keep their rhythm")
	})
}

// TestProbesNeverCloseBreaker: successful probes of a target whose breaker
// is open do not close it; half-open waits for real traffic.
func TestProbesNeverCloseBreaker(t *testing.T) {
	const cold = "beta:claude-cold"
	synctest.Test(t, func(t *testing.T) {
		r := newProbeRig(t, "")
		defer r.srv.Close()
		require.NoError(t, r.srv.Engine().Signal(time.Now(), cold, "manual", policy.Trip))
		time.Sleep(15 * time.Minute)
		synctest.Wait()
		ps := r.probes(cold)
		require.GreaterOrEqual(t, len(ps), 10)
		for _, e := range ps {
			require.True(t, e.OK, e.Reason)
		}
		for _, tr := range r.transitions(cold) {
			assert.False(t, strings.Contains(tr, ">closed"), "a probe closed the breaker: %s", tr)
		}
		assert.Equal(t, policy.HalfOpen, breakerState(r.srv, cold).Breaker, "half-open, waiting for real traffic")
	})
}

// TestProbesDeterministic: the same seed gives the same probe schedule.
func TestProbesDeterministic(t *testing.T) {
	run := func() []string {
		var out []string
		synctest.Test(t, func(t *testing.T) {
			r := newProbeRig(t, "")
			t0 := time.Now()
			time.Sleep(10 * time.Minute)
			synctest.Wait()
			require.NoError(t, r.srv.Close())
			for _, e := range r.log.Events() {
				if e.Kind == events.ProbeResult {
					out = append(out, fmt.Sprintf("%s %s %v", e.Time.Sub(t0), e.Target, e.OK))
				}
			}
		})
		return out
	}
	a, b := run(), run()
	require.NotEmpty(t, a)
	assert.Equal(t, a, b)
}

// TestProbesConfig: the probes section is validated with positions.
func TestProbesConfig(t *testing.T) {
	for _, tc := range []struct{ name, extra, want string }{
		{"no checks", "  probe: {prompt: hi}\n", "probes.probe.checks"},
		{"no prompt", "  probe: {checks: [{type: contains, text: pong}]}\n", "probes.probe.prompt"},
		{"unknown field", "  every: 10s\n", "every"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(probeConfig, "  failures: 3\n", "  failures: 3\n"+tc.extra, 1)
			_, err := gateway.ParseConfig("probes.yaml", []byte(text), gateway.LoadOptions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "probes.yaml:")
		})
	}
	text := strings.Replace(probeConfig, "  failures: 3\n", "  failures: 3\n  probe: {prompt: say ok, checks: [{type: contains, text: ok}]}\n", 1)
	_, err := gateway.ParseConfig("probes.yaml", []byte(text), gateway.LoadOptions{})
	require.NoError(t, err)
}

// TestProbesCustomDefinition: the configured probe is what is sent and
// judged (here a check the mock's answer cannot pass).
func TestProbesCustomDefinition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newProbeRig(t, "  probe: {name: banana, prompt: Say pong., checks: [{type: contains, name: says banana, text: banana}]}\n")
		defer r.srv.Close()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		ps := r.probes("alpha:gpt-4o")
		require.GreaterOrEqual(t, len(ps), 3)
		for _, e := range ps {
			assert.False(t, e.OK)
			assert.Contains(t, e.Reason, "says banana")
			assert.Equal(t, "banana", e.Name, "the event names the probe")
		}
		assert.Equal(t, "closed>open probe_failures", r.transitions("alpha:gpt-4o")[0])
	})
}

// TestProbesFollowReload: a reload that removes a target stops its probes
// (others keep their schedule), and one that disables probes stops them all.
func TestProbesFollowReload(t *testing.T) {
	const cold, hot = "beta:claude-cold", "alpha:gpt-4o"
	load := func(t *testing.T, text string) *gateway.Config {
		cfg, err := gateway.ParseConfig("probes.yaml", []byte(text), gateway.LoadOptions{})
		require.NoError(t, err)
		return cfg
	}
	synctest.Test(t, func(t *testing.T) {
		r := newProbeRig(t, "")
		defer r.srv.Close()
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		require.NotEmpty(t, r.probes(cold))
		state := func() []string {
			var out []string
			for _, p := range r.srv.State().Probes {
				out = append(out, p.Target)
			}
			return out
		}
		require.Equal(t, []string{hot, cold}, state())

		noCold := strings.Replace(probeConfig, "  - name: cold\n    targets:\n      - {provider: beta, model: claude-cold}\n", "", 1)
		require.NotEqual(t, probeConfig, noCold)
		nextHot := r.srv.State().Probes[0].Next
		require.NoError(t, r.srv.Reload(load(t, noCold)))
		assert.Equal(t, []string{hot}, state())
		assert.Equal(t, nextHot, r.srv.State().Probes[0].Next, "the kept target keeps its schedule")
		nCold, nHot := len(r.probes(cold)), len(r.probes(hot))
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		assert.Len(t, r.probes(cold), nCold, "a removed target is not probed")
		assert.Greater(t, len(r.probes(hot)), nHot)

		require.NoError(t, r.srv.Reload(load(t, strings.Replace(noCold, "  enabled: true\n", "  enabled: false\n", 1))))
		assert.Empty(t, state())
		nHot = len(r.probes(hot))
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		assert.Len(t, r.probes(hot), nHot, "disabled: no probes")
	})
}
