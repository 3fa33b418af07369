package clients

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"math"
	"sync"
	"time"
)

// Limits are what one client may do. Each zero value means "no limit".
type Limits struct {
	// Routes the client may use. Empty: every route.
	Routes []string
	// RequestsPerMinute refills one request every 60s/N, up to a burst of N.
	RequestsPerMinute int
	// TokensPerMinute bounds metered tokens (input and output, every
	// attempt) the same way. A request reserves its estimated prompt tokens
	// at admission; its attempts' real tokens are charged as they end.
	TokensPerMinute int
	// Budget is the spend, in US dollars from the pricing table, allowed
	// per BudgetPeriod (fixed windows from the Unix epoch, so a 24h period
	// is the UTC day). Default period 24h.
	Budget       float64
	BudgetPeriod time.Duration
	// MaxConcurrent bounds the client's requests in flight.
	MaxConcurrent int
}

// Client is one configured client: an ID for events, usage records and
// metric labels, and the SHA-256 digest of its key (see Digest).
type Client struct {
	ID     string
	Digest [sha256.Size]byte
	Limits
}

// Digest returns the digest a Client stores for key.
func Digest(key string) [sha256.Size]byte { return sha256.Sum256([]byte(key)) }

// Verdict is the outcome of an admission.
type Verdict uint8

// Verdicts.
const (
	Allow Verdict = iota
	// Forbidden: the route is not among the client's routes (403).
	Forbidden
	// RateLimited: requests or tokens per minute, or the concurrency cap
	// (429, retry after Decision.RetryAfter).
	RateLimited
	// OverBudget: the period's spend budget is used up (429, retry when the
	// next period starts).
	OverBudget
)

var verdictNames = [...]string{"allow", "forbidden", "rate_limited", "over_budget"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", v)
}

// Names of the limits a Decision may cite.
const (
	LimitRoutes        = "routes"
	LimitRequests      = "requests_per_minute"
	LimitTokens        = "tokens_per_minute"
	LimitBudget        = "budget"
	LimitMaxConcurrent = "max_concurrent"
)

// Decision is Admit's answer.
type Decision struct {
	Verdict Verdict
	// Limit names the limit that refused (LimitRoutes...); empty on Allow.
	Limit string
	// RetryAfter is when the refused request could succeed (0 when it
	// cannot: a forbidden route).
	RetryAfter time.Duration
}

// Table is the set of configured clients with their accounting state.
type Table struct {
	byDigest map[[sha256.Size]byte]*Account
	byID     map[string]*Account
}

// Account is one client's state. Obtain it with Lookup or Get.
type Account struct {
	id     string
	digest [sha256.Size]byte

	mu       sync.Mutex
	lim      Limits
	routes   map[string]struct{} // nil: every route
	period   time.Duration
	reqs     bucket
	toks     bucket
	window   int64 // budget window index
	spent    float64
	inFlight int
	pending  Consumption // not yet heard by the fleet (see fleet.go)
}

// ID returns the client's ID.
func (a *Account) ID() string { return a.id }

// New builds a table. IDs and digests must be unique and IDs not empty.
func New(cs []Client) (*Table, error) { return (*Table)(nil).Reload(cs) }

// Reload builds a table for cs that keeps, for every ID t also has, its
// counters (buckets, spend, requests in flight). t may be nil.
func (t *Table) Reload(cs []Client) (*Table, error) {
	nt := &Table{byDigest: make(map[[sha256.Size]byte]*Account, len(cs)), byID: make(map[string]*Account, len(cs))}
	for _, c := range cs {
		if c.ID == "" {
			return nil, fmt.Errorf("clients: a client needs an id")
		}
		if _, dup := nt.byID[c.ID]; dup {
			return nil, fmt.Errorf("clients: duplicate id %q", c.ID)
		}
		if other, dup := nt.byDigest[c.Digest]; dup {
			return nil, fmt.Errorf("clients: %q and %q have the same key", other.id, c.ID)
		}
		var a *Account
		if t != nil {
			a = t.byID[c.ID]
		}
		if a == nil {
			a = &Account{id: c.ID}
		}
		a.configure(c)
		nt.byID[c.ID] = a
		nt.byDigest[c.Digest] = a
	}
	return nt, nil
}

func (a *Account) configure(c Client) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.digest = c.Digest
	a.lim = c.Limits
	a.routes = nil
	if len(c.Routes) > 0 {
		a.routes = make(map[string]struct{}, len(c.Routes))
		for _, r := range c.Routes {
			a.routes[r] = struct{}{}
		}
	}
	if p := c.BudgetPeriod; p > 0 {
		if p != a.period {
			a.window, a.spent = math.MinInt64, 0
		}
		a.period = p
	} else {
		if a.period != 24*time.Hour {
			a.window, a.spent = math.MinInt64, 0
		}
		a.period = 24 * time.Hour
	}
	a.reqs.setRate(c.RequestsPerMinute)
	a.toks.setRate(c.TokensPerMinute)
}

// Len returns the number of clients.
func (t *Table) Len() int {
	if t == nil {
		return 0
	}
	return len(t.byID)
}

// Lookup returns the client whose key is key. The table is indexed by the
// key's SHA-256 digest, and the digest found is compared again in constant
// time: how long a lookup takes says nothing about the keys.
func (t *Table) Lookup(key string) (*Account, bool) {
	if t == nil {
		return nil, false
	}
	var buf [128]byte // keys of usual length are hashed without an allocation
	d := sha256.Sum256(append(buf[:0], key...))
	a := t.byDigest[d]
	if a == nil || subtle.ConstantTimeCompare(a.digest[:], d[:]) != 1 {
		return nil, false
	}
	return a, true
}

