package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/internal/redistest"
	"github.com/brownout-dev/brownout/llm"
)

// fleetOf starts n gateway replicas sharing the redis-server srv; extra
// is appended to the configuration (clients, state options).
func fleetOf(t *testing.T, m *mocks, srv *redistest.Server, n int, extra string) []*gw {
	t.Helper()
	// A store call slower than state.timeout (default 100 ms) counts as
	// the store being unavailable, and the replica follows its local
	// state: on a loaded machine under -race that was seen to happen
	// (TestFleetBudgetReservesWorstCase), and these tests measure the
	// shared state, not the fallback (the tests that stop the store see
	// it refuse connections at once, well inside this bound).
	state := fmt.Sprintf("state: {backend: redis, url: %q, timeout: 5s}\n", srv.URL())
	gs := make([]*gw, n)
	for i := range gs {
		gs[i] = startGateway(t, trustConfig(t, m, extra+state), gateway.Options{Logger: discardLogger()})
	}
	return gs
}

// waitShared waits until every replica has synced its counters with the
// store twice since the call: everyone has heard what everyone sent before.
func waitShared(t *testing.T, gs ...*gw) {
	t.Helper()
	for range 2 {
		since := time.Now()
		require.Eventually(t, func() bool {
			for _, g := range gs {
				if !g.srv.State().Fleet.SharedAt.After(since) {
					return false
				}
			}
			return true
		}, 10*time.Second, 5*time.Millisecond)
	}
}

// TestFleetIdempotency: the same Idempotency-Key sent to three replicas at
// once makes one upstream call; the others wait for it and replay it.
func TestFleetIdempotency(t *testing.T) {
	m := startMocks(t)
	gs := fleetOf(t, m, redistest.Start(t), 3, "")
	addFault(t, m.alpha, `{kind: ttft, delay: 200ms}`) // keep the leader in flight
	bodies := make([]string, 6)
	var replays atomic.Int32
	var wg sync.WaitGroup
	for i := range bodies {
		wg.Go(func() {
			resp := post(t, gs[i%3].url, "/v1/chat/completions", openaiBody(false), map[string]string{"Idempotency-Key": "order-7"})
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			bodies[i] = string(b)
			assert.Equal(t, 200, resp.StatusCode, string(b))
			if resp.Header.Get(gateway.HeaderReplay) == "true" {
				replays.Add(1)
			}
		})
	}
	wg.Wait()
	for _, b := range bodies {
		require.Equal(t, bodies[0], b)
	}
	require.Len(t, m.alpha.Model().Journal(), 1, "one upstream call across the fleet")
	require.Equal(t, int32(5), replays.Load())

	// A later retry on any replica replays; another body is refused.
	status, h, body := send(t, gs[2].url, "/v1/chat/completions", openaiBody(false), map[string]string{"Idempotency-Key": "order-7"})
	require.Equal(t, 200, status)
	require.Equal(t, "true", h.Get(gateway.HeaderReplay))
	require.Equal(t, bodies[0], body)
	status, _, body = send(t, gs[1].url, "/v1/chat/completions", openaiBody(true), map[string]string{"Idempotency-Key": "order-7"})
	require.Equal(t, 422, status, body)
	require.Len(t, m.alpha.Model().Journal(), 1)
}

// TestFleetClientLimits: a client's requests per minute are the fleet's,
// not each replica's.
func TestFleetClientLimits(t *testing.T) {
	m := startMocks(t)
	gs := fleetOf(t, m, redistest.Start(t), 3, "clients:\n  - {id: app, key: \"${APP_KEY}\", requests_per_minute: 6}\n")
	hdr := map[string]string{"Authorization": "Bearer " + keyApp}
	call := func(g *gw) int {
		status, _, _ := send(t, g.url, "/v1/chat/completions", openaiBody(false), hdr)
		return status
	}
	for range 4 {
		require.Equal(t, 200, call(gs[0]))
	}
	waitShared(t, gs...)
	require.Equal(t, 200, call(gs[1]))
	require.Equal(t, 200, call(gs[1]))
	require.Equal(t, 429, call(gs[1]), "six a minute across the fleet")
	waitShared(t, gs...)
	require.Equal(t, 429, call(gs[2]), "C served none, the fleet six")
	require.Equal(t, 429, call(gs[0]))

	// The syncs are round trips the replica counts.
	resp, err := http.Get(gs[2].url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Regexp(t, `(?m)^brownout_state_store_calls_total [1-9]`, string(b))
	require.Regexp(t, `(?m)^brownout_state_backend_up 1$`, string(b))
}

// TestFleetStoreDies: redis-server killed under bounded load; with
// on_store_unavailable: local no request fails, and when it is back every
// replica resyncs and follows the store again.
func TestFleetStoreDies(t *testing.T) {
	m := startMocks(t)
	srv := redistest.Start(t)
	gs := fleetOf(t, m, srv, 3, "")
	var sent, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				hdr := map[string]string{}
				if i%2 == 0 { // half carry an idempotency key: a store call each
					hdr["Idempotency-Key"] = fmt.Sprintf("w%d-%d", w, i)
				}
				status, _, body := send(t, gs[(w+i)%3].url, "/v1/chat/completions", openaiBody(i%3 == 0), hdr)
				sent.Add(1)
				if status != 200 {
					failed.Add(1)
					t.Errorf("request failed: %d %s", status, body)
				}
			}
		})
	}
	waitFor := func(n int64) {
		start := sent.Load()
		require.Eventually(t, func() bool { return sent.Load() >= start+n }, 20*time.Second, time.Millisecond)
	}
	waitFor(30)
	srv.Stop() // the store dies mid-load
	for _, g := range gs {
		require.Eventually(t, func() bool { return !g.srv.State().Fleet.Shared }, 10*time.Second, 5*time.Millisecond, "the replica falls back to local state")
	}
	waitFor(30)
	srv.Start() // back, empty
	for _, g := range gs {
		require.Eventually(t, func() bool { return g.srv.State().Fleet.Shared }, 20*time.Second, 5*time.Millisecond, "the replica resyncs")
	}
	waitShared(t, gs...)
	waitFor(30)
	close(stop)
	wg.Wait()
	require.Zero(t, failed.Load(), "of %d requests", sent.Load())
	for _, g := range gs {
		var deg []bool
		for _, e := range g.log.Events() {
			if e.Kind == events.StateDegraded {
				deg = append(deg, e.OK)
			}
		}
		require.NotEmpty(t, deg)
		require.False(t, deg[0], "state.degraded: down")
		require.True(t, deg[len(deg)-1], "state.degraded: resynced")
	}

	// Resynced: a breaker tripped on one replica is obeyed by the others.
	require.NoError(t, gs[0].srv.Engine().Signal(time.Now(), "alpha:gpt-4o", "probe_failures", policy.Trip))
	for _, g := range gs[1:] {
		require.Eventually(t, func() bool { return breakerOf(g, "alpha:gpt-4o") == "open" }, 10*time.Second, 5*time.Millisecond)
	}
}

