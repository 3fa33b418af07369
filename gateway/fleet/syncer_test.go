package fleet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// nopSink is a policy.FleetSink that sends nothing: the tests drive the
// syncer by hand.
type nopSink struct{}

func (nopSink) Propose(policy.Proposal)          {}
func (nopSink) TrialResult(string, uint64, bool) {}

func syncerEngine(t *testing.T) *policy.Engine {
	t.Helper()
	e, err := policy.New(fleetConfig(), policy.Options{Fleet: nopSink{}})
	require.NoError(t, err)
	return e
}

func TestSyncerDegradeAndResync(t *testing.T) {
	e := syncerEngine(t)
	s := NewSyncer("r1")
	now := time.Unix(1_700_000_000, 0)
	require.True(t, s.Up())
	require.True(t, s.Sharing(e))

	ev, ok := s.Degrade(e, now, "boom")
	require.True(t, ok)
	assert.Equal(t, events.Event{Time: now, Kind: events.StateDegraded, Reason: "boom"}, ev)
	assert.False(t, s.Up())
	assert.False(t, e.Shared(), "local breakers rule")
	assert.False(t, s.Sharing(e))
	_, ok = s.Degrade(e, now, "again")
	assert.False(t, ok, "one state.degraded per fall-back")

	// Locally opened while the store was away: the resync proposes it on
	// the store's version.
	require.NoError(t, e.Signal(now, "a:m", "probe_failures", policy.Trip))
	props, was := s.Resync(e, now, []policy.BreakerUpdate{{Key: "a:m", State: policy.Closed}})
	assert.False(t, was)
	require.Len(t, props, 1)
	assert.Equal(t, policy.Proposal{Key: "a:m", Base: 0, State: policy.Open, OpenUntil: props[0].OpenUntil, Reason: "resync", Time: now}, props[0])
	assert.True(t, s.Up())
	assert.True(t, e.Shared())
	ev, ok = s.Resynced(now, was)
	require.True(t, ok)
	assert.Equal(t, events.Event{Time: now, Kind: events.StateDegraded, OK: true, Reason: "resynced"}, ev)

	_, was = s.Resync(e, now, nil)
	_, ok = s.Resynced(now, was)
	assert.False(t, ok, "a resync of a replica that never fell back says nothing")
}

func TestSyncerClaimsEachHalfOpenVersionOnce(t *testing.T) {
	e := syncerEngine(t)
	s := NewSyncer("r1")
	now := time.Unix(1_700_000_000, 0)
	open := policy.BreakerUpdate{Key: "a:m", Version: 1, State: policy.Open, OpenUntil: now.Add(time.Second)}
	half := policy.BreakerUpdate{Key: "a:m", Version: 2, State: policy.HalfOpen}
	assert.False(t, s.Apply(e, now, open), "nothing to claim while open")
	assert.True(t, s.Apply(e, now, half))
	assert.False(t, s.Apply(e, now, half), "claimed once")
	g, ok := Granted(half, 2)
	require.True(t, ok)
	assert.Equal(t, 2, g.Grant)
	assert.False(t, s.Apply(e, now, g), "the grant is applied, not claimed again")
	_, ok = Granted(half, 0)
	assert.False(t, ok)
	assert.False(t, s.Apply(e, now, policy.BreakerUpdate{Key: "nope:m", Version: 3, State: policy.HalfOpen}), "a key the routes don't use")

	s.Degrade(e, now, "boom")
	assert.False(t, s.Apply(e, now, policy.BreakerUpdate{Key: "a:m", Version: 4, State: policy.HalfOpen}), "fallen back: local state rules")
	s.Resync(e, now, nil)
	assert.True(t, s.Apply(e, now, half), "a resync forgets the claims")
}

func TestSyncerSharesDemotionsOnce(t *testing.T) {
	e := syncerEngine(t)
	a, b := NewSyncer("a"), NewSyncer("b")
	at := time.UnixMilli(1_700_000_000_123)

	d, ok := ShareDemotion(events.Event{Kind: events.HealthChange, Target: "a:m", To: string(policy.Unhealthy), Reason: "failures", Time: at})
	require.True(t, ok)
	_, ok = ShareDemotion(events.Event{Kind: events.HealthChange, Target: "a:m", To: string(policy.Unhealthy), Reason: FleetReason + "failures", Time: at})
	assert.False(t, ok, "learned from the fleet: not shared again")
	_, ok = ShareDemotion(events.Event{Kind: events.HealthChange, Target: "a:m", To: string(policy.Healthy), Time: at})
	assert.False(t, ok)

	r, ok := a.Demoted(e, d)
	require.True(t, ok)
	assert.Equal(t, "health:a:m", r.Name)
	assert.Equal(t, e.Settings().Health.Window.D(), r.TTL)
	_, ok = a.Demoted(e, Demotion{Key: "a:m", Reason: FleetReason + "x", At: at})
	assert.False(t, ok)

	names := b.HealthNames(e)
	assert.Contains(t, names, "health:a:m")
	vals := [][]byte{nil, r.Value, []byte("not json")}
	assert.Equal(t, []Demotion{{Key: "a:m", Reason: "failures", At: at}}, b.Demotions(vals))
	assert.Empty(t, b.Demotions(vals), "each demotion once")
	assert.Empty(t, a.Demotions(vals), "its own demotion is not learned")
}

func TestSyncerBudgets(t *testing.T) {
	e := syncerEngine(t)
	s := NewSyncer("r1")
	now := time.Unix(1_700_000_000, 0)
	r := s.Budgets(e, now)
	assert.Equal(t, "r1", r.Member)
	assert.Equal(t, e.Settings().RetryBudget.Window.D(), r.Window)
	require.Len(t, r.Rows, 1)
	assert.Equal(t, "budget:chat", r.Rows[0].Key)
	others := r.Others([]Row{{Key: "budget:chat", Vals: []float64{7, 3}}})
	require.Len(t, others, 1)
	assert.Equal(t, policy.RouteBudget{Route: "chat", Requests: 7, Retries: 3}, others[0])
	require.NoError(t, e.SetFleetBudget(others[0]))
}
