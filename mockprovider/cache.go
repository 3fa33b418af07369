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
	seen      map[uint64]time.Time
}

const cacheMaxEntries = 1 << 17

func newPromptCache(s *CacheSpec) *promptCache {
	if s == nil {
		return nil
	}
	return &promptCache{ttl: s.TTL.D(), minTokens: s.MinTokens, seen: map[uint64]time.Time{}}
}

// lookup returns the cached prefix length in tokens and records the prompt's
// prefixes as seen at now. memo, when set, holds the entries promptTokens
// found for req's messages. Prefixes end at message boundaries: the longest
// one seen within the TTL counts; shorter than minTokens counts as 0.
func (c *promptCache) lookup(now time.Time, model string, req *llm.Request, memo *promptMemo) int {
	if c == nil {
		return 0
	}
	h := fnvString(fnvOffset, model)
	h = fnvBytes(h, []byte{0})
	tokens := primingTokens
	for _, t := range req.Tools {
		h = fnvString(h, t.Name)
		h = fnvBytes(h, t.Parameters)
		tokens += toolTokens(t)
	}
	cached := 0
	if len(c.seen) > cacheMaxEntries {
		for k, t := range c.seen {
			if now.Sub(t) > c.ttl {
				delete(c.seen, k)
			}
		}
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		if e := memo.message(i); e != nil {
			h = e.hash(h, m)
			tokens += e.tokens
		} else {
			h = fnvMessage(h, m)
			tokens += messageTokens(*m)
		}
		if t, ok := c.seen[h]; ok && now.Sub(t) <= c.ttl && now.Sub(t) >= 0 {
			cached = tokens
		}
		c.seen[h] = now
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