func breakerOf(g *gw, key string) string {
	for _, ts := range g.srv.State().Policy.Targets {
		if ts.Key == key {
			return string(ts.Breaker)
		}
	}
	return ""
}

// TestFleetFailClosed: with on_store_unavailable: fail_closed, a replica
// that lost its store refuses inference requests in the inbound API's
// shape and reports not ready, until the store is back.
func TestFleetFailClosed(t *testing.T) {
	m := startMocks(t)
	srv := redistest.Start(t)
	state := fmt.Sprintf("state: {backend: redis, url: %q, prefix: fc, on_store_unavailable: fail_closed}\n", srv.URL())
	g := startGateway(t, trustConfig(t, m, state), gateway.Options{Logger: discardLogger()})
	status, _, body := send(t, g.url, "/v1/chat/completions", openaiBody(false), nil)
	require.Equal(t, 200, status, body)

	srv.Stop()
	require.Eventually(t, func() bool { return !g.srv.State().Fleet.Shared }, 10*time.Second, 5*time.Millisecond)
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		b := openaiBody(false)
		if path == "/v1/messages" {
			b = anthropicBody(false)
		}
		status, h, body := send(t, g.url, path, b, nil)
		require.Equal(t, 503, status, body)
		require.Equal(t, "1", h.Get("Retry-After"))
		require.Equal(t, wireType(t, path, llm.ErrOverloaded), errorShape(t, path, body), body)
	}
	resp, err := http.Get(g.url + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 503, resp.StatusCode)
	require.Empty(t, m.alpha.Model().Journal()[1:], "nothing refused reached a provider")

	srv.Start()
	require.Eventually(t, func() bool {
		status, _, _ := send(t, g.url, "/v1/chat/completions", openaiBody(false), nil)
		return status == 200
	}, 20*time.Second, 10*time.Millisecond)
}

// TestFleetCache: an answer cached by one replica is served from the cache
// by another.
func TestFleetCache(t *testing.T) {
	m := startMocks(t)
	srv := redistest.Start(t)
	gs := fleetOf(t, m, srv, 2, "cache: {exact: true, ttl: 1h}\n")
	first := gs[0].do(t, false, nil)
	require.Equal(t, 200, first.status)
	opt, err := redis.ParseURL(srv.URL())
	require.NoError(t, err)
	rc := redis.NewClient(opt)
	defer rc.Close()
	require.Eventually(t, func() bool {
		keys, err := rc.Keys(t.Context(), "brownout:cache:*").Result()
		return err == nil && len(keys) == 1
	}, 10*time.Second, 5*time.Millisecond, "A writes its answer to the store")
	r := gs[1].do(t, false, nil)
	require.Equal(t, "hit", r.header.Get(gateway.HeaderCache))
	require.Equal(t, first.text, r.text, "B serves A's answer")
	require.Len(t, m.alpha.Model().Journal(), 1)
	require.Equal(t, 1, gs[1].srv.State().CacheEntries, "kept locally")
}

// TestFleetHealth: a target one replica demotes is avoided by the others.
func TestFleetHealth(t *testing.T) {
	m := startMocks(t)
	gs := fleetOf(t, m, redistest.Start(t), 3, "")
	require.NoError(t, gs[0].srv.Engine().Signal(time.Now(), "alpha:gpt-4o", "detector_truncation", policy.Demote))
	for _, g := range gs[1:] {
		require.Eventually(t, func() bool {
			for _, ts := range g.srv.State().Policy.Targets {
				if ts.Key == "alpha:gpt-4o" {
					return ts.Health == policy.Unhealthy && ts.Reason == "fleet:detector_truncation"
				}
			}
			return false
		}, 10*time.Second, 5*time.Millisecond)
	}
	r := gs[2].do(t, false, nil)
	require.Equal(t, 200, r.status)
	require.Empty(t, m.alpha.Model().Journal(), "no replica sends to the demoted target")
}
