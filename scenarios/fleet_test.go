package scenarios

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// requireRedis skips a live test of a shared store without redis-server,
// unless BROWNOUT_REQUIRE_REDIS is set (CI), where it fails.
func requireRedis(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("BROWNOUT_REQUIRE_REDIS") != "" {
			t.Fatal("redis-server is not installed and BROWNOUT_REQUIRE_REDIS is set (apt-get install redis-server)")
		}
		t.Skip("redis-server not installed (apt-get install redis-server); set BROWNOUT_REQUIRE_REDIS=1 to fail instead")
	}
}

// TestFleetSharedBeatsLocal: the same 429 storm on ten replicas, breakers
// local vs shared. Shared, the fleet sends fewer primary attempts during
// the storm and its recovery takes at most half_open_requests trials;
// local, every replica probes the recovering provider with its own.
func TestFleetSharedBeatsLocal(t *testing.T) {
	if raceEnabled {
		t.Skip("two 5-minute game days of ten replicas; the simulator is single-goroutine")
	}
	local := runFile(t, "../examples/gamedays/ten-replicas-local-breakers.yaml")
	shared := runFile(t, "../examples/gamedays/ten-replicas-shared-breakers.yaml")
	require.NotNil(t, local.Fleet)
	require.NotNil(t, shared.Fleet)
	lf, sf := local.Fleet, shared.Fleet
	require.Equal(t, 10, lf.Replicas)
	require.Equal(t, lf.OutageRequests, sf.OutageRequests, "the same traffic")
	require.Less(t, sf.PrimaryAttempts, lf.PrimaryAttempts)
	require.Less(t, sf.HalfOpenTrials, lf.HalfOpenTrials)
	const halfOpen = 2 // env/gateway-fleet.yaml
	require.Len(t, sf.Recoveries, 1)
	require.True(t, sf.Recoveries[0].Closed)
	require.LessOrEqual(t, sf.TrialsPerRecovery, halfOpen)
	require.Equal(t, lf.Replicas*halfOpen, lf.TrialsPerRecovery, "each replica's breaker takes its own trials")
	// Round robin: every replica served a tenth of the requests.
	for _, r := range lf.PerReplica {
		require.InDelta(t, local.Overall.Availability.Requests/10, r.Requests, 1)
	}
}

// TestFleetRoundRobin: request n is served by replica (n-1) mod N + 1, and
// every event of a request carries it.
func TestFleetRoundRobin(t *testing.T) {
	res := runFile(t, "testdata/fleet/storm.yaml")
	requirePass(t, res)
	for _, e := range res.Log() {
		if e.RequestID == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(e.RequestID, "req-"))
		require.NoError(t, err)
		require.Equal(t, (n-1)%3+1, e.Replica, "%s %s", e.RequestID, e.Kind)
	}
}

// TestFleetStoreDown: with the store down each replica falls back at the
// step's start and resyncs at its first retry after the end; a breaker
// one replica opens while the store is away stays its own.
func TestFleetStoreDown(t *testing.T) {
	res := runFile(t, "testdata/fleet/storm.yaml")
	var degraded, resynced []time.Duration
	for _, e := range res.Log() {
		if e.Kind == events.StateDegraded {
			at := e.Time.Sub(Epoch)
			if e.OK {
				resynced = append(resynced, at)
			} else {
				degraded = append(degraded, at)
			}
		}
	}
	require.Equal(t, []time.Duration{4 * time.Second, 4 * time.Second, 4 * time.Second}, degraded)
	require.Equal(t, []time.Duration{7 * time.Second, 7 * time.Second, 7 * time.Second}, resynced, "a retry every second from 4s: the first after the store is back at 7s")
	// One fallback per replica for the store outage; a fallback with the
	// store up (a store call over state.timeout on a loaded machine) is
	// counted apart, as spurious.
	require.Equal(t, 3, res.Fleet.Degraded-res.Fleet.SpuriousDegraded, "fallbacks %d, of which spurious %d", res.Fleet.Degraded, res.Fleet.SpuriousDegraded)
	require.Equal(t, 3, res.Fleet.Resynced)
	require.Zero(t, res.Overall.Availability.Failed)
}

// fleetStormLog plays a two-replica breaker trip with the store slowed by
// slow and returns, per replica, when its breaker on a:m opened and
// whether it fell back to local state.
func fleetStormLog(t *testing.T, slow string) (opened map[int]time.Duration, degraded map[int]time.Duration) {
	t.Helper()
	src := `version: 1
name: slow-store
seed: 3
duration: 2s
providers: {file: providers.yaml}
gateway: {config: gateway-fleet.yaml, replicas: 2, state: redis, propagation: 2ms}
traffic:
  - {route: chat, rate: 4/s, arrival: uniform, stream: 100%, prompt_tokens: 20}
timeline:
  - {name: late, at: 100ms, for: 1s, store: {slow: ` + slow + `}}
  - {name: f, at: 400ms, for: 500ms, target: a/m, fault: {kind: http_error, status: 503}}
`
	s, err := Parse("testdata/diff/slow.yaml", []byte(src))
	require.NoError(t, err)
	res, err := Run(context.Background(), s, Options{})
	require.NoError(t, err)
	opened, degraded = map[int]time.Duration{}, map[int]time.Duration{}
	for _, e := range res.Log() {
		switch {
		case e.Kind == events.BreakerTransition && e.To == "open":
			if _, ok := opened[e.Replica]; !ok {
				opened[e.Replica] = e.Time.Sub(Epoch)
			}
		case e.Kind == events.StateDegraded && !e.OK:
			degraded[e.Replica] = e.Time.Sub(Epoch)
		}
	}
	return opened, degraded
}

