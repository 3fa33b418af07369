package fleet

import (
	"context"
	"sync"
	"time"

	"github.com/brownout-dev/brownout/gateway/policy"
)

// Store is where a fleet's replicas share their breakers. Every method is
// atomic in the store; a state changed by Propose or Trial is published to
// every Subscribe of every replica.
type Store interface {
	// Propose applies p if the store's version of p.Key is still p.Base,
	// and returns the store's state after: p's (version Base+1) when
	// accepted, the newer one otherwise. need is the number of successful
	// trials a half-open state needs to close. A base ahead of the store's
	// version is accepted too: replicas only learn versions from the store,
	// so the store lost its state (restarted empty) and the replicas' count
	// carries on.
	Propose(ctx context.Context, p policy.Proposal, need int) (policy.BreakerUpdate, error)
	// Claim takes up to want of the half-open trials left in version and
	// returns how many it took (0 when the state moved on).
	Claim(ctx context.Context, key string, version uint64, want int) (int, error)
	// Trial counts a successful half-open trial of version; once the
	// fleet's trials have all succeeded it closes the breaker. It returns
	// the state after.
	Trial(ctx context.Context, key string, version uint64) (policy.BreakerUpdate, error)
	// Get returns the states of keys (closed, version 0, when absent).
	Get(ctx context.Context, keys []string) ([]policy.BreakerUpdate, error)
	// Subscribe calls ready once subscribed, then fn with every state
	// published by any replica until ctx ends or the subscription breaks
	// (an error).
	Subscribe(ctx context.Context, ready func(), fn func(policy.BreakerUpdate)) error
	// Ping checks that the store answers.
	Ping(ctx context.Context) error
}

// Memory is a Store in this process: the fleet of one, and the reference
// the Redis store is tested against. Its zero value is ready to use.
type Memory struct {
	// Clock tells records' and counters' lifetimes. Default time.Now.
	Clock func() time.Time

	mu     sync.Mutex
	states map[string]*memState
	subs   map[int]func(policy.BreakerUpdate)
	nextID int
	down   bool

	counters map[string]*memCounter
	reports  map[string]map[string]memReport
	records  map[string]*memRecord
	buckets  map[string]*memBucket
}

type memState struct {
	u        policy.BreakerUpdate
	left, ok int
	need     int
}

var _ Store = (*Memory)(nil)

// SetDown makes every call fail with ErrUnavailable (a store outage in
// tests and simulations), or answer again.
func (m *Memory) SetDown(down bool) {
	m.mu.Lock()
	m.down = down
	m.mu.Unlock()
}

func (m *Memory) state(key string) *memState {
	if m.states == nil {
		m.states = map[string]*memState{}
	}
	s := m.states[key]
	if s == nil {
		s = &memState{u: policy.BreakerUpdate{Key: key, State: policy.Closed}}
		m.states[key] = s
	}
	return s
}

// publish calls the subscribers; caller holds mu.
func (m *Memory) publish(u policy.BreakerUpdate) {
	for _, fn := range m.subs {
		fn(u)
	}
}

// Propose implements Store.
func (m *Memory) Propose(_ context.Context, p policy.Proposal, need int) (policy.BreakerUpdate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return policy.BreakerUpdate{}, ErrUnavailable
	}
	s := m.state(p.Key)
	if s.u.Version > p.Base {
		return s.u, nil
	}
	s.u = policy.BreakerUpdate{Key: p.Key, State: p.State, Version: p.Base + 1, Reason: p.Reason}
	if p.State == policy.Open {
		s.u.OpenUntil = p.OpenUntil.UTC().Truncate(millisecond)
	}
	s.left, s.ok, s.need = need, 0, need
	m.publish(s.u)
	return s.u, nil
}

// Claim implements Store.
func (m *Memory) Claim(_ context.Context, key string, version uint64, want int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return 0, ErrUnavailable
	}
	s := m.state(key)
	if s.u.Version != version || s.u.State != policy.HalfOpen {
		return 0, nil
	}
	n := min(want, s.left)
	s.left -= n
	return n, nil
}

// Trial implements Store.
func (m *Memory) Trial(_ context.Context, key string, version uint64) (policy.BreakerUpdate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return policy.BreakerUpdate{}, ErrUnavailable
	}
	s := m.state(key)
	if s.u.Version != version || s.u.State != policy.HalfOpen {
		return s.u, nil
	}
	s.ok++
	if s.ok >= s.need {
		s.u = policy.BreakerUpdate{Key: key, State: policy.Closed, Version: version + 1, Reason: "trials_succeeded"}
		m.publish(s.u)
	}
	return s.u, nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, keys []string) ([]policy.BreakerUpdate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, ErrUnavailable
	}
	out := make([]policy.BreakerUpdate, len(keys))
	for i, k := range keys {
		out[i] = m.state(k).u
	}
	return out, nil
}

// Subscribe implements Store.
func (m *Memory) Subscribe(ctx context.Context, ready func(), fn func(policy.BreakerUpdate)) error {
	m.mu.Lock()
	if m.down {
		m.mu.Unlock()
		return ErrUnavailable
	}
	if m.subs == nil {
		m.subs = map[int]func(policy.BreakerUpdate){}
	}
	id := m.nextID
	m.nextID++
	m.subs[id] = fn
	m.mu.Unlock()
	ready()
	<-ctx.Done()
	m.mu.Lock()
	delete(m.subs, id)
	m.mu.Unlock()
	return ctx.Err()
}

// Ping implements Store.
func (m *Memory) Ping(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return ErrUnavailable
	}
	return nil
}
