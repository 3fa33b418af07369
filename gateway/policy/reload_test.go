package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestReloadKeepsState(t *testing.T) {
	cfg := oneRoute(tgt("a:m1"), tgt("b:m2", prio(1)))
	e := newEngine(t, cfg, nil)
	require.NoError(t, e.Signal(t0, "a:m1", "manual", Trip))
	require.NoError(t, e.Signal(t0, "b:m2", "refusals", Demote))
	inflight := e.Begin(t0, Request{Route: "chat"})
	require.Equal(t, "b:m2", inflight.Next(t0).Target.Key())

	t.Run("same settings share state", func(t *testing.T) {
		cfg2 := oneRoute(tgt("b:m2"), tgt("a:m1", prio(1)), tgt("c:m3", prio(2)))
		n, err := e.Reload(cfg2, Options{})
		require.NoError(t, err)
		st := n.State()
		require.Equal(t, []string{"a:m1", "b:m2", "c:m3"}, []string{st.Targets[0].Key, st.Targets[1].Key, st.Targets[2].Key})
		require.Equal(t, Open, st.Targets[0].Breaker)
		require.Equal(t, Unhealthy, st.Targets[1].Health)
		require.Equal(t, Closed, st.Targets[2].Breaker)
		require.Equal(t, "c:m3", n.Begin(t0, Request{Route: "chat"}).Next(t0).Target.Key(), "a open, b at the end of the line")
		require.Same(t, e.targets["a:m1"], n.targets["a:m1"])
	})
	t.Run("changed settings copy state", func(t *testing.T) {
		cfg2 := oneRoute(tgt("a:m1"), tgt("b:m2", prio(1)))
		cfg2.Policy.Breaker.OpenFor = dur("10s")
		n, err := e.Reload(cfg2, Options{})
		require.NoError(t, err)
		require.NotSame(t, e.targets["a:m1"], n.targets["a:m1"])
		st := n.State()
		require.Equal(t, Open, st.Targets[0].Breaker)
		require.Equal(t, t0.Add(30*time.Second), st.Targets[0].OpenUntil, "the current opening keeps its end")
		require.Equal(t, Unhealthy, st.Targets[1].Health)
	})
	t.Run("invalid config is rejected", func(t *testing.T) {
		_, err := e.Reload(Config{}, Options{})
		require.Error(t, err)
	})
}
