package policy

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/stretchr/testify/require"
)

// fleetLog records what a shared engine tells the fleet's store.
type fleetLog struct {
	props  []Proposal
	trials []string
}

func (f *fleetLog) Propose(p Proposal) { f.props = append(f.props, p) }
func (f *fleetLog) TrialResult(key string, version uint64, ok bool) {
	f.trials = append(f.trials, key)
}

func sharedEngine(t *testing.T, cfg Config, log *events.Log, f FleetSink) *Engine {
	t.Helper()
	var sink events.Sink = events.Discard
	if log != nil {
		sink = log
	}
	e, err := New(cfg, Options{Rand: rand.New(rand.NewPCG(1, 2)), Events: sink, Fleet: f})
	require.NoError(t, err)
	return e
}

func fleetCfg() Config {
	cfg := noHealth(oneRoute(tgt("a:m1", attempts(1)), tgt("b:m1", attempts(1), prio(1))))
	cfg.Policy.Breaker.HalfOpenRequests = 2
	return cfg
}

func TestFleetLocalTransitionIsProposed(t *testing.T) {
	f := &fleetLog{}
	e := sharedEngine(t, fleetCfg(), nil, f)
	require.NoError(t, e.Signal(t0, "a:m1", "probe", Trip))
	require.Len(t, f.props, 1)
	p := f.props[0]
	require.Equal(t, Proposal{Key: "a:m1", Base: 0, State: Open, OpenUntil: t0.Add(30 * time.Second), Reason: "probe", Time: t0}, p)

	// A local engine proposes nothing.
	local := newEngine(t, fleetCfg(), nil)
	require.NoError(t, local.Signal(t0, "a:m1", "probe", Trip))
	require.False(t, local.Shared())
}

func TestFleetApplyAdoptsNewerState(t *testing.T) {
	log := &events.Log{}
	f := &fleetLog{}
	e := sharedEngine(t, fleetCfg(), log, f)
	until := t0.Add(10 * time.Second)
	changed, err := e.Apply(t0, BreakerUpdate{Key: "a:m1", State: Open, Version: 1, OpenUntil: until, Reason: "error_rate"})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, []string{"0s closed>open fleet:error_rate"}, transitions(log))
	require.Empty(t, f.props, "an adopted state is not proposed back")
	// The request goes to the fallback: a:m1 is open fleet-wide.
	d := one(e, t0, Outcome{Class: OK, Status: 200})
	require.Equal(t, "b:m1", d.Target.Key())

	// Stale and repeated updates change nothing.
	for _, u := range []BreakerUpdate{
		{Key: "a:m1", State: Closed, Version: 0},
		{Key: "a:m1", State: Closed, Version: 1},
		{Key: "a:m1", State: Open, Version: 1},
	} {
		changed, err = e.Apply(t0, u)
		require.NoError(t, err)
		require.False(t, changed, "%+v", u)
	}
	b, ok := e.Breaker("a:m1")
	require.True(t, ok)
	require.Equal(t, BreakerUpdate{Key: "a:m1", State: Open, Version: 1, OpenUntil: until}, b)

	_, err = e.Apply(t0, BreakerUpdate{Key: "nope", State: Open, Version: 9})
	require.ErrorIs(t, err, ErrUnknownTarget)
}

func TestFleetHalfOpenAdmitsOnlyGrantedTrials(t *testing.T) {
	log := &events.Log{}
	f := &fleetLog{}
	e := sharedEngine(t, fleetCfg(), log, f)
	until := t0.Add(10 * time.Second)
	_, err := e.Apply(t0, BreakerUpdate{Key: "a:m1", State: Open, Version: 1, OpenUntil: until})
	require.NoError(t, err)

	// At OpenUntil the breaker half-opens by the clock and proposes so,
	// but admits nothing until the store grants it trials.
	e.Tick(until)
	require.Len(t, f.props, 1)
	require.Equal(t, Proposal{Key: "a:m1", Base: 1, State: HalfOpen, Reason: "open_for_elapsed", Time: until}, f.props[0])
	d := one(e, until, Outcome{Class: OK, Status: 200})
	require.Equal(t, "b:m1", d.Target.Key(), "no trial granted yet")

	// The store accepted (version 2) and granted one trial.
	_, err = e.Apply(until, BreakerUpdate{Key: "a:m1", State: HalfOpen, Version: 2, Grant: 1})
	require.NoError(t, err)
	d = one(e, until, Outcome{Class: OK, Status: 200})
	require.Equal(t, "a:m1", d.Target.Key(), "the granted trial")
	require.Equal(t, []string{"a:m1"}, f.trials, "its success is reported")
	d = one(e, until, Outcome{Class: OK, Status: 200})
	require.Equal(t, "b:m1", d.Target.Key(), "one trial granted, one admitted")
	b, _ := e.Breaker("a:m1")
	require.Equal(t, HalfOpen, b.State, "a shared breaker never closes by itself")

	// The store closes it once the fleet's trials succeeded.
	_, err = e.Apply(until, BreakerUpdate{Key: "a:m1", State: Closed, Version: 3, Reason: "trials_succeeded"})
	require.NoError(t, err)
	d = one(e, until, Outcome{Class: OK, Status: 200})
	require.Equal(t, "a:m1", d.Target.Key())
	require.Equal(t, []string{
		"0s closed>open fleet", "10s open>half_open open_for_elapsed", "10s half_open>closed fleet:trials_succeeded",
	}, transitions(log))
}

