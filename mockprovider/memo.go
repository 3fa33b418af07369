package mockprovider

import (
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

// promptMemo remembers, per message text, what planning computes from a
// prompt again and again when the same prompts recur (the simulator draws
// from a few hundred): the message's token estimate and the prompt-cache
// hash that follows it. Only messages of one text part and no tool calls are
// memoized. It changes no result: a memoized value is the one the
// computation gives.
type promptMemo struct {
	max    int
	tokens map[string]int
	hashes map[memoKey]uint64
}

type memoKey struct {
	prev uint64 // prompt-cache hash before the message
	role llm.Role
	text string
}

// MemoizePrompts makes the model remember the token estimates and
// prompt-cache hashes of up to max distinct message texts (0 forgets them
// and turns it off). Plans are unchanged; planning a request whose messages
// were seen before is cheaper. For callers that send the same prompts many
// times, such as the game-day simulator; a server facing arbitrary prompts
// should leave it off.
func (m *Model) MemoizePrompts(max int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if max <= 0 {
		m.memo = nil
		return
	}
	m.memo = &promptMemo{max: max, tokens: map[string]int{}, hashes: map[memoKey]uint64{}}
}

// memoizable reports whether msg is one text part without tool calls.
func memoizable(msg *llm.Message) bool {
	return len(msg.Content) == 1 && len(msg.ToolCalls) == 0 && msg.Content[0].Type != llm.PartImage &&
		msg.Content[0].URL == "" && len(msg.Content[0].Data) == 0
}

// messageTokens is messageTokens(msg), memoized.
func (pm *promptMemo) messageTokens(msg *llm.Message) int {
	if pm == nil || !memoizable(msg) {
		return messageTokens(*msg)
	}
	text := msg.Content[0].Text
	if n, ok := pm.tokens[text]; ok {
		return n
	}
	n := perMessageTokens + faults.CountTokens(text)
	if len(pm.tokens) < pm.max {
		pm.tokens[text] = n
	}
	return n
}

// promptTokens is PromptTokens(req), with memoized messages.
func (m *Model) promptTokens(req *llm.Request) int {
	if m.memo == nil {
		return PromptTokens(req)
	}
	n := primingTokens
	for _, t := range req.Tools {
		n += toolTokens(t)
	}
	for i := range req.Messages {
		n += m.memo.messageTokens(&req.Messages[i])
	}
	return n
}

// hashMessage folds msg into the prompt-cache hash h (see promptCache.lookup).
func (pm *promptMemo) hashMessage(h uint64, msg *llm.Message) uint64 {
	if pm == nil || !memoizable(msg) {
		return fnvMessage(h, msg)
	}
	k := memoKey{prev: h, role: msg.Role, text: msg.Content[0].Text}
	if v, ok := pm.hashes[k]; ok {
		return v
	}
	v := fnvMessage(h, msg)
	if len(pm.hashes) < pm.max {
		pm.hashes[k] = v
	}
	return v
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