// TestFleetStoreSlow: a slow store delays the transition a replica
// proposes by the propagation delay plus the slowness; slower than the
// store timeout (100ms), every replica falls back to local state when its
// first call times out — the share of budgets and health every 100ms, as
// live — and each replica's breaker is then its own.
func TestFleetStoreSlow(t *testing.T) {
	opened, degraded := fleetStormLog(t, "30ms")
	require.Contains(t, opened, 2, "req-2 (0.5s) on replica 2 trips its breaker")
	require.Equal(t, opened[2]+32*time.Millisecond, opened[1], "replica 1 obeys after propagation (2ms) + slow (30ms)")
	require.Empty(t, degraded)

	opened, degraded = fleetStormLog(t, "200ms")
	require.Equal(t, map[int]time.Duration{1: 300 * time.Millisecond, 2: 300 * time.Millisecond}, degraded,
		"the first share after the store slows (0.2s) times out on both replicas")
	require.Equal(t, map[int]time.Duration{2: 500 * time.Millisecond, 1: 750 * time.Millisecond}, opened,
		"each replica opens its breaker on its own failure (req-2, req-3)")
}

// TestFleetOneReplicaIsAGatewayAlone: replicas: 1 with state: memory plays
// byte for byte what a gateway without them plays.
func TestFleetOneReplicaIsAGatewayAlone(t *testing.T) {
	src, err := os.ReadFile("testdata/short.yaml")
	require.NoError(t, err)
	play := func(data []byte) string {
		s, err := Parse("testdata/short.yaml", data)
		require.NoError(t, err)
		res, err := Run(context.Background(), s, Options{})
		require.NoError(t, err)
		require.Nil(t, res.Fleet)
		var b strings.Builder
		for _, e := range res.Log() {
			fmt.Fprintf(&b, "%+v\n", e)
		}
		return b.String()
	}
	explicit := strings.Replace(string(src), "gateway: {", "gateway: {replicas: 1, state: memory, ", 1)
	require.NotEqual(t, string(src), explicit)
	require.Equal(t, play(src), play([]byte(explicit)))
}

// TestLiveFleetRedis plays testdata/fleet/storm.yaml live: three gateway
// replicas on one redis-server the runner starts. The breaker one replica
// opens is obeyed by the others (fleet: transitions), the store's outage
// falls every replica back and each resyncs, and no request fails.
func TestLiveFleetRedis(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a 12-second live game day")
	}
	requireRedis(t)
	s, err := Load("testdata/fleet/storm.yaml")
	require.NoError(t, err)
	res, err := Run(context.Background(), s, Options{Mode: score.ModeLive})
	require.NoError(t, err)
	requirePass(t, res)
	replicas := map[int]bool{}
	fleetOpened := 0
	for _, e := range res.Log() {
		if e.Kind == events.RequestStart {
			replicas[e.Replica] = true
		}
		if e.Kind == events.BreakerTransition && e.To == "open" && strings.HasPrefix(e.Reason, "fleet:") {
			fleetOpened++
		}
	}
	require.Equal(t, map[int]bool{1: true, 2: true, 3: true}, replicas)
	require.Positive(t, fleetOpened, "a breaker opened by one replica is obeyed by the others")
	// One fallback per replica for the store outage; a fallback with the
	// store up (a store call over state.timeout on a loaded machine) is
	// counted apart, as spurious.
	require.Equal(t, 3, res.Fleet.Degraded-res.Fleet.SpuriousDegraded, "fallbacks %d, of which spurious %d", res.Fleet.Degraded, res.Fleet.SpuriousDegraded)
	require.GreaterOrEqual(t, res.Fleet.Resynced, 3)
}

// TestLiveFleetNoRedis: without redis-server on PATH, a live run of a
// shared-state game day fails at once with an error that says what to
// install, and the simulator needs none.
func TestLiveFleetNoRedis(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	s, err := Load("testdata/fleet/storm.yaml")
	require.NoError(t, err)
	_, err = Run(context.Background(), s, Options{Mode: score.ModeLive})
	require.ErrorIs(t, err, ErrNoRedis)
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), "apt-get install redis-server")
	_, err = Run(context.Background(), s, Options{Mode: score.ModeSim})
	require.NoError(t, err)
}

// TestFleetSimDeterministic: a fleet on a simulated store, with the store
// going down, plays byte for byte the same per seed.
func TestFleetSimDeterministic(t *testing.T) {
	s, err := Load("testdata/fleet/storm.yaml")
	require.NoError(t, err)
	write := func() (string, string) {
		res, err := Run(context.Background(), s, Options{})
		require.NoError(t, err)
		dir := t.TempDir()
		require.NoError(t, res.WriteDir(dir))
		r, err := os.ReadFile(filepath.Join(dir, "result.json"))
		require.NoError(t, err)
		e, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
		require.NoError(t, err)
		return string(r), string(e)
	}
	r1, e1 := write()
	r2, e2 := write()
	require.Equal(t, r1, r2)
	require.Equal(t, e1, e2)
	require.Contains(t, e1, `"kind":"state.degraded","replica":3`)
}
