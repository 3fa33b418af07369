package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/brownout-dev/brownout/gateway/clients"
)

// Sharing counters costs no store call on the request path: every
// Options.Share (default 100ms) the Fleet's goroutine makes three calls for
// the whole replica, whatever its traffic (the third reads the fleet's
// health demotions, see health.go), and one per client with tokens per
// minute whose requests used tokens since:
//
//   - retry budgets: Tally.Report of this replica's requests and retries
//     per route over the budget window ("budget:ROUTE"), answered with the
//     other replicas' sums (policy.Engine.SetFleetBudget). Reports are
//     snapshots, not increments: a lost or repeated one changes nothing,
//     and a replica that stops reporting drops out after one window.
//   - client token buckets: Buckets.Settle of what each client's ended
//     requests used against the worst cases they drew at admission
//     (Buckets.Draw), so tokens per minute holds fleet-wide like a budget;
//   - client limits: Tally.Add of each limited client's use since the last
//     sync ("client:ID:MINUTE": requests, tokens; "spend:ID:WINDOW":
//     dollars), answered with the fleet's totals; the growth of a total
//     beyond this replica's share is what the others consumed
//     (clients.Account.Merge).
//
// So a replica admits by a view of the fleet at most one Share old: over a
// window, the fleet may exceed a shared limit by what the replicas admit in
// one Share interval, never by a factor of the replica count.

// newMember returns a replica's name in the store's reports.
func newMember() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// clientSeen is a client's fleet totals in a minute as of this replica's
// last sync.
type clientSeen struct{ req, tok float64 }

// share reports the retry budgets and syncs the client limits once.
func (f *Fleet) share(ctx context.Context) {
	tally, ok := f.store.(Tally)
	if !ok || !f.Up() {
		return
	}
	e := f.engine()
	if !f.sy.Sharing(e) {
		return
	}
	now := f.o.Now()
	r := f.sy.Budgets(e, now)
	c, cancel := context.WithTimeout(ctx, f.o.Timeout)
	answer, err := tally.Report(c, r.Member, now, r.Window, r.Rows)
	cancel()
	if err != nil {
		f.degrade(err)
		return
	}
	f.sy.Learn(e, now, r.Others(answer), nil)
	if !f.shareHealth(ctx, e, now) {
		return
	}
	if f.o.Clients != nil && !f.shareClients(ctx, tally, now) {
		return
	}
	f.mu.Lock()
	f.sharedAt = now
	f.mu.Unlock()
}

// SharedAt returns when this replica last synced its retry budgets and
// client limits with the store (zero: never).
func (f *Fleet) SharedAt() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sharedAt
}

// SpendKey is the Tally and Budgets key of a client's spend in a budget
// window.
func SpendKey(client string, window int64) string {
	return "spend:" + client + ":" + strconv.FormatInt(window, 10)
}

// shareClients adds this replica's clients' use to the fleet's totals and
// debits them with the others'. It reports whether the store answered.
func (f *Fleet) shareClients(ctx context.Context, tally Tally, now time.Time) bool {
	var accts []*clients.Account
	var sent []clients.Consumption
	var rows []Row
	minute := ":" + strconv.FormatInt(now.Unix()/60, 10)
	for a := range f.o.Clients().All() {
		if !a.Shared() {
			continue
		}
		p := a.Pending(now)
		accts = append(accts, a)
		sent = append(sent, p)
		rows = append(rows,
			Row{Key: "client:" + a.ID() + minute, Vals: []float64{p.Requests, p.Tokens}, TTL: 2 * time.Minute},
			// Value 2 is the reservations in flight (Budgets): the ended
			// requests' leave it as their charges join the spend.
			Row{Key: SpendKey(a.ID(), p.Window), Vals: []float64{p.Dollars, -p.Released}, TTL: a.BudgetPeriod() + time.Minute})
	}
	if len(rows) == 0 {
		return true
	}
	c, cancel := context.WithTimeout(ctx, f.o.Timeout)
	totals, err := tally.Add(c, rows)
	cancel()
	if err != nil {
		f.degrade(err) // the use stays pending and is sent after the resync
		return false
	}
	seen := make(map[string]clientSeen, len(accts))
	for i, a := range accts {
		key, use, spend := rows[2*i].Key, totals[2*i].Vals, totals[2*i+1].Vals
		p := sent[i]
		// The others' use is the total's growth beyond this replica's
		// share: since the last sync, or in the minute so far for a new
		// minute. A total below the last one means the store lost it
		// (restarted): the others' use since is unknown, count none.
		last := f.seen[key]
		fl := clients.Fleet{Spent: spend[0], Window: p.Window}
		if use[0] >= last.req && use[1] >= last.tok {
			fl.Requests = use[0] - last.req - p.Requests
			fl.Tokens = use[1] - last.tok - p.Tokens
		}
		seen[key] = clientSeen{req: use[0], tok: use[1]}
		a.Merge(now, p, fl)
	}
	f.seen = seen
	return f.settleTokens(ctx, accts, now)
}

// settleTokens tells the fleet's token buckets what the clients' ended
// requests really used against the worst cases they drew (and the charges
// of requests admitted without a draw): each account's Settlement, taken
// from its bucket. It reports whether the store answered; an account not
// settled keeps its settlement for the next sync.
func (f *Fleet) settleTokens(ctx context.Context, accts []*clients.Account, now time.Time) bool {
	bs, ok := f.store.(Buckets)
	if !ok {
		return true
	}
	for _, a := range accts {
		tpm := a.TokensPerMinute()
		delta := a.Settlement()
		if tpm <= 0 || delta == 0 {
			continue
		}
		c, cancel := context.WithTimeout(ctx, f.o.Timeout)
		err := bs.Settle(c, TokensKey(a.ID()), float64(tpm), delta, now)
		cancel()
		if err != nil {
			f.degrade(err)
			return false
		}
		a.Settled(delta)
	}
	return true
}
