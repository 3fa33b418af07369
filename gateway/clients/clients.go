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
	reserved float64 // dollars reserved by the requests in flight
	inFlight int
	pending  Consumption // not yet heard by the fleet (see fleet.go)
	// unsettled is what the fleet's token bucket has not been told yet:
	// the tokens charged, less the worst cases drawn from it by requests
	// that ended (see fleet.go, Settlement).
	unsettled float64
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

// Allows reports whether a may use route.
func (a *Account) Allows(route string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.routes == nil {
		return true
	}
	_, ok := a.routes[route]
	return ok
}

// Reserves reports whether a has a limit that a request's worst case is
// reserved against: a budget or tokens per minute.
func (a *Account) Reserves() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lim.Budget > 0 || a.lim.TokensPerMinute > 0
}

// Ask is what one request asks of its client's limits at admission: its
// route and its worst case, which Admit reserves.
type Ask struct {
	Route string
	// Tokens is the request's worst case in tokens: the prompt estimate
	// plus the most output it may produce (its max_tokens).
	Tokens int
	// Dollars is the worst-case cost of one attempt: the prompt estimate at
	// the costliest input price and the most output at the costliest
	// output price among the targets the route may reach.
	Dollars float64
}

// Reservation is what an admitted request holds: a concurrency slot, its
// tokens and its worst-case spend. Charge books what the attempts really
// used; Release gives the reservation back when the request ends. A
// Reservation is used by one request (one goroutine).
type Reservation struct {
	a       *Account
	ask     Ask
	tokens  float64 // tokens taken from the bucket
	dollars float64 // dollars reserved against the budget
	done    bool
	// stored is what the fleet's store holds of dollars, for budget window
	// storedWindow (see Stored).
	stored       float64
	storedWindow int64
	// storedTokens were drawn from the fleet's token bucket (DrewTokens).
	storedTokens float64
}

// Admit decides whether a's request may start at now. On Allow it takes a
// concurrency slot and one request, and reserves the request's worst case:
// ask.Tokens from the tokens-per-minute bucket and ask.Dollars against the
// budget. The caller must call Release on the returned reservation when
// the request ends (it is nil unless the verdict is Allow).
//
// A budget admits a request only if the period's spend, the reservations
// of the requests in flight and this one's worst case fit in it; so the
// requests admitted can spend at most the budget, whatever their
// concurrency, while each attempt costs at most its worst case. One
// exception keeps a small budget usable by requests whose worst case alone
// exceeds it: with nothing reserved and the spend below the budget, one
// request is admitted, which bounds the spend by the budget plus one
// request's worst case.
func (a *Account) Admit(now time.Time, ask Ask) (Decision, *Reservation) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.routes != nil {
		if _, ok := a.routes[ask.Route]; !ok {
			return Decision{Verdict: Forbidden, Limit: LimitRoutes}, nil
		}
	}
	if a.lim.MaxConcurrent > 0 && a.inFlight >= a.lim.MaxConcurrent {
		return Decision{Verdict: RateLimited, Limit: LimitMaxConcurrent, RetryAfter: time.Second}, nil
	}
	if d, ok := a.budgetRefuses(now, ask.Dollars); ok {
		return d, nil
	}
	if w := a.reqs.wait(now, 1); w > 0 {
		return Decision{Verdict: RateLimited, Limit: LimitRequests, RetryAfter: w}, nil
	}
	if w := a.toks.wait(now, float64(ask.Tokens)); w > 0 {
		return Decision{Verdict: RateLimited, Limit: LimitTokens, RetryAfter: w}, nil
	}
	a.reqs.take(1)
	r := &Reservation{a: a, ask: ask}
	r.take(ask)
	a.inFlight++
	a.pending.Requests++
	return Decision{}, r
}

// budgetRefuses is the budget's refusal of a reservation of dollars at
// now, if it refuses (a.mu held).
func (a *Account) budgetRefuses(now time.Time, dollars float64) (Decision, bool) {
	if a.lim.Budget <= 0 {
		return Decision{}, false
	}
	a.advanceWindow(now)
	if a.spent >= a.lim.Budget {
		end := time.Unix(0, 0).Add(time.Duration(a.window+1) * a.period)
		return Decision{Verdict: OverBudget, Limit: LimitBudget, RetryAfter: max(end.Sub(now), time.Second)}, true
	}
	if a.reserved > 0 && a.spent+a.reserved+dollars > a.lim.Budget {
		// What requests in flight reserved may come back: retry shortly.
		return Decision{Verdict: OverBudget, Limit: LimitBudget, RetryAfter: time.Second}, true
	}
	return Decision{}, false
}

// take reserves ask's tokens and dollars (a.mu held).
func (r *Reservation) take(ask Ask) {
	a := r.a
	a.toks.take(float64(ask.Tokens))
	if a.toks.limited() {
		r.tokens += float64(ask.Tokens)
	}
	if a.lim.Budget > 0 {
		a.reserved += ask.Dollars
		r.dollars += ask.Dollars
	}
}

// Extend renews the reservation for one more attempt (a retry or a
// fail-over). The previous attempt has ended and Charge booked what it
// really cost, so its reservation is given back and the next attempt's
// worst case reserved in its place: the budget refuses it as Admit would,
// and the tokens are taken without a wait (the request already holds its
// slot). On a refusal the request must end: nothing more is reserved.
func (r *Reservation) Extend(now time.Time) Decision {
	a := r.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.done {
		return Decision{}
	}
	a.toks.advance(now)
	a.toks.give(r.tokens)
	a.reserved = max(a.reserved-r.dollars, 0)
	r.tokens, r.dollars = 0, 0
	if d, ok := a.budgetRefuses(now, r.ask.Dollars); ok {
		return d
	}
	r.take(r.ask)
	return Decision{}
}

// Release ends the request: it frees the concurrency slot and gives back
// everything reserved (what the attempts really used was charged by
// Charge as each ended). Releasing twice does nothing.
func (r *Reservation) Release(now time.Time) {
	if r == nil {
		return
	}
	a := r.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.done {
		return
	}
	r.done = true
	if a.inFlight > 0 {
		a.inFlight--
	}
	a.toks.advance(now)
	a.toks.give(r.tokens)
	a.reserved = max(a.reserved-r.dollars, 0)
	r.tokens, r.dollars = 0, 0
	if r.storedTokens > 0 {
		a.unsettled -= r.storedTokens
		r.storedTokens = 0
	}
	if r.stored > 0 {
		a.advanceWindow(now)
		if r.storedWindow == a.window { // an earlier window's reservations no longer count
			a.pendingWindow()
			a.pending.Released += r.stored
		}
		r.stored = 0
	}
}

// Charge records an upstream attempt's metered tokens and cost in dollars.
// While the attempt's request is in flight its cost is counted twice, as
// spent and as reserved, until Release: never less than it may be.
func (a *Account) Charge(now time.Time, tokens int, dollars float64) {
	a.mu.Lock()
	a.toks.advance(now)
	a.toks.take(float64(tokens))
	a.pending.Tokens += float64(tokens)
	if a.toks.limited() {
		a.unsettled += float64(tokens)
	}
	if dollars > 0 {
		a.advanceWindow(now)
		a.spent += dollars
		a.pendingWindow()
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
	// Reserved is the worst-case spend the requests in flight reserved.
	Reserved float64 `json:"reserved"`
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
		u.Spent, u.Reserved = a.spent, a.reserved
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
