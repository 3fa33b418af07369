package gateway

import (
	"container/list"
	"net/http"
	"sync"
	"time"
)

// idemEntry is one Idempotency-Key: in flight (done open) or completed.
type idemEntry struct {
	key         string
	fingerprint string
	done        chan struct{}
	// Set before done is closed.
	status   int
	header   http.Header
	body     []byte
	storable bool
	expires  time.Time
}

// idemStore coalesces concurrent requests with the same Idempotency-Key and
// replays a completed response within the TTL.
type idemStore struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	m     map[string]*list.Element
	order *list.List // front: newest
}

func newIdemStore(c IdempotencyConfig) *idemStore {
	return &idemStore{ttl: or(c.TTL.D(), 10*time.Minute), max: or(c.MaxEntries, 10000),
		m: map[string]*list.Element{}, order: list.New()}
}

// begin returns the entry for key and whether the caller leads (executes the
// request). A follower waits for done and replays. A completed entry past
// its TTL is replaced.
func (s *idemStore) begin(now time.Time, key, fingerprint string) (e *idemEntry, leader bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.m[key]; ok {
		e = el.Value.(*idemEntry)
		select {
		case <-e.done:
			if now.Before(e.expires) {
				return e, false
			}
			s.order.Remove(el)
			delete(s.m, key)
		default:
			return e, false
		}
	}
	e = &idemEntry{key: key, fingerprint: fingerprint, done: make(chan struct{})}
	s.m[key] = s.order.PushFront(e)
	for s.order.Len() > s.max {
		back := s.order.Back()
		be := back.Value.(*idemEntry)
		select {
		case <-be.done:
		default:
			// Never evict an in-flight entry: its followers wait on it.
			return e, true
		}
		s.order.Remove(back)
		delete(s.m, be.key)
	}
	return e, true
}

// complete records the leader's response and wakes followers. Only a
// storable 2xx response is kept for replay; otherwise the key is released so
// a retry executes again.
func (s *idemStore) complete(now time.Time, e *idemEntry, status int, header http.Header, body []byte, storable bool) {
	e.status, e.header, e.body, e.storable = status, header, body, storable
	e.expires = now.Add(s.ttl)
	close(e.done)
	if storable && status >= 200 && status < 300 {
		return
	}
	s.mu.Lock()
	if el, ok := s.m[e.key]; ok && el.Value == e {
		s.order.Remove(el)
		delete(s.m, e.key)
	}
	s.mu.Unlock()
}

// recorder tees a response to the client into a bounded buffer for replay.
type recorder struct {
	http.ResponseWriter
	status int
	buf    []byte
	limit  int
	over   bool
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if !r.over {
		if len(r.buf)+len(p) > r.limit {
			r.over, r.buf = true, nil
		} else {
			r.buf = append(r.buf, p...)
		}
	}
	return r.ResponseWriter.Write(p)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
