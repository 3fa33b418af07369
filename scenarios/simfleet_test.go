package scenarios

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/fleet"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// playFleetShare plays a three-replica game day on gateway config gw
// (testdata/fleetshare) with the given state (and more of the gateway's
// fields), the primary a/m failing with 503 from fault on, and more steps,
// and returns its result.
func playFleetShare(t *testing.T, gw, state, rate, fault string, more ...string) *score.Result {
	t.Helper()
	src := `version: 1
name: fleet-share
seed: 11
duration: 4s
providers: {file: ../diff/providers.yaml}
gateway: {config: ` + gw + `, replicas: 3, state: ` + state + `}
traffic:
  - {route: chat, rate: ` + rate + `, arrival: uniform, stream: 100%, prompt_tokens: 20}
timeline:
  - {name: f, at: ` + fault + `, target: a/m, fault: {kind: http_error, status: 503}}
` + strings.Join(more, "")
	s, err := Parse("testdata/fleetshare/play.yaml", []byte(src))
	require.NoError(t, err)
	res, err := Run(context.Background(), s, Options{})
	require.NoError(t, err)
	return res
}

// primaryRetries counts the same-target retries on a/m: its attempts
// beyond each request's first.
func primaryRetries(t *testing.T, res *score.Result) int {
	t.Helper()
	first := map[string]bool{}
	retries := 0
	for _, e := range res.Log() {
		if e.Kind != events.AttemptStart || e.Target != "a:m" {
			continue
		}
		if first[e.RequestID] {
			retries++
		}
		first[e.RequestID] = true
	}
	require.NotEmpty(t, first, "the primary was tried")
	return retries
}

// TestSimFleetSharesRetryBudget: with the primary failing for the whole
// run, a budget of 2 retries per window lets three replicas with local
// state retry twice each, and a fleet sharing its budgets (every Share
// through the simulated store) about twice in all: the replicas learn the
// others' retries one Share late, so the fleet may exceed the budget by
// what they admit in that interval, never threefold.
func TestSimFleetSharesRetryBudget(t *testing.T) {
	const budget, replicas = 2, 3 // testdata/fleetshare/gateway-budget.yaml
	local := primaryRetries(t, playFleetShare(t, "gateway-budget.yaml", "memory", "30/s", "0s"))
	shared := primaryRetries(t, playFleetShare(t, "gateway-budget.yaml", "redis", "30/s", "0s"))
	require.Equal(t, replicas*budget, local, "each replica spends its own budget")
	require.Less(t, shared, local)
	require.GreaterOrEqual(t, shared, budget)
	require.LessOrEqual(t, shared, budget+replicas-1, "at 30/s a replica serves one request per Share: the others exceed by at most one each")
}

// TestSimFleetSharesHealth: a target one replica demotes is demoted on the
// others (reason fleet:…) within one Share plus the propagation delay,
// before their own requests fail on it; with local state each replica
// demotes it only on its own failure.
func TestSimFleetSharesHealth(t *testing.T) {
	demotions := func(res *score.Result) (first time.Duration, who int, fleetAt map[int]time.Duration, own map[int]bool) {
		fleetAt, own = map[int]time.Duration{}, map[int]bool{}
		for _, e := range res.Log() {
			if e.Kind != events.HealthChange || e.Target != "a:m" || e.To != "unhealthy" {
				continue
			}
			at := e.Time.Sub(Epoch)
			if strings.HasPrefix(e.Reason, fleet.FleetReason) {
				fleetAt[e.Replica] = at
				continue
			}
			if len(own) == 0 {
				first, who = at, e.Replica
			}
			own[e.Replica] = true
		}
		return first, who, fleetAt, own
	}
	// 3/s: each replica serves a request a second, a third of a second
	// after the previous replica.
	first, who, fleetAt, own := demotions(playFleetShare(t, "gateway-health.yaml", "redis", "3/s", "1s"))
	require.Equal(t, map[int]bool{who: true}, own, "only the first replica to fail demotes on its own")
	require.Len(t, fleetAt, 2, "the two others learn it from the store")
	for rep, at := range fleetAt {
		require.NotEqual(t, who, rep)
		require.Greater(t, at, first)
		require.LessOrEqual(t, at-first, fleet.DefaultShare, "within one Share (propagation 0)")
	}
	_, _, fleetAt, own = demotions(playFleetShare(t, "gateway-health.yaml", "memory", "3/s", "1s"))
	require.Empty(t, fleetAt)
	require.Len(t, own, 3, "local: every replica fails and demotes on its own")

	// The answer of the share that reads the demotion arrives after the
	// propagation delay.
	first, _, fleetAt, _ = demotions(playFleetShare(t, "gateway-health.yaml", "redis, propagation: 40ms", "3/s", "1s"))
	require.Len(t, fleetAt, 2)
	for _, at := range fleetAt {
		require.GreaterOrEqual(t, at-first, 40*time.Millisecond)
		require.LessOrEqual(t, at-first, fleet.DefaultShare+40*time.Millisecond)
	}
	// With the store down nothing is shared: each replica is on its own.
	_, _, fleetAt, own = demotions(playFleetShare(t, "gateway-health.yaml", "redis", "3/s", "1s",
		"  - {name: down, at: 500ms, for: 3s, store: down}\n"))
	require.Empty(t, fleetAt)
	require.Len(t, own, 3)
	// A store slower than its timeout (100ms) loses every share's answer.
	_, _, fleetAt, own = demotions(playFleetShare(t, "gateway-health.yaml", "redis", "3/s", "1s",
		"  - {name: late, at: 500ms, for: 3s, store: {slow: 150ms}}\n"))
	require.Empty(t, fleetAt)
	require.Len(t, own, 3)
}

// TestSimFleetShareDeterministic: budgets and health shared through the
// simulated store play byte for byte the same per seed.
func TestSimFleetShareDeterministic(t *testing.T) {
	play := func() string {
		var b strings.Builder
		for _, e := range playFleetShare(t, "gateway-health.yaml", "redis, propagation: 7ms", "3/s", "1s").Log() {
			fmt.Fprintf(&b, "%+v\n", e)
		}
		return b.String()
	}
	first := play()
	require.True(t, strings.Contains(first, "Reason:fleet:"), "a demotion is shared")
	require.Equal(t, first, play())
}
