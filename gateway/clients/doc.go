// Package clients is the gateway's client-key accounting: who may call it,
// on which routes, how often, how many tokens a minute, how much spend a
// period and how many requests at once.
//
// It is decision logic in the mould of golang.org/x/time/rate: no I/O, no
// goroutines, no clock reads. Every method that depends on time takes it as
// an argument, state advances lazily and copes with time going backwards.
// The HTTP shell (package gateway) calls it like this for each request:
//
//	a, ok := table.Lookup(key)           // presented key -> account (by SHA-256 digest); !ok: 401
//	d, res := a.Admit(now, clients.Ask{Route: route, Tokens: worstTokens, Dollars: worstDollars})
//	if d.Verdict != clients.Allow { ...403/429 with d.RetryAfter... }
//	defer res.Release(end)               // the slot and everything reserved
//	...serve; before each attempt after the first:
//	if d := res.Extend(now); d.Verdict != clients.Allow { ...stop: 429... }
//	...as each upstream attempt ends (attempt.end carries the ID):
//	table.Get(id).Charge(now, tokens, dollars) // tokens/min and the spend budget
//
// Money is reserved before it is spent: Admit reserves the request's
// worst case (its prompt estimate and its max_tokens at the prices of the
// costliest target its route may reach) against the budget and the
// tokens-per-minute bucket, and refuses when the spend, the reservations
// in flight and this worst case do not fit. Extend renews it for each
// further attempt: the attempt that ended was charged what it cost, and
// the next one's worst case is reserved in its place. Release gives the
// reservation back; what the attempts cost was charged as they ended. However many requests run at
// once, a budget is overrun by at most one request's worst case (a lone
// request may start while the spend is below the budget, so that a worst
// case larger than a small budget does not lock its client out).
//
// Keys are never kept: a Client holds the SHA-256 digest of its key, the
// table is indexed by digest and the digest found is compared again in
// constant time. Only a client's ID (never its key) is meant for events,
// usage records and metric labels.
//
// A Table is safe for concurrent use; each client's state has its own lock.
// Reload builds a table for a new configuration that keeps the counters of
// the clients (by ID) both configurations have, so a reload neither refills
// a bucket nor forgets a request in flight. A fleet of replicas shares the
// requests, tokens and spend (Pending, Merge; see fleet.go) without a store
// call on the request path; a budget's reservations are also made in the
// fleet's store (Reservation.Stored), so that the fleet together admits no
// more than the budget.
package clients