// Get returns the client with the given ID (nil when there is none).
func (t *Table) Get(id string) *Account {
	if t == nil {
		return nil
	}
	return t.byID[id]
}

// Admit decides whether a's request on route, estimated at tokens prompt
// tokens, may start at now. On Allow it takes a concurrency slot, one
// request and a reservation of tokens from the buckets; the caller must
// call Release(now, a, tokens) when the request ends.
func (a *Account) Admit(now time.Time, route string, tokens int) Decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.routes != nil {
		if _, ok := a.routes[route]; !ok {
			return Decision{Verdict: Forbidden, Limit: LimitRoutes}
		}
	}
	if a.lim.MaxConcurrent > 0 && a.inFlight >= a.lim.MaxConcurrent {
		return Decision{Verdict: RateLimited, Limit: LimitMaxConcurrent, RetryAfter: time.Second}
	}
	if a.lim.Budget > 0 {
		a.advanceWindow(now)
		if a.spent >= a.lim.Budget {
			end := time.Unix(0, 0).Add(time.Duration(a.window+1) * a.period)
			return Decision{Verdict: OverBudget, Limit: LimitBudget, RetryAfter: max(end.Sub(now), time.Second)}
		}
	}
	if w := a.reqs.wait(now, 1); w > 0 {
		return Decision{Verdict: RateLimited, Limit: LimitRequests, RetryAfter: w}
	}
	if w := a.toks.wait(now, float64(tokens)); w > 0 {
		return Decision{Verdict: RateLimited, Limit: LimitTokens, RetryAfter: w}
	}
	a.reqs.take(1)
	a.toks.take(float64(tokens))
	a.inFlight++
	a.pending.Requests++
	return Decision{}
}

// Release ends a request Admit allowed: it frees the concurrency slot and
// gives back the tokens reserved (the attempts' real tokens are charged by
// Charge).
func (a *Account) Release(now time.Time, tokens int) {
	a.mu.Lock()
	if a.inFlight > 0 {
		a.inFlight--
	}
	a.toks.advance(now)
	a.toks.give(float64(tokens))
	a.mu.Unlock()
}

// Charge records an upstream attempt's metered tokens and cost in dollars.
func (a *Account) Charge(now time.Time, tokens int, dollars float64) {
	a.mu.Lock()
	a.toks.advance(now)
	a.toks.take(float64(tokens))
	a.pending.Tokens += float64(tokens)
	if dollars > 0 {
		a.advanceWindow(now)
		a.spent += dollars
		if a.pending.Window != a.window {
			a.pending.Window, a.pending.Dollars = a.window, 0
		}
		a.pending.Dollars += dollars
	}
	a.mu.Unlock()
}

// advanceWindow moves the budget to now's window (never backwards).
func (a *Account) advanceWindow(now time.Time) {
	if w := now.UnixNano() / int64(a.period); w > a.window {
		a.window, a.spent = w, 0
	}
}

// Usage is a snapshot of an account.
type Usage struct {
	ID       string  `json:"id"`
	InFlight int     `json:"in_flight"`
	Spent    float64 `json:"spent"` // in the current budget period
	// Requests and Tokens are what the buckets hold now (-1: unlimited).
	Requests float64 `json:"requests_available"`
	Tokens   float64 `json:"tokens_available"`
}

// Usage returns the account's state at now.
func (a *Account) Usage(now time.Time) Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	u := Usage{ID: a.id, InFlight: a.inFlight, Requests: -1, Tokens: -1}
	if a.lim.Budget > 0 {
		a.advanceWindow(now)
		u.Spent = a.spent
	}
	if a.reqs.limited() {
		a.reqs.advance(now)
		u.Requests = a.reqs.level
	}
	if a.toks.limited() {
		a.toks.advance(now)
		u.Tokens = a.toks.level
	}
	return u
}

// bucket is a token bucket refilled at perMinute/60 a second up to a burst
// of perMinute; it starts full and may go into debt (Charge).
type bucket struct {
	perNS float64 // refill per nanosecond; 0: unlimited
	burst float64
	level float64
	last  time.Time // zero: not used yet (full)
}

func (b *bucket) limited() bool { return b.perNS > 0 }

func (b *bucket) setRate(perMinute int) {
	if perMinute <= 0 {
		*b = bucket{}
		return
	}
	burst := float64(perMinute)
	if b.perNS == 0 {
		b.level, b.last = burst, time.Time{}
	}
	b.perNS, b.burst = burst/float64(time.Minute), burst
	b.level = min(b.level, burst)
}

// advance refills the bucket up to now; time going backwards changes nothing.
func (b *bucket) advance(now time.Time) {
	if !b.limited() {
		return
	}
	if b.last.IsZero() {
		b.level, b.last = b.burst, now
		return
	}
	if dt := now.Sub(b.last); dt > 0 {
		b.level = min(b.burst, b.level+float64(dt)*b.perNS)
		b.last = now
	}
}

// wait returns how long until n (at most the burst) is available; 0 now.
func (b *bucket) wait(now time.Time, n float64) time.Duration {
	if !b.limited() {
		return 0
	}
	b.advance(now)
	n = min(n, b.burst)
	if b.level >= n {
		return 0
	}
	return max(time.Duration(math.Ceil((n-b.level)/b.perNS)), time.Millisecond)
}

func (b *bucket) take(n float64) {
	if b.limited() {
		b.level -= n
	}
}

func (b *bucket) give(n float64) {
	if b.limited() {
		b.level = min(b.burst, b.level+n)
	}
}
