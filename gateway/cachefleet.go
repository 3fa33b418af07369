package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/brownout-dev/brownout/gateway/fleet"
	"github.com/brownout-dev/brownout/llm"
)

// A fleet shares its cached answers: each answer a replica caches is also
// written to the store ("cache:ROUTE|HASH", the newest answer on the route
// to the normalized request, kept for ttl + max_stale) by a goroutine, off
// the request path (when its queue is full the write is dropped); a local
// miss reads the store, bounded by state.timeout, and keeps what it finds.
// Only a replica that follows the store reads it: while the store is away
// a miss costs no store call.

// sharedCache is a response cache's link to the fleet's store.
type sharedCache struct {
	records fleet.Records
	timeout time.Duration
	ttl     time.Duration // the store keeps an answer for ttl + max_stale
	up      func() bool
	puts    chan *cacheEntry
}

// cacheRecord is a cached answer in the store.
type cacheRecord struct {
	Target string        `json:"target"`
	Stored time.Time     `json:"stored"`
	Resp   *llm.Response `json:"resp"`
}

func newSharedCache(records fleet.Records, timeout, ttl time.Duration, up func() bool) *sharedCache {
	return &sharedCache{records: records, timeout: timeout, ttl: ttl, up: up, puts: make(chan *cacheEntry, 256)}
}

// sharing returns c's link to the fleet's store, nil if none.
func (c *responseCache) sharing() *sharedCache {
	if c == nil {
		return nil
	}
	return c.shared
}

// put queues e for the store; it never blocks.
func (sc *sharedCache) put(e *cacheEntry) {
	select {
	case sc.puts <- e:
	default: // the store is behind: this answer stays local
	}
}

// run writes queued answers to the store until ctx ends.
func (sc *sharedCache) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-sc.puts:
			b, err := json.Marshal(cacheRecord{Target: e.target, Stored: e.stored, Resp: e.resp})
			if err != nil {
				continue
			}
			c, cancel := context.WithTimeout(ctx, sc.timeout)
			_ = sc.records.Put(c, "cache:"+e.rkey, b, sc.ttl)
			cancel()
		}
	}
}

// get returns the store's newest answer on route to hash, nil if none.
func (sc *sharedCache) get(ctx context.Context, route, hash string) *cacheEntry {
	if !sc.up() {
		return nil
	}
	c, cancel := context.WithTimeout(ctx, sc.timeout)
	defer cancel()
	b, ok, err := sc.records.Load(c, "cache:"+route+"|"+hash)
	if err != nil || !ok {
		return nil
	}
	var r cacheRecord
	if json.Unmarshal(b, &r) != nil || r.Resp == nil {
		return nil
	}
	return &cacheEntry{key: route + "|" + r.Target + "|" + hash, rkey: route + "|" + hash, target: r.Target, resp: r.Resp, stored: r.Stored}
}
