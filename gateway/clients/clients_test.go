package clients

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func table(t *testing.T, cs ...Client) *Table {
	t.Helper()
	tb, err := New(cs)
	require.NoError(t, err)
	return tb
}

func TestLookup(t *testing.T) {
	tb := table(t, Client{ID: "app", Digest: Digest("sk-app")}, Client{ID: "batch", Digest: Digest("sk-batch")})
	for _, c := range []struct {
		key, id string
		ok      bool
	}{{"sk-app", "app", true}, {"sk-batch", "batch", true}, {"sk-ap", "", false}, {"", "", false}, {"SK-APP", "", false}} {
		a, ok := tb.Lookup(c.key)
		require.Equal(t, c.ok, ok, c.key)
		if ok {
			require.Equal(t, c.id, a.ID())
		}
	}
	var none *Table
	_, ok := none.Lookup("x")
	require.False(t, ok)
	require.Zero(t, none.Len())
}

func TestNewRejects(t *testing.T) {
	for name, cs := range map[string][]Client{
		"empty id":      {{Digest: Digest("a")}},
		"duplicate id":  {{ID: "a", Digest: Digest("a")}, {ID: "a", Digest: Digest("b")}},
		"duplicate key": {{ID: "a", Digest: Digest("k")}, {ID: "b", Digest: Digest("k")}},
	} {
		_, err := New(cs)
		require.Error(t, err, name)
	}
}

// step is one line of an admission transcript.
type step struct {
	at      time.Duration // since t0
	op      string        // admit, release, charge
	route   string
	tokens  int
	dollars float64
	want    Decision // admit only
}

