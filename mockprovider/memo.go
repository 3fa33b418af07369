package mockprovider

import (
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

// promptMemo remembers, per message text, what planning computes from a
// prompt again and again when the same prompts recur (the simulator draws
// from a few hundred): the message's token estimate and the prompt-cache
// hashes that follow it. Only messages of one text part and no tool calls are
// memoized. It changes no result: a memoized value is the one the
// computation gives.
type promptMemo struct {
	max     int
	entries map[string]*memoEntry
	// byMsg finds the entry of a message by its address first: callers
	// that send the same prompts many times (the simulator) share the
	// messages, and hashing a pointer is cheaper than hashing the text.
	// A hit is checked against the message's text, so a message changed
	// in place is found again by its text.
	byMsg map[*llm.Message]*memoEntry
	// msgs is the scratch of the request being planned: the entry of each
	// message (nil when not memoized), found once by promptTokens and read
	// again by the prompt cache (promptTokens runs first in every Plan).
	msgs []*memoEntry
}

// memoEntry is what is known of one message text.
type memoEntry struct {
	text   string
	tokens int
	// hashes maps the prompt-cache hash before the message (and its role)
	// to the hash after it; a message opens few prompts, so it is short.
	hashes []memoHash
	// rules remembers Model.match for the text, by model name.
	rules []memoRule
}

// match is m.match(model, text, c), memoized; e is text's entry. Only
// fresh conversations are memoized (the rule depends on text alone).
func (e *memoEntry) match(m *Model, model, text string, c *convo) *Rule {
	for _, r := range e.rules {
		if r.model == model {
			return r.rule
		}
	}
	rule := m.match(model, text, c)
	if len(e.rules) < maxMemoRules {
		e.rules = append(e.rules, memoRule{model: model, rule: rule})
	}
	return rule
}

// memoRule is the rule (nil: none) that matches a message text for a model.
type memoRule struct {
	model string
	rule  *Rule
}

// maxMemoRules bounds memoEntry.rules.
const maxMemoRules = 8

// memoHash is the prompt-cache hash after a message, given the hash
// before it and its role; seen is the cache's record of that prefix, valid
// while the cache's gen is gen.
type memoHash struct {
	prev, next uint64
	role       llm.Role
	seen       *time.Time
	gen        uint64
}

// maxMemoHashes bounds memoEntry.hashes.
const maxMemoHashes = 8

// newPromptMemo remembers the token estimates and prompt-cache hashes of
// up to max distinct message texts: a Planner's, which sees the same
// prompts many times. Plans are unchanged; planning a request whose
// messages were seen before is cheaper.
func newPromptMemo(max int) *promptMemo {
	return &promptMemo{max: max, entries: map[string]*memoEntry{}, byMsg: map[*llm.Message]*memoEntry{}}
}

// memoizable reports whether msg is one text part without tool calls.
func memoizable(msg *llm.Message) bool {
	return len(msg.Content) == 1 && len(msg.ToolCalls) == 0 && msg.Content[0].Type != llm.PartImage &&
		msg.Content[0].URL == "" && len(msg.Content[0].Data) == 0
}

// entry returns the memo of msg, adding it when there is room; nil when msg
// is not memoizable or the memo is full.
func (pm *promptMemo) entry(msg *llm.Message) *memoEntry {
	if !memoizable(msg) {
		return nil
	}
	text := msg.Content[0].Text
	if e := pm.byMsg[msg]; e != nil && e.text == text {
		return e
	}
	e := pm.entries[text]
	if e == nil {
		if len(pm.entries) >= pm.max {
			return nil
		}
		e = &memoEntry{text: text, tokens: perMessageTokens + faults.CountTokens(text)}
		pm.entries[text] = e
	}
	if len(pm.byMsg) >= 2*pm.max {
		clear(pm.byMsg) // messages that are not shared (a prefill's)
	}
	pm.byMsg[msg] = e
	return e
}

// hash is fnvMessage(prev, msg), memoized; e is msg's entry. slot is the
// memo of the hash, nil when there is no room for it.
func (e *memoEntry) hash(prev uint64, msg *llm.Message) (next uint64, slot *memoHash) {
	for i := range e.hashes {
		if h := &e.hashes[i]; h.prev == prev && h.role == msg.Role {
			return h.next, h
		}
	}
	next = fnvMessage(prev, msg)
	if len(e.hashes) < maxMemoHashes {
		e.hashes = append(e.hashes, memoHash{prev: prev, next: next, role: msg.Role})
		return next, &e.hashes[len(e.hashes)-1]
	}
	return next, nil
}

// promptTokens is PromptTokens(req), with memoized messages. It leaves the
// messages' entries in m.memo.msgs for the prompt cache.
func (m *Model) promptTokens(req *llm.Request) int {
	if m.memo == nil {
		return PromptTokens(req)
	}
	n := primingTokens
	for _, t := range req.Tools {
		n += toolTokens(t)
	}
	msgs := m.memo.msgs[:0]
	for i := range req.Messages {
		msg := &req.Messages[i]
		e := m.memo.entry(msg)
		msgs = append(msgs, e)
		if e != nil {
			n += e.tokens
		} else {
			n += messageTokens(*msg)
		}
	}
	m.memo.msgs = msgs
	return n
}

// message returns the entry promptTokens found for message i of the
// request being planned, or nil.
func (pm *promptMemo) message(i int) *memoEntry {
	if pm == nil || i >= len(pm.msgs) {
		return nil
	}
	return pm.msgs[i]
}

// FNV-1a, 64 bits (hash/fnv's New64a), on a running value.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// fnvMessage folds one message into h: its role, its parts' text, URL and
// data, its tool calls' names and arguments, then a 0 byte.
func fnvMessage(h uint64, msg *llm.Message) uint64 {
	h = fnvString(h, string(msg.Role))
	for _, p := range msg.Content {
		h = fnvString(h, p.Text)
		h = fnvString(h, p.URL)
		h = fnvBytes(h, p.Data)
	}
	for _, tc := range msg.ToolCalls {
		h = fnvString(h, tc.Name)
		h = fnvString(h, tc.Arguments)
	}
	return fnvBytes(h, []byte{0})
}
