package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// writeConfig writes the e2e config (with extra) to path, resolving the
// keys the way the file would.
func writeConfig(t *testing.T, m *mocks, path, extra string) {
	t.Helper()
	cfg := m.config(t, extra) // validates
	_ = cfg
	text := configText(m, extra)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

func fileEnv(k string) (string, bool) {
	return map[string]string{"ALPHA_KEY": "a", "BETA_KEY": "b", "GAMMA_KEY": "c"}[k], true
}

// TestReloadUnderLoad: clients keep sending (streams and not) while the
// configuration is reloaded — valid files that change the policy, valid
// files that do not, and invalid files — and every request is answered.
func TestReloadUnderLoad(t *testing.T) {
	m := startMocks(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "gw.yaml")
	writeConfig(t, m, path, "")
	cfg, err := gateway.LoadConfig(path, gateway.LoadOptions{LookupEnv: fileEnv})
	require.NoError(t, err)
	log := &events.Log{}
	g := startGateway(t, cfg, gateway.Options{ConfigPath: path, LookupEnv: fileEnv, Events: log, Logger: discardLogger()})

	var sent, ok atomic.Int64
	var failures sync.Map
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for c := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				sent.Add(1)
				r := g.do(t, (c+i)%2 == 0, nil)
				if r.status == 200 && r.text != "" && (!strings.Contains(r.header.Get("Content-Type"), "event-stream") || r.clean) {
					ok.Add(1)
				} else {
					failures.Store(r.status, r.body)
				}
			}
		}()
	}
	variants := []string{
		"",                                 // back to the original
		"cache: {ttl: 1m}\n",               // policy unchanged: engine kept
		"policy_typo: {max_attempts: 3}\n", // invalid: rejected
		"alerts: {defaults: true}\n",       // policy unchanged
		"version: 2\n",                     // invalid (duplicate key): rejected
	}
	for i := range 15 {
		extra := variants[i%len(variants)]
		if i%3 == 2 {
			// Change the policy: a new decision core.
			extra += "seed: " + string(rune('1'+i%9)) + "\n"
		}
		if strings.Contains(extra, "typo") || strings.Contains(extra, "version: 2") {
			require.NoError(t, os.WriteFile(path, []byte(configText(m, extra)), 0o644))
			assert.Error(t, g.srv.ReloadFile())
		} else {
			writeConfig(t, m, path, extra)
			require.NoError(t, g.srv.ReloadFile())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	failures.Range(func(k, v any) bool {
		t.Errorf("status %v: %v", k, v)
		return true
	})
	assert.Positive(t, sent.Load())
	assert.Equal(t, sent.Load(), ok.Load(), "no request lost across reloads")
	var accepted, rejected int
	for _, e := range log.Events() {
		if e.Kind == events.ConfigReload {
			if e.OK {
				accepted++
			} else {
				rejected++
			}
		}
	}
	assert.Equal(t, 9, accepted)
	assert.Equal(t, 6, rejected)
	t.Logf("%d requests across 15 reloads (%d rejected)", sent.Load(), rejected)
}

// TestReloadKeepsBreakerState: a reload that leaves routes and policy alone
// keeps the decision core, so an open breaker stays open; one that changes
// them builds a new core that carries breaker and health state over.
func TestReloadKeepsBreakerState(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{Logger: discardLogger()})
	require.NoError(t, g.srv.Engine().Signal(time.Now(), "alpha:gpt-4o", "test", policy.Trip))
	breaker := func() policy.BreakerState {
		for _, ts := range g.srv.State().Policy.Targets {
			if ts.Key == "alpha:gpt-4o" {
				return ts.Breaker
			}
		}
		return ""
	}
	require.Equal(t, policy.Open, breaker())
	before := g.srv.State().ConfigVersion

	require.NoError(t, g.srv.Reload(m.config(t, "cache: {ttl: 1m}\n")))
	assert.Equal(t, policy.Open, breaker(), "unchanged targets keep their breaker")
	assert.NotEqual(t, before, g.srv.State().ConfigVersion)
	r := g.do(t, false, nil)
	assert.Equal(t, "beta:claude-sonnet", r.header.Get(gateway.HeaderTarget), "the open breaker still routes around the primary")

	core := g.srv.Engine()
	require.NoError(t, g.srv.Reload(m.config(t, "seed: 7\n")))
	assert.NotSame(t, core, g.srv.Engine(), "a changed policy builds a new core")
	assert.Equal(t, policy.Open, breaker(), "which carries the breaker state over")

	// A reload that adds a route (routes changed): the breaker of the
	// unchanged target is still open, and the new route sees it too.
	text := strings.Replace(configText(m, "seed: 7\n"), "policy:\n", `  - name: extra
    targets:
      - {provider: alpha, model: gpt-4o, capabilities: {streaming: true}}
      - {provider: gamma, model: gemini-flash, capabilities: {streaming: true}}
policy:
`, 1)
	cfg, err := gateway.ParseConfig("added.yaml", []byte(text), gateway.LoadOptions{LookupEnv: fileEnv})
	require.NoError(t, err)
	require.Len(t, cfg.Routes, 2)
	require.NoError(t, g.srv.Reload(cfg))
	assert.Equal(t, policy.Open, breaker(), "an added route keeps the open breaker open")
	assert.Equal(t, "beta:claude-sonnet", g.do(t, false, nil).header.Get(gateway.HeaderTarget))
	resp := post(t, g.url, "/v1/chat/completions", `{"model":"extra","messages":[{"role":"user","content":"hi"}]}`, nil)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "gamma:gemini-flash", resp.Header.Get(gateway.HeaderTarget), "the new route routes around the open breaker")
	var last events.Event
	for _, e := range g.log.Events() {
		if e.Kind == events.ConfigReload {
			last = e
		}
	}
	assert.Equal(t, "policy state carried over", last.Reason)
}

// TestWatchReloadsOnChange: the file is polled; a change is applied, an
// invalid change is rejected and the old configuration keeps serving.
func TestWatchReloadsOnChange(t *testing.T) {
	m := startMocks(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "gw.yaml")
	writeConfig(t, m, path, "reload: {poll: 10ms}\n")
	cfg, err := gateway.LoadConfig(path, gateway.LoadOptions{LookupEnv: fileEnv})
	require.NoError(t, err)
	log := &events.Log{}
	g := startGateway(t, cfg, gateway.Options{ConfigPath: path, LookupEnv: fileEnv, Events: log, Logger: discardLogger()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hup := make(chan os.Signal, 1)
	go g.srv.Watch(ctx, hup)

	waitReload := func(n int) []events.Event {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			var rs []events.Event
			for _, e := range log.Events() {
				if e.Kind == events.ConfigReload {
					rs = append(rs, e)
				}
			}
			if len(rs) >= n {
				return rs
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("no reload %d", n)
		return nil
	}
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, os.WriteFile(path, []byte(configText(m, "reload: {poll: 10ms}\nbogus: true\n")), 0o644))
	rs := waitReload(1)
	assert.False(t, rs[0].OK)
	assert.Contains(t, rs[0].Reason, "bogus")
	assert.Equal(t, 200, g.do(t, false, nil).status, "the old configuration keeps serving")

	hup <- os.Interrupt // SIGHUP stand-in: reload now (still invalid)
	rs = waitReload(2)
	assert.False(t, rs[1].OK)

	writeConfig(t, m, path, "reload: {poll: 10ms}\ncache: {ttl: 2m}\n")
	rs = waitReload(3)
	assert.True(t, rs[2].OK)
}
