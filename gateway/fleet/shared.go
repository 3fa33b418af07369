package fleet

import (
	"bytes"
	"context"
	"slices"
	"time"
)

// Beyond breakers, a fleet shares counters (retry budgets, client limits)
// and records (idempotency records, cached answers). Memory and Redis
// implement both interfaces with the same contract: every call is atomic
// in the store, every key has a lifetime, and keys are the caller's
// ("idem:…", "client:…"), prefixed by the store.

// Row is one key's values in a Tally.
type Row struct {
	Key  string
	Vals []float64
	// TTL is how long Add keeps the key after its last change (0: a day).
	TTL time.Duration
}

// Tally holds counters shared by a fleet's replicas.
type Tally interface {
	// Add adds each row's values to its key's counters, atomically, and
	// returns the totals after, in the same order.
	Add(ctx context.Context, rows []Row) ([]Row, error)
	// Report stores each row's values as member's own as of now, and
	// returns per row the sum of the other members' values reported
	// within ttl before now; older reports are dropped.
	Report(ctx context.Context, member string, now time.Time, ttl time.Duration, rows []Row) ([]Row, error)
}

// Budgets reserves spend against a budget shared by a fleet. A budget's
// counter is a Tally row of two values: the spend added so far (the
// clients' syncs add their charges to value 1) and the reservations held
// by requests in flight (value 2: Reserve adds to it, and a sync that
// reports a request's end subtracts its reservation with a negative Add).
type Budgets interface {
	// Reserve adds dollars to key's reservations if the spend, the
	// reservations held and dollars fit in budget — or if nothing is
	// reserved and the spend is below budget (one request alone may
	// overdraw) — and reports whether it did, with the spend and the
	// reservations after. The row lives ttl after its last change.
	Reserve(ctx context.Context, key string, budget, dollars float64, ttl time.Duration) (ok bool, spent, reserved float64, err error)
}

// reserveFits is Reserve's rule.
func reserveFits(spent, reserved, dollars, budget float64) bool {
	if spent >= budget {
		return false
	}
	return reserved <= 0 || spent+reserved+dollars <= budget
}

// Records holds records shared by a fleet's replicas, each with a lifetime.
type Records interface {
	// Create stores val under key for ttl unless key holds a record; it
	// returns the record key holds (created false) or nil (created true).
	Create(ctx context.Context, key string, val []byte, ttl time.Duration) (cur []byte, created bool, err error)
	// Swap replaces key's record by val for ttl if it is still old, or
	// deletes it when val is nil, and reports whether it did.
	Swap(ctx context.Context, key string, old, val []byte, ttl time.Duration) (bool, error)
	// Load returns key's record.
	Load(ctx context.Context, key string) (val []byte, ok bool, err error)
	// LoadMany returns the records of keys, nil where there is none.
	LoadMany(ctx context.Context, keys []string) ([][]byte, error)
	// Put stores val under key for ttl, whatever key held.
	Put(ctx context.Context, key string, val []byte, ttl time.Duration) error
}

var (
	_ Budgets = (*Memory)(nil)
	_ Budgets = (*Redis)(nil)
	_ Tally   = (*Memory)(nil)
	_ Records = (*Memory)(nil)
	_ Tally   = (*Redis)(nil)
	_ Records = (*Redis)(nil)
)

const dayTTL = 24 * time.Hour

type memRecord struct {
	val     []byte
	expires time.Time
}

type memReport struct {
	at   time.Time
	vals []float64
}

type memCounter struct {
	vals    []float64
	expires time.Time
}

// now is the Memory store's clock for lifetimes.
func (m *Memory) now() time.Time {
	if m.Clock != nil {
		return m.Clock()
	}
	return time.Now()
}

// Add implements Tally.
func (m *Memory) Add(_ context.Context, rows []Row) ([]Row, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, ErrUnavailable
	}
	if m.counters == nil {
		m.counters = map[string]*memCounter{}
	}
	now := m.now()
	out := make([]Row, len(rows))
	for i, r := range rows {
		c := m.counters[r.Key]
		if c == nil || !now.Before(c.expires) {
			c = &memCounter{}
			m.counters[r.Key] = c
		}
		for len(c.vals) < len(r.Vals) {
			c.vals = append(c.vals, 0)
		}
		for j, v := range r.Vals {
			c.vals[j] += v
		}
		c.expires = now.Add(orTTL(r.TTL))
		out[i] = Row{Key: r.Key, Vals: slices.Clone(c.vals[:len(r.Vals)])}
	}
	return out, nil
}

