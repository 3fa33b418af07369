package clients

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sync plays a fleet syncer for replicas sharing one client: each sends
// its pending use to the totals and learns the others'.
type fleetTotals struct {
	req, tok float64
	spent    map[int64]float64
	seen     map[*Account][2]float64 // totals as of each replica's last sync
}

func (f *fleetTotals) sync(now time.Time, a *Account) {
	p := a.Pending(now)
	f.req += p.Requests
	f.tok += p.Tokens
	f.spent[p.Window] += p.Dollars
	last := f.seen[a]
	others := Fleet{Requests: f.req - last[0] - p.Requests, Tokens: f.tok - last[1] - p.Tokens, Window: p.Window, Spent: f.spent[p.Window]}
	f.seen[a] = [2]float64{f.req, f.tok}
	a.Merge(now, p, others)
}

func TestFleetSharesLimits(t *testing.T) {
	lim := Limits{RequestsPerMinute: 4, TokensPerMinute: 1000, Budget: 1}
	replica := func() *Account {
		a, _ := table(t, Client{ID: "c", Digest: Digest("k"), Limits: lim}).Lookup("k")
		return a
	}
	a, b := replica(), replica()
	require.True(t, a.Shared())
	f := &fleetTotals{spent: map[int64]float64{}, seen: map[*Account][2]float64{}}

	// A takes three of the four requests a minute, B has not heard yet.
	for range 3 {
		require.Equal(t, Allow, admit(a, t0).Verdict)
	}
	f.sync(t0, a)
	f.sync(t0, b)
	require.Equal(t, Allow, admit(b, t0).Verdict, "the fleet's fourth request")
	require.Equal(t, Decision{Verdict: RateLimited, Limit: LimitRequests, RetryAfter: 15 * time.Second}, admit(b, t0), "B refuses: the fleet used the minute's four")
	f.sync(t0, b)
	f.sync(t0, a)
	require.Equal(t, RateLimited, admit(a, t0).Verdict, "A learned B's request")
	require.Equal(t, 0.0, a.Pending(t0).Requests, "sent use is no longer pending")

	// Tokens and spend: A and B each spend 0.6 of the dollar a day.
	later := t0.Add(time.Minute)
	a.Charge(later, 700, 0.6)
	b.Charge(later, 200, 0.6)
	f.sync(later, a)
	f.sync(later, b)
	f.sync(later, a)
	for name, r := range map[string]*Account{"A": a, "B": b} {
		u := r.Usage(later)
		require.InDelta(t, 1.2, u.Spent, 1e-9, "%s sees the fleet's spend", name)
		require.InDelta(t, 100, u.Tokens, 1e-9, "%s's bucket lost the fleet's 900 tokens", name)
		require.Equal(t, OverBudget, admit(r, later).Verdict, name)
	}

	// A charge after Pending stays this replica's until the next sync.
	p := a.Pending(later)
	a.Charge(later, 0, 0.05)
	a.Merge(later, p, Fleet{Window: p.Window, Spent: 1.2})
	require.InDelta(t, 1.25, a.Usage(later).Spent, 1e-9)
	require.InDelta(t, 0.05, a.Pending(later).Dollars, 1e-9)

	// A client with no shared limit is not synced.
	u, _ := table(t, Client{ID: "u", Digest: Digest("u"), Limits: Limits{MaxConcurrent: 2}}).Lookup("u")
	require.False(t, u.Shared())
}

func TestTableAll(t *testing.T) {
	tb := table(t, Client{ID: "b", Digest: Digest("kb")}, Client{ID: "a", Digest: Digest("ka")})
	var ids []string
	for a := range tb.All() {
		ids = append(ids, a.ID())
	}
	require.Equal(t, []string{"a", "b"}, ids)
	for range (*Table)(nil).All() {
		t.Fatal("a nil table has no accounts")
	}
}

// admit admits a request of no worst case on route chat.
func admit(a *Account, now time.Time) Decision {
	d, _ := a.Admit(now, Ask{Route: "chat"})
	return d
}

// TestStoredReservation: a reservation also held in the fleet's store is
// reported as released (Pending) when its request ends, once, and a sync
// that sent it clears it.
func TestStoredReservation(t *testing.T) {
	a, _ := table(t, Client{ID: "c", Digest: Digest("k"), Limits: Limits{Budget: 1, BudgetPeriod: time.Hour}}).Lookup("k")
	_, window, end := a.Budget(t0)
	require.True(t, t0.Truncate(time.Hour).Add(time.Hour).Equal(end), end)
	d, r := a.Admit(t0, Ask{Dollars: 0.3})
	require.Equal(t, Allow, d.Verdict)
	r.Stored(window, 0.3)
	require.Zero(t, a.Pending(t0).Released, "in flight: still reserved")
	a.Charge(t0, 10, 0.1)
	r.Release(t0)
	r.Release(t0)
	p := a.Pending(t0)
	require.Equal(t, Consumption{Requests: 1, Tokens: 10, Dollars: 0.1, Released: 0.3, Window: window}, p)
	a.Merge(t0, p, Fleet{Spent: 0.1, Window: window})
	require.Equal(t, Consumption{Window: window}, a.Pending(t0))

	// A reservation of a window that has ended is not reported.
	_, r = a.Admit(t0, Ask{Dollars: 0.3})
	r.Stored(window, 0.3)
	r.Release(t0.Add(time.Hour))
	require.Zero(t, a.Pending(t0.Add(time.Hour)).Released)
}

// TestSettlement: what the fleet's token bucket is told when a request
// ends is what it used less the worst case it drew: a request that drew
// 121 tokens and used 50 gives 71 back; a charge of a request admitted
// without a draw (the store was down) is taken whole; a settled amount is
// not told twice.
func TestSettlement(t *testing.T) {
	a, _ := table(t, Client{ID: "c", Digest: Digest("k"), Limits: Limits{TokensPerMinute: 1000}}).Lookup("k")
	now := time.Unix(1e9, 0)
	_, r := a.Admit(now, Ask{Route: "chat", Tokens: 121})
	r.DrewTokens(121)
	a.Charge(now, 50, 0)
	require.Equal(t, 50.0, a.Settlement(), "in flight: the charge beside the worst case drawn")
	r.Release(now)
	require.Equal(t, -71.0, a.Settlement())
	a.Settled(-71)
	require.Zero(t, a.Settlement())

	_, r = a.Admit(now, Ask{Route: "chat", Tokens: 121}) // no draw: the store was down
	a.Charge(now, 30, 0)
	r.Release(now)
	require.Equal(t, 30.0, a.Settlement())
}
