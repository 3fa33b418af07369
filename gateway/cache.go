package gateway

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/brownout-dev/brownout/llm"
)

// requestHash is the normalized request's cache identity: the request in the
// normalized model with the fields that do not change the answer (model —
// the route is keyed apart —, stream, include_usage, user, metadata)
// cleared, so the same question asked in the OpenAI or the Anthropic format,
// streamed or not, hits the same entry.
//
// The bulk of a request (its texts, images, tool-call arguments) is hashed
// in place, and what is marshalled holds their digests: hashing an 8 MiB
// prompt allocates kilobytes, not the two or three copies of it that
// marshalling it whole took.
func requestHash(r *llm.Request) string {
	n := *r
	n.Model, n.Stream, n.IncludeUsage, n.User, n.Metadata = "", false, false, "", nil
	var d digester
	n.Messages = make([]llm.Message, len(r.Messages))
	for i, m := range r.Messages {
		parts := make([]llm.Part, len(m.Content))
		for j, p := range m.Content {
			p.Text, p.URL, p.Data = d.string(p.Text), d.string(p.URL), []byte(d.bytes(p.Data))
			parts[j] = p
		}
		calls := make([]llm.ToolCall, len(m.ToolCalls))
		for j, c := range m.ToolCalls {
			c.Arguments = d.string(c.Arguments)
			calls[j] = c
		}
		m.Content, m.ToolCalls = parts, calls
		n.Messages[i] = m
	}
	b, err := json.Marshal(&n)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// digester replaces a value by its SHA-256 digest (hex), hashing it
// through a small buffer.
type digester struct {
	buf []byte
}

func (d *digester) string(s string) string {
	if s == "" {
		return ""
	}
	if d.buf == nil {
		d.buf = make([]byte, 16<<10)
	}
	h := sha256.New()
	for len(s) > 0 {
		n := copy(d.buf, s)
		h.Write(d.buf[:n])
		s = s[n:]
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (d *digester) bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

type cacheEntry struct {
	key    string // route|target|hash
	rkey   string // route|hash
	target string
	resp   *llm.Response
	stored time.Time
}

// responseCache keeps complete answers by route, target and normalized
// request. It is bounded (least recently stored evicted) and safe for
// concurrent use.
type responseCache struct {
	mu       sync.Mutex
	max      int
	ttl      time.Duration
	maxStale time.Duration
	exact    map[string]*list.Element // route|target|hash
	latest   map[string]*list.Element // route|hash → most recently stored
	lru      *list.List               // front: newest
	// shared, when set, shares the answers with a fleet (cachefleet.go).
	shared *sharedCache
}

func newResponseCache(c CacheConfig) *responseCache {
	max := or(c.MaxEntries, 10000)
	if max < 0 {
		return nil
	}
	return &responseCache{max: max, ttl: c.ttl(), maxStale: c.maxStale(),
		exact: map[string]*list.Element{}, latest: map[string]*list.Element{}, lru: list.New()}
}

// put stores resp as the answer of target on route to the request hash.
func (c *responseCache) put(now time.Time, route, target, hash string, resp *llm.Response) {
	if c == nil || hash == "" {
		return
	}
	e := &cacheEntry{key: route + "|" + target + "|" + hash, rkey: route + "|" + hash, target: target, resp: resp, stored: now}
	if c.shared != nil {
		c.shared.put(e)
	}
	c.insert(e)
}

// insert adds e as the newest entry.
func (c *responseCache) insert(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.exact[e.key]; ok {
		c.lru.Remove(old)
	}
	el := c.lru.PushFront(e)
	c.exact[e.key] = el
	c.latest[e.rkey] = el
	for c.lru.Len() > c.max {
		back := c.lru.Back()
		be := back.Value.(*cacheEntry)
		c.lru.Remove(back)
		delete(c.exact, be.key)
		if c.latest[be.rkey] == back {
			delete(c.latest, be.rkey)
		}
	}
}

// get returns the newest answer on route to hash and its age (a fleet's
// replica also asks the store on a local miss). fresh says whether it is
// within the TTL; ok is false when there is none, or when it is older than
// TTL + MaxStale.
func (c *responseCache) get(ctx context.Context, now time.Time, route, hash string) (e *cacheEntry, age time.Duration, fresh, ok bool) {
	if c == nil || hash == "" {
		return nil, 0, false, false
	}
	c.mu.Lock()
	el := c.latest[route+"|"+hash]
	c.mu.Unlock()
	if el != nil {
		e = el.Value.(*cacheEntry)
	} else if c.shared != nil {
		if e = c.shared.get(ctx, route, hash); e != nil {
			c.insert(e)
		}
	}
	if e == nil {
		return nil, 0, false, false
	}
	age = now.Sub(e.stored)
	if age > c.ttl+c.maxStale {
		return nil, age, false, false
	}
	return e, age, age <= c.ttl, true
}

func (c *responseCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