func TestAdmitTranscripts(t *testing.T) {
	cases := map[string]struct {
		lim   Limits
		steps []step
	}{
		"routes": {Limits{Routes: []string{"chat"}}, []step{
			{op: "admit", route: "chat"},
			{op: "admit", route: "embed", want: Decision{Verdict: Forbidden, Limit: LimitRoutes}},
		}},
		"requests per minute refill": {Limits{RequestsPerMinute: 2}, []step{
			{op: "admit"}, {op: "admit"},
			{op: "admit", want: Decision{Verdict: RateLimited, Limit: LimitRequests, RetryAfter: 30 * time.Second}},
			{at: 15 * time.Second, op: "admit", want: Decision{Verdict: RateLimited, Limit: LimitRequests, RetryAfter: 15 * time.Second}},
			{at: 30 * time.Second, op: "admit"},
			// time going backwards refills nothing (the wait counts from the bucket's own time)
			{at: 10 * time.Second, op: "admit", want: Decision{Verdict: RateLimited, Limit: LimitRequests, RetryAfter: 30 * time.Second}},
		}},
		"concurrency cap": {Limits{MaxConcurrent: 1}, []step{
			{op: "admit"},
			{op: "admit", want: Decision{Verdict: RateLimited, Limit: LimitMaxConcurrent, RetryAfter: time.Second}},
			{op: "release"},
			{op: "admit"},
		}},
		"tokens per minute: reservation then real charge": {Limits{TokensPerMinute: 600}, []step{
			{op: "admit", tokens: 400},
			{op: "admit", tokens: 400, want: Decision{Verdict: RateLimited, Limit: LimitTokens, RetryAfter: 20 * time.Second}},
			{op: "release"},             // reservation back: 600
			{op: "charge", tokens: 900}, // real tokens: -300
			{op: "admit", tokens: 1, want: Decision{Verdict: RateLimited, Limit: LimitTokens, RetryAfter: 30100 * time.Millisecond}},
			{at: 31 * time.Second, op: "admit", tokens: 1},
			// a request larger than the burst waits for a full bucket
			{at: 5 * time.Minute, op: "admit", tokens: 5000},
		}},
		"budget per day": {Limits{Budget: 1}, []step{
			{op: "admit"}, {op: "charge", dollars: 0.6}, {op: "admit"}, {op: "charge", dollars: 0.6},
			{at: time.Hour, op: "admit", want: Decision{Verdict: OverBudget, Limit: LimitBudget, RetryAfter: 13 * time.Hour}},
			{at: 14 * time.Hour, op: "admit"},
		}},
		"budget reserves the worst case": {Limits{Budget: 1}, []step{
			{op: "admit", dollars: 0.4}, {op: "admit", dollars: 0.4},
			// 0.8 reserved: a third worst case does not fit, until one ends
			{op: "admit", dollars: 0.4, want: Decision{Verdict: OverBudget, Limit: LimitBudget, RetryAfter: time.Second}},
			{op: "charge", dollars: 0.1}, {op: "release"}, // spent 0.1, reserved 0.4
			{op: "admit", dollars: 0.4}, // 0.1 + 0.4 + 0.4 fits
			// the oldest retries after an attempt that cost 0.3: its
			// reservation is renewed, 0.4 + 0.4 + 0.4 does not fit
			{op: "charge", dollars: 0.3},
			{op: "extend", want: Decision{Verdict: OverBudget, Limit: LimitBudget, RetryAfter: time.Second}},
			{op: "release"},
			// the other retries after an attempt that cost 0.05: 0.45 + 0.4 fits
			{op: "charge", dollars: 0.05}, {op: "extend"},
			{op: "admit", dollars: 0.2, want: Decision{Verdict: OverBudget, Limit: LimitBudget, RetryAfter: time.Second}},
		}},
		"budget: one request alone may overdraw": {Limits{Budget: 0.01}, []step{
			{op: "admit", dollars: 0.5},
			{op: "admit", dollars: 0.001, want: Decision{Verdict: OverBudget, Limit: LimitBudget, RetryAfter: time.Second}},
			// its attempt failed at no cost: the retry is again the only one
			{op: "extend"},
			{op: "charge", dollars: 0.02},
			{op: "extend", want: Decision{Verdict: OverBudget, Limit: LimitBudget, RetryAfter: 14 * time.Hour}},
			{op: "release"},
			{at: time.Hour, op: "admit", want: Decision{Verdict: OverBudget, Limit: LimitBudget, RetryAfter: 13 * time.Hour}},
		}},
		"unlimited": {Limits{}, []step{
			{op: "admit", tokens: 1 << 30}, {op: "charge", tokens: 1 << 30, dollars: 1e9}, {op: "admit", tokens: 1 << 30},
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			a, _ := table(t, Client{ID: "c", Digest: Digest("k"), Limits: c.lim}).Lookup("k")
			var held []*Reservation // admitted, not released: the oldest first
			for i, s := range c.steps {
				now := t0.Add(s.at)
				switch s.op {
				case "admit":
					d, r := a.Admit(now, Ask{Route: s.route, Tokens: s.tokens, Dollars: s.dollars})
					require.Equal(t, s.want, d, "step %d", i)
					require.Equal(t, d.Verdict == Allow, r != nil, "step %d: a reservation on allow only", i)
					if r != nil {
						held = append(held, r)
					}
				case "release":
					held[0].Release(now)
					held = held[1:]
				case "extend":
					require.Equal(t, s.want, held[0].Extend(now), "step %d", i)
				case "charge":
					a.Charge(now, s.tokens, s.dollars)
				}
			}
		})
	}
}

func TestReloadKeepsCounters(t *testing.T) {
	tb := table(t, Client{ID: "c", Digest: Digest("old"), Limits: Limits{MaxConcurrent: 1, RequestsPerMinute: 10}})
	a, _ := tb.Lookup("old")
	d, r := a.Admit(t0, Ask{})
	require.Equal(t, Allow, d.Verdict)
	// The key rotates, the limits change: the request in flight still counts.
	nt, err := tb.Reload([]Client{{ID: "c", Digest: Digest("new"), Limits: Limits{MaxConcurrent: 1, RequestsPerMinute: 5}}})
	require.NoError(t, err)
	_, ok := nt.Lookup("old")
	require.False(t, ok)
	b, ok := nt.Lookup("new")
	require.True(t, ok)
	d, _ = b.Admit(t0, Ask{})
	require.Equal(t, LimitMaxConcurrent, d.Limit)
	r.Release(t0)
	d, _ = b.Admit(t0, Ask{})
	require.Equal(t, Allow, d.Verdict)
	u := b.Usage(t0)
	require.Equal(t, Usage{ID: "c", InFlight: 1, Requests: 4, Tokens: -1}, u)
}
