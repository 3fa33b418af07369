package mockprovider

import (
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

// promptCache remembers prompt prefixes (hashes at message boundaries, with
// the model and tools folded in) and when they were last seen.
type promptCache struct {
	ttl       time.Duration
	minTokens int
	max       int // entries past which expired ones are swept (cacheMaxEntries)
	// seen holds each prefix's last time; a pointer, so that a memoized
	// message can keep the record of the prefix it ends (see memoHash) and
	// a hit needs no map access.
	seen map[uint64]*time.Time
	// gen counts the sweeps and resets: a record kept outside seen is valid
	// while gen has not changed.
	gen uint64
	// models caches the hash of the last models' names.
	models [4]modelHash
	next   int
}

type modelHash struct {
	name string
	h    uint64
}

const cacheMaxEntries = 1 << 17

func newPromptCache(s *CacheSpec) *promptCache {
	if s == nil {
		return nil
	}
	return &promptCache{ttl: s.TTL.D(), minTokens: s.MinTokens, max: cacheMaxEntries, seen: map[uint64]*time.Time{}}
}

// reset forgets every prefix.
func (c *promptCache) reset() {
	c.seen = map[uint64]*time.Time{}
	c.gen++
}

// modelHash returns the hash the prefixes of model start from.
func (c *promptCache) modelHash(model string) uint64 {
	for i := range c.models {
		if mh := &c.models[i]; mh.name == model && mh.h != 0 {
			return mh.h
		}
	}
	h := fnvString(fnvOffset, model)
	h = fnvBytes(h, []byte{0})
	c.models[c.next] = modelHash{name: model, h: h}
	c.next = (c.next + 1) % len(c.models)
	return h
}

// lookup returns the cached prefix length in tokens and records the prompt's
// prefixes as seen at now. memo, when set, holds the entries promptTokens
// found for req's messages. Prefixes end at message boundaries: the longest
// one seen within the TTL counts; shorter than minTokens counts as 0.
func (c *promptCache) lookup(now time.Time, model string, req *llm.Request, memo *promptMemo) int {
	if c == nil {
		return 0
	}
	h := c.modelHash(model)
	tokens := primingTokens
	for _, t := range req.Tools {
		h = fnvString(h, t.Name)
		h = fnvBytes(h, t.Parameters)
		tokens += toolTokens(t)
	}
	cached := 0
	if len(c.seen) > c.max {
		for k, t := range c.seen {
			if now.Sub(*t) > c.ttl {
				delete(c.seen, k)
			}
		}
		c.gen++
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		var slot *memoHash
		if e := memo.message(i); e != nil {
			h, slot = e.hash(h, m)
			tokens += e.tokens
		} else {
			h = fnvMessage(h, m)
			tokens += messageTokens(*m)
		}
		var seen *time.Time
		if slot != nil && slot.seen != nil && slot.gen == c.gen {
			seen = slot.seen
		} else {
			seen = c.seen[h]
		}
		if seen != nil {
			if d := now.Sub(*seen); d <= c.ttl && d >= 0 {
				cached = tokens
			}
			*seen = now
		} else {
			seen = new(time.Time)
			*seen = now
			c.seen[h] = seen
		}
		if slot != nil {
			slot.seen, slot.gen = seen, c.gen
		}
	}
	if cached < c.minTokens {
		return 0
	}
	return cached
}

// Prompt token estimate (documented in doc.go): a fixed priming cost, a
// per-message overhead, text at faults.BytesPerToken bytes per token, a
// fixed cost per image, tool calls and tool definitions by their text.
const (
	primingTokens    = 3
	perMessageTokens = 4
	imageTokens      = 85
)

// PromptTokens estimates the input tokens of a request.
func PromptTokens(req *llm.Request) int {
	n := primingTokens
	for _, t := range req.Tools {
		n += toolTokens(t)
	}
	for _, m := range req.Messages {
		n += messageTokens(m)
	}
	return n
}

func toolTokens(t llm.Tool) int {
	return perMessageTokens + faults.CountTokens(t.Name) + faults.CountTokens(t.Description) + faults.CountTokens(string(t.Parameters))
}

func messageTokens(m llm.Message) int {
	n := perMessageTokens
	for _, p := range m.Content {
		if p.Type == llm.PartImage {
			n += imageTokens
			continue
		}
		n += faults.CountTokens(p.Text)
	}
	for _, tc := range m.ToolCalls {
		n += faults.CountTokens(tc.Name) + faults.CountTokens(tc.Arguments)
	}
	return n
}
