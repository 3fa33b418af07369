package fleet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTallyContract(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		tl := s.(Tally)
		ctx := t.Context()
		got, err := tl.Add(ctx, []Row{{Key: "client:a", Vals: []float64{1, 250}}, {Key: "spend:a:7", Vals: []float64{0.125}}})
		require.NoError(t, err)
		require.Equal(t, []Row{{Key: "client:a", Vals: []float64{1, 250}}, {Key: "spend:a:7", Vals: []float64{0.125}}}, got)
		got, err = tl.Add(ctx, []Row{{Key: "client:a", Vals: []float64{2, 0.5}}})
		require.NoError(t, err)
		require.Equal(t, []Row{{Key: "client:a", Vals: []float64{3, 250.5}}}, got, "totals after")

		row := func(a, b float64) []Row { return []Row{{Key: "budget:chat", Vals: []float64{a, b}}} }
		got, err = tl.Report(ctx, "r1", t0, 10*time.Second, row(10, 1))
		require.NoError(t, err)
		require.Equal(t, row(0, 0), got, "nobody else yet")
		got, err = tl.Report(ctx, "r2", t0.Add(time.Second), 10*time.Second, row(5, 2))
		require.NoError(t, err)
		require.Equal(t, row(10, 1), got, "r1's report")
		_, err = tl.Report(ctx, "r3", t0.Add(2*time.Second), 10*time.Second, row(1, 0))
		require.NoError(t, err)
		got, err = tl.Report(ctx, "r1", t0.Add(3*time.Second), 10*time.Second, row(11, 1))
		require.NoError(t, err)
		require.Equal(t, row(6, 2), got, "r2 and r3, not r1's own")
		got, err = tl.Report(ctx, "r2", t0.Add(12500*time.Millisecond), 10*time.Second, row(0, 0))
		require.NoError(t, err)
		require.Equal(t, row(11, 1), got, "r3's report is older than the ttl: dropped")
	})
}

func TestRecordsContract(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		rs := s.(Records)
		ctx := t.Context()
		cur, created, err := rs.Create(ctx, "idem:k", []byte("pending-1"), time.Minute)
		require.NoError(t, err)
		require.True(t, created)
		require.Nil(t, cur)
		cur, created, err = rs.Create(ctx, "idem:k", []byte("pending-2"), time.Minute)
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, "pending-1", string(cur), "the first record stands")

		ok, err := rs.Swap(ctx, "idem:k", []byte("pending-2"), []byte("done-2"), time.Minute)
		require.NoError(t, err)
		require.False(t, ok, "not the owner's record")
		ok, err = rs.Swap(ctx, "idem:k", []byte("pending-1"), []byte("done-1"), time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		v, found, err := rs.Load(ctx, "idem:k")
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, "done-1", string(v))

		ok, err = rs.Swap(ctx, "idem:k", []byte("done-1"), nil, 0)
		require.NoError(t, err)
		require.True(t, ok)
		_, found, err = rs.Load(ctx, "idem:k")
		require.NoError(t, err)
		require.False(t, found, "deleted")

		require.NoError(t, rs.Put(ctx, "health:b", []byte("demoted"), time.Minute))
		many, err := rs.LoadMany(ctx, []string{"health:a", "health:b"})
		require.NoError(t, err)
		require.Equal(t, [][]byte{nil, []byte("demoted")}, many, "nil where there is no record")

		require.NoError(t, rs.Put(ctx, "cache:x", []byte("answer"), 30*time.Millisecond))
		v, found, err = rs.Load(ctx, "cache:x")
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, "answer", string(v))
		require.Eventually(t, func() bool {
			_, found, err := rs.Load(ctx, "cache:x")
			return err == nil && !found
		}, 5*time.Second, 5*time.Millisecond, "records expire")
	})
}

func TestSharedCallsFailWhileDown(t *testing.T) {
	m := &Memory{}
	m.SetDown(true)
	ctx := t.Context()
	_, err := m.Add(ctx, []Row{{Key: "k", Vals: []float64{1}}})
	require.ErrorIs(t, err, ErrUnavailable)
	_, err = m.Report(ctx, "r", t0, time.Second, []Row{{Key: "k", Vals: []float64{1}}})
	require.ErrorIs(t, err, ErrUnavailable)
	_, _, err = m.Create(ctx, "k", []byte("v"), time.Second)
	require.ErrorIs(t, err, ErrUnavailable)
	_, _, err = m.Load(ctx, "k")
	require.ErrorIs(t, err, ErrUnavailable)
}

func TestBudgetsContract(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		b, tl := s.(Budgets), s.(Tally)
		ctx := t.Context()
		reserve := func(dollars float64) (bool, float64, float64) {
			ok, spent, reserved, err := b.Reserve(ctx, "spend:a:7", 1, dollars, time.Hour)
			require.NoError(t, err)
			return ok, spent, reserved
		}
		ok, _, reserved := reserve(3)
		require.True(t, ok, "nothing reserved, nothing spent: one request alone may overdraw")
		require.Equal(t, 3.0, reserved)
		ok, _, reserved = reserve(0.1)
		require.False(t, ok, "3 reserved: nothing more fits")
		require.Equal(t, 3.0, reserved, "a refusal reserves nothing")
		// The sync: 0.25 charged, the 3 released, in one Add.
		got, err := tl.Add(ctx, []Row{{Key: "spend:a:7", Vals: []float64{0.25, -3}}})
		require.NoError(t, err)
		require.Equal(t, []float64{0.25, 0}, got[0].Vals)
		ok, _, _ = reserve(0.5)
		require.True(t, ok)
		ok, _, _ = reserve(0.25)
		require.True(t, ok, "0.25 + 0.5 + 0.25 fits in 1")
		ok, spent, reserved := reserve(0.01)
		require.False(t, ok)
		require.Equal(t, 0.25, spent)
		require.Equal(t, 0.75, reserved)
		_, err = tl.Add(ctx, []Row{{Key: "spend:a:7", Vals: []float64{0.8, -0.75}}})
		require.NoError(t, err)
		ok, spent, _ = reserve(0)
		require.False(t, ok, "the budget is spent")
		require.InDelta(t, 1.05, spent, 1e-9)
	})
}
