package clients

import (
	"iter"
	"maps"
	"slices"
	"time"
)

// A fleet of gateways shares its clients' requests per minute, tokens per
// minute and spend budgets (MaxConcurrent stays per replica). Nothing here
// waits for a store: each replica admits by its own buckets, and a syncer
// (gateway/fleet) now and then adds what the replica consumed to the
// fleet's totals (Pending) and takes from its buckets what the other
// replicas consumed meanwhile (Merge). Every replica's buckets are thus
// debited by the whole fleet's use, late by at most one sync: the fleet
// admits about one bucket's worth, not one per replica.

// Consumption is what a client consumed: requests admitted, tokens
// charged, and dollars spent in budget window Window (fixed windows of the
// budget period from the Unix epoch). Released is the dollars of the
// reservations held in the fleet's store (Reservation.Stored) for Window
// whose requests ended: the sync takes them out of the store's
// reservations as it adds Dollars to its spend, in one atomic step.
type Consumption struct {
	Requests, Tokens, Dollars float64
	Released                  float64
	Window                    int64
}

// Fleet is the rest of a fleet's use of a client, as a syncer learned it.
type Fleet struct {
	// Requests and Tokens the other replicas consumed since the last sync.
	Requests, Tokens float64
	// Spent is the fleet's spend in Window, this replica's share sent so
	// far included.
	Spent  float64
	Window int64
}

// Shared reports whether a has a limit a fleet shares: requests or tokens
// per minute, or a budget.
func (a *Account) Shared() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lim.RequestsPerMinute > 0 || a.lim.TokensPerMinute > 0 || a.lim.Budget > 0
}

// Pending returns what a consumed that the fleet has not heard of yet, its
// spend in now's budget window (spend in an earlier window is dropped).
func (a *Account) Pending(now time.Time) Consumption {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.advanceWindow(now)
	a.pendingWindow()
	return a.pending
}

// pendingWindow moves what is pending to the current budget window; what
// an earlier window had pending is dropped (a.mu held).
func (a *Account) pendingWindow() {
	if a.pending.Window != a.window {
		a.pending.Window, a.pending.Dollars, a.pending.Released = a.window, 0, 0
	}
}

// Budget returns a's budget (0: none) and now's budget window with its
// end: what a fleet's store keys and bounds the reservations by.
func (a *Account) Budget(now time.Time) (budget float64, window int64, end time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.advanceWindow(now)
	return a.lim.Budget, a.window, time.Unix(0, 0).Add(time.Duration(a.window+1) * a.period)
}

// Stored records that dollars of r's reservation are also held in the
// fleet's store for budget window window (gateway/fleet Budgets.Reserve):
// when r is released they become Pending's Released, and the next sync
// takes them out of the store.
func (r *Reservation) Stored(window int64, dollars float64) {
	a := r.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.storedWindow != window {
		r.storedWindow, r.stored = window, 0
	}
	r.stored += dollars
}

// Merge applies a sync at now: sent (what Pending returned, now added to
// the fleet's totals) is no longer pending; the other replicas' requests
// and tokens are taken from a's buckets, which may go into debt; and a's
// spend in f.Window becomes the fleet's plus what a charged since Pending.
func (a *Account) Merge(now time.Time, sent Consumption, f Fleet) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending.Requests -= sent.Requests
	a.pending.Tokens -= sent.Tokens
	if a.pending.Window == sent.Window {
		a.pending.Dollars -= sent.Dollars
		a.pending.Released -= sent.Released
	}
	a.reqs.advance(now)
	a.reqs.take(max(f.Requests, 0))
	a.toks.advance(now)
	a.toks.take(max(f.Tokens, 0))
	if a.lim.Budget > 0 {
		a.advanceWindow(now)
		if f.Window == a.window {
			mine := 0.0
			if a.pending.Window == a.window {
				mine = a.pending.Dollars
			}
			a.spent = f.Spent + mine
		}
	}
}

// BudgetPeriod returns the length of a's budget windows.
func (a *Account) BudgetPeriod() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.period
}

// All returns the table's accounts in ID order.
func (t *Table) All() iter.Seq[*Account] {
	return func(yield func(*Account) bool) {
		if t == nil {
			return
		}
		for _, id := range slices.Sorted(maps.Keys(t.byID)) {
			if !yield(t.byID[id]) {
				return
			}
		}
	}
}

// TokensPerMinute returns a's tokens-per-minute limit (0: none).
func (a *Account) TokensPerMinute() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lim.TokensPerMinute
}

// DrewTokens records that n tokens of r's worst case were drawn from the
// fleet's token bucket as well (gateway/fleet Buckets.Draw): when r is
// released they are settled against what the request really used.
func (r *Reservation) DrewTokens(n float64) {
	a := r.a
	a.mu.Lock()
	defer a.mu.Unlock()
	r.storedTokens += n
}

// Settlement returns what the fleet's token bucket has not been told yet:
// the tokens a charged since the last settlement, less the worst cases its
// ended requests drew (negative: tokens to give back). A sync takes it from
// the bucket (Buckets.Settle) and then calls Settled. While a request is in
// flight its charges are counted beside its worst case: never less than it
// may use.
func (a *Account) Settlement() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.unsettled
}

// Settled records that delta (what Settlement returned) reached the
// fleet's token bucket.
func (a *Account) Settled(delta float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.unsettled -= delta
}