func TestFleetFailedTrialProposesOpen(t *testing.T) {
	f := &fleetLog{}
	e := sharedEngine(t, fleetCfg(), nil, f)
	_, err := e.Apply(t0, BreakerUpdate{Key: "a:m1", State: HalfOpen, Version: 4, Grant: 2})
	require.NoError(t, err)
	d := one(e, t0, Outcome{Class: ServerError, Status: 500})
	require.Equal(t, "a:m1", d.Target.Key())
	require.Len(t, f.props, 1)
	require.Equal(t, Open, f.props[0].State)
	require.Equal(t, uint64(4), f.props[0].Base)
	require.Equal(t, "trial_failed", f.props[0].Reason)
}

func TestFleetHalfOpenWithoutVerdictReopens(t *testing.T) {
	f := &fleetLog{}
	cfg := fleetCfg()
	cfg.Policy.Breaker.TrialTimeout = dur("5s")
	e := sharedEngine(t, cfg, nil, f)
	_, err := e.Apply(t0, BreakerUpdate{Key: "a:m1", State: HalfOpen, Version: 2})
	require.NoError(t, err)
	require.Equal(t, t0.Add(5*time.Second), e.NextTick(), "no grant here, but the fleet's verdict is awaited")
	e.Tick(t0.Add(5 * time.Second))
	require.Len(t, f.props, 1)
	require.Equal(t, Proposal{Key: "a:m1", Base: 2, State: Open, OpenUntil: t0.Add(65 * time.Second), Reason: "trial_timeout", Time: t0.Add(5 * time.Second)}, f.props[0])
}

func TestFleetUnsharedFallsBackToLocalRules(t *testing.T) {
	f := &fleetLog{}
	e := sharedEngine(t, fleetCfg(), nil, f)
	_, err := e.Apply(t0, BreakerUpdate{Key: "a:m1", State: HalfOpen, Version: 2})
	require.NoError(t, err)
	e.SetShared(t0, false) // the store is down
	require.False(t, e.Shared())
	for range 2 { // local rules: HalfOpenRequests trials, then closed
		d := one(e, t0, Outcome{Class: OK, Status: 200})
		require.Equal(t, "a:m1", d.Target.Key())
	}
	b, _ := e.Breaker("a:m1")
	require.Equal(t, Closed, b.State)
	require.Empty(t, f.props, "nothing is proposed while the store is down")
	require.Empty(t, f.trials)
}

func TestFleetBudget(t *testing.T) {
	const a, b = "a:m1", "b:m2"
	cfg := noHealth(oneRoute(tgt(a, attempts(2)), tgt(b, prio(1))))
	fail := byTarget(map[string]Outcome{a: {Class: ServerError, Status: 500}})
	retry := []string{a, "wait", a, b, "done"}
	noRetry := []string{a, b, "done"}
	tests := []struct {
		name   string
		shared bool // the engine follows the store
		fleet  RouteBudget
		want   []string
	}{
		{name: "alone: the floor of 3 retries", shared: true, want: retry},
		{name: "the fleet used the floor", shared: true, fleet: RouteBudget{Route: "chat", Requests: 9, Retries: 3}, want: noRetry},
		{name: "the fleet's requests allow more", shared: true, fleet: RouteBudget{Route: "chat", Requests: 100, Retries: 3}, want: retry},
		{name: "the store is down: local budget", shared: false, fleet: RouteBudget{Route: "chat", Requests: 9, Retries: 3}, want: retry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := sharedEngine(t, cfg, nil, &fleetLog{})
			if tt.fleet.Route != "" {
				require.NoError(t, e.SetFleetBudget(tt.fleet))
			}
			e.SetShared(t0, tt.shared)
			_, trail, _ := drive(e, t0, Request{ID: "1"}, fail)
			require.Equal(t, tt.want, keys(trail))
			retries := 0.0
			if tt.want[1] == "wait" {
				retries = 1
			}
			require.Equal(t, []RouteBudget{{Route: "chat", Requests: 1, Retries: retries}}, e.Budgets(t0.Add(time.Second)), "only this replica's own counts are reported")
		})
	}
	t.Run("unknown route", func(t *testing.T) {
		e := sharedEngine(t, cfg, nil, &fleetLog{})
		require.ErrorIs(t, e.SetFleetBudget(RouteBudget{Route: "nope"}), ErrUnknownRoute)
	})
	t.Run("a local engine ignores fleet counts", func(t *testing.T) {
		e := newEngine(t, cfg, nil)
		require.NoError(t, e.SetFleetBudget(RouteBudget{Route: "chat", Requests: 9, Retries: 3}))
		_, trail, _ := drive(e, t0, Request{ID: "1"}, fail)
		require.Equal(t, retry, keys(trail))
	})
}
