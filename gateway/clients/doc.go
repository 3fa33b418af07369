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
//	d := a.Admit(now, route, tokens)     // Allow, or which limit refused and for how long
//	if d.Verdict != clients.Allow { ...403/429 with d.RetryAfter... }
//	defer a.Release(end, tokens)         // the concurrency slot and the token reservation
//	...serve; as each upstream attempt ends (attempt.end carries the ID):
//	table.Get(id).Charge(now, tokens, dollars) // tokens/min and the spend budget
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
// call on the request path.
package clients
