package fleet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBucketsContract: Memory and Redis share one token bucket rule. A new
// bucket is full; a draw takes the worst case only while the bucket holds
// it (a draw larger than the burst needs a full bucket), else says how
// long until it would; it refills at perMinute a minute; a settlement
// takes whatever the bucket holds (into debt) or gives back up to the
// burst; keys are apart.
func TestBucketsContract(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		b := s.(Buckets)
		ctx := t.Context()
		draw := func(n float64, at time.Duration) (bool, time.Duration) {
			t.Helper()
			ok, wait, err := b.Draw(ctx, "tokens:app", 600, n, t0.Add(at))
			require.NoError(t, err)
			return ok, wait
		}
		ok, _ := draw(400, 0)
		require.True(t, ok, "a new bucket is full")
		ok, wait := draw(300, 0)
		require.False(t, ok, "200 left")
		require.Equal(t, 10*time.Second, wait, "100 more at 10 a second")
		ok, _ = draw(300, 10*time.Second)
		require.True(t, ok, "refilled")
		// The request used 100 of its 300: 200 given back.
		require.NoError(t, b.Settle(ctx, "tokens:app", 600, -200, t0.Add(10*time.Second)))
		ok, _ = draw(200, 10*time.Second)
		require.True(t, ok)
		// A charge beyond the worst case takes the bucket into debt.
		require.NoError(t, b.Settle(ctx, "tokens:app", 600, 500, t0.Add(10*time.Second)))
		ok, wait = draw(1, 10*time.Second)
		require.False(t, ok)
		require.Equal(t, 50100*time.Millisecond, wait, "500 of debt and 1 token at 10 a second")
		// Larger than the burst: only a full bucket admits it.
		ok, _ = draw(900, 10*time.Second+2*time.Minute)
		require.True(t, ok, "a full bucket admits a draw beyond the burst")
		ok, _, err := b.Draw(ctx, "tokens:other", 600, 600, t0)
		require.NoError(t, err)
		require.True(t, ok, "another key has its own bucket")
	})
}