// Reserve implements Budgets.
func (m *Memory) Reserve(_ context.Context, key string, budget, dollars float64, ttl time.Duration) (bool, float64, float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return false, 0, 0, ErrUnavailable
	}
	if m.counters == nil {
		m.counters = map[string]*memCounter{}
	}
	now := m.now()
	c := m.counters[key]
	if c == nil || !now.Before(c.expires) {
		c = &memCounter{}
		m.counters[key] = c
	}
	for len(c.vals) < 2 {
		c.vals = append(c.vals, 0)
	}
	if !reserveFits(c.vals[0], c.vals[1], dollars, budget) {
		return false, c.vals[0], c.vals[1], nil
	}
	c.vals[1] += dollars
	c.expires = now.Add(orTTL(ttl))
	return true, c.vals[0], c.vals[1], nil
}

// Report implements Tally.
func (m *Memory) Report(_ context.Context, member string, now time.Time, ttl time.Duration, rows []Row) ([]Row, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, ErrUnavailable
	}
	if m.reports == nil {
		m.reports = map[string]map[string]memReport{}
	}
	out := make([]Row, len(rows))
	for i, r := range rows {
		rep := m.reports[r.Key]
		if rep == nil {
			rep = map[string]memReport{}
			m.reports[r.Key] = rep
		}
		rep[member] = memReport{at: now, vals: slices.Clone(r.Vals)}
		sum := make([]float64, len(r.Vals))
		for who, x := range rep {
			if who == member {
				continue
			}
			if now.Sub(x.at) > ttl {
				delete(rep, who)
				continue
			}
			for j := range min(len(sum), len(x.vals)) {
				sum[j] += x.vals[j]
			}
		}
		out[i] = Row{Key: r.Key, Vals: sum}
	}
	return out, nil
}

// record returns key's live record; caller holds mu.
func (m *Memory) record(key string) (*memRecord, bool) {
	r, ok := m.records[key]
	if ok && !m.now().Before(r.expires) {
		delete(m.records, key)
		return nil, false
	}
	return r, ok
}

func (m *Memory) setRecord(key string, val []byte, ttl time.Duration) {
	if m.records == nil {
		m.records = map[string]*memRecord{}
	}
	m.records[key] = &memRecord{val: bytes.Clone(val), expires: m.now().Add(ttl)}
}

// Create implements Records.
func (m *Memory) Create(_ context.Context, key string, val []byte, ttl time.Duration) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, false, ErrUnavailable
	}
	if r, ok := m.record(key); ok {
		return bytes.Clone(r.val), false, nil
	}
	m.setRecord(key, val, ttl)
	return nil, true, nil
}

// Swap implements Records.
func (m *Memory) Swap(_ context.Context, key string, old, val []byte, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return false, ErrUnavailable
	}
	r, ok := m.record(key)
	if !ok || !bytes.Equal(r.val, old) {
		return false, nil
	}
	if val == nil {
		delete(m.records, key)
		return true, nil
	}
	m.setRecord(key, val, ttl)
	return true, nil
}

// Load implements Records.
func (m *Memory) Load(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, false, ErrUnavailable
	}
	r, ok := m.record(key)
	if !ok {
		return nil, false, nil
	}
	return bytes.Clone(r.val), true, nil
}

// LoadMany implements Records.
func (m *Memory) LoadMany(_ context.Context, keys []string) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, ErrUnavailable
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		if r, ok := m.record(k); ok {
			out[i] = bytes.Clone(r.val)
		}
	}
	return out, nil
}

// Put implements Records.
func (m *Memory) Put(_ context.Context, key string, val []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return ErrUnavailable
	}
	m.setRecord(key, val, ttl)
	return nil
}

func orTTL(d time.Duration) time.Duration {
	if d <= 0 {
		return dayTTL
	}
	return d
}
