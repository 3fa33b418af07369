package fleet

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway/policy"
)

// stores runs fn against each Store implementation: the same contract.
func stores(t *testing.T, fn func(t *testing.T, s Store)) {
	t.Run("memory", func(t *testing.T) { fn(t, &Memory{}) })
	t.Run("redis", func(t *testing.T) {
		srv := startRedis(t)
		r, err := NewRedis(srv.url(), RedisOptions{Prefix: "test"})
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		fn(t, r)
	})
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestStoreContract(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		got, err := s.Get(ctx, []string{"a:m"})
		require.NoError(t, err)
		require.Equal(t, []policy.BreakerUpdate{{Key: "a:m", State: policy.Closed}}, got, "absent: closed at version 0")

		var mu sync.Mutex
		var published []policy.BreakerUpdate
		subCtx, cancel := context.WithCancel(ctx)
		subscribed := make(chan error, 1)
		ready := make(chan struct{})
		go func() {
			subscribed <- s.Subscribe(subCtx, func() { close(ready) }, func(u policy.BreakerUpdate) { mu.Lock(); published = append(published, u); mu.Unlock() })
		}()
		t.Cleanup(func() { cancel(); <-subscribed })
		<-ready

		until := t0.Add(30 * time.Second)
		open := policy.Proposal{Key: "a:m", Base: 0, State: policy.Open, OpenUntil: until, Reason: "error_rate"}
		u, err := s.Propose(ctx, open, 2)
		require.NoError(t, err)
		want := policy.BreakerUpdate{Key: "a:m", State: policy.Open, Version: 1, OpenUntil: until, Reason: "error_rate"}
		require.Equal(t, want, u, "accepted")

		// A second replica's proposal on the same base loses and learns the state.
		u, err = s.Propose(ctx, policy.Proposal{Key: "a:m", Base: 0, State: policy.Open, OpenUntil: until.Add(time.Second), Reason: "probe_failures"}, 2)
		require.NoError(t, err)
		require.Equal(t, want, u, "rejected: the store's state")

		// A base ahead of the store (it restarted empty) is accepted.
		u, err = s.Propose(ctx, policy.Proposal{Key: "b:m", Base: 7, State: policy.Open, OpenUntil: until, Reason: "resync"}, 2)
		require.NoError(t, err)
		require.Equal(t, policy.BreakerUpdate{Key: "b:m", State: policy.Open, Version: 8, OpenUntil: until, Reason: "resync"}, u)
		_, err = s.Propose(ctx, policy.Proposal{Key: "b:m", Base: 0, State: policy.Closed, Reason: "resync"}, 2)
		require.NoError(t, err)

		half := policy.Proposal{Key: "a:m", Base: 1, State: policy.HalfOpen, Reason: "open_for_elapsed"}
		u, err = s.Propose(ctx, half, 2)
		require.NoError(t, err)
		require.Equal(t, uint64(2), u.Version)
		require.Equal(t, policy.HalfOpen, u.State)

		// Two trials in all, whoever claims.
		n, err := s.Claim(ctx, "a:m", 2, 1)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = s.Claim(ctx, "a:m", 2, 5)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = s.Claim(ctx, "a:m", 2, 5)
		require.NoError(t, err)
		require.Equal(t, 0, n)
		n, err = s.Claim(ctx, "a:m", 1, 5)
		require.NoError(t, err)
		require.Equal(t, 0, n, "an old version has no trials")

		u, err = s.Trial(ctx, "a:m", 2)
		require.NoError(t, err)
		require.Equal(t, policy.HalfOpen, u.State, "one of two trials")
		u, err = s.Trial(ctx, "a:m", 2)
		require.NoError(t, err)
		require.Equal(t, policy.BreakerUpdate{Key: "a:m", State: policy.Closed, Version: 3, Reason: "trials_succeeded"}, u)
		u, err = s.Trial(ctx, "a:m", 2)
		require.NoError(t, err)
		require.Equal(t, uint64(3), u.Version, "a late trial changes nothing")

		got, err = s.Get(ctx, []string{"a:m", "b:m"})
		require.NoError(t, err)
		require.Equal(t, []policy.BreakerUpdate{u, {Key: "b:m", State: policy.Open, Version: 8, OpenUntil: until, Reason: "resync"}}, got)

		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(published) == 4 }, 5*time.Second, 5*time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		var versions []uint64
		for _, p := range published {
			versions = append(versions, p.Version)
		}
		require.Equal(t, []uint64{1, 8, 2, 3}, versions, "every accepted change is published, rejected ones are not")
		require.Equal(t, want, published[0])
	})
}

func TestRedisURLErrorHidesURL(t *testing.T) {
	_, err := NewRedis("http://user:s3cret@host", RedisOptions{})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "s3cret")
}

// TestRedisLogTo: the Redis client's own log lines become structured
// records of the logger given.
func TestRedisLogTo(t *testing.T) {
	var b strings.Builder
	l := slog.New(slog.NewJSONHandler(&b, nil))
	redisLogger{l}.Printf(t.Context(), "redis: discarding bad PubSub connection: %v\n", io.EOF)
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(b.String()), &rec), b.String())
	require.Equal(t, "redis: discarding bad PubSub connection: EOF", rec["msg"])
	require.Equal(t, "redis", rec["component"])
	require.Equal(t, "WARN", rec["level"])
}
