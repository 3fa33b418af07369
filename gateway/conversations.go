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
	"github.com/brownout-dev/brownout/llm/inbound"
	"github.com/brownout-dev/brownout/llm/responses"
	"github.com/brownout-dev/brownout/yamlfile"
)

// ResponsesConfig configures what the gateway keeps of Responses API
// answers, for a later request's previous_response_id.
type ResponsesConfig struct {
	// StoreTTL is how long the conversation of an answered Responses
	// request (its input and the answer) is kept, in memory and in the
	// fleet's store when there is one, under the response id the client
	// saw. A request naming it as
	// previous_response_id continues it on any target, whatever its format.
	// Default 0: nothing is kept, and previous_response_id is refused with
	// the API's own 400 (previous_response_not_found).
	StoreTTL yamlfile.Duration `yaml:"store_ttl,omitempty"`
	// StoreMaxBytes bounds the kept conversations (their text, about; the
	// oldest are evicted first). Default 64 MiB.
	StoreMaxBytes int64 `yaml:"store_max_bytes,omitempty"`
}

// conversations keeps Responses conversations by client and response id,
// bounded in bytes and expiring after their TTL. Time is an argument.
type conversations struct {
	mu    sync.Mutex
	bytes int64
	m     map[string]*list.Element
	order *list.List // front: newest
}

type conversation struct {
	key     string
	msgs    []llm.Message
	size    int64
	expires time.Time
}

func newConversations() *conversations {
	return &conversations{m: map[string]*list.Element{}, order: list.New()}
}

func conversationKey(client, id string) string { return client + "\x00" + id }

// get returns the conversation kept for client under id, if it has not
// expired. Another client's conversation is not found.
func (c *conversations) get(now time.Time, client, id string) ([]llm.Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[conversationKey(client, id)]
	if !ok {
		return nil, false
	}
	cv := el.Value.(*conversation)
	if !now.Before(cv.expires) {
		c.remove(el)
		return nil, false
	}
	return cv.msgs, true
}

// put keeps msgs for client under id until now+ttl, evicting expired and
// then the oldest conversations while the total passes maxBytes. A
// conversation larger than maxBytes is not kept.
func (c *conversations) put(now time.Time, ttl time.Duration, maxBytes int64, client, id string, msgs []llm.Message) {
	size := messagesSize(msgs)
	c.mu.Lock()
	defer c.mu.Unlock()
	key := conversationKey(client, id)
	if el, ok := c.m[key]; ok {
		c.remove(el)
	}
	if size > maxBytes {
		return
	}
	for el := c.order.Back(); el != nil && (c.bytes+size > maxBytes || !now.Before(el.Value.(*conversation).expires)); el = c.order.Back() {
		c.remove(el)
	}
	c.m[key] = c.order.PushFront(&conversation{key: key, msgs: msgs, size: size, expires: now.Add(ttl)})
	c.bytes += size
}

func (c *conversations) remove(el *list.Element) {
	cv := el.Value.(*conversation)
	c.order.Remove(el)
	delete(c.m, cv.key)
	c.bytes -= cv.size
}

// messagesSize is about the bytes msgs hold.
func messagesSize(msgs []llm.Message) int64 {
	n := int64(0)
	for _, m := range msgs {
		n += 64 + int64(len(m.ToolCallID)+len(m.Name))
		for _, p := range m.Content {
			n += 32 + int64(len(p.Text)+len(p.URL)+len(p.Data))
		}
		for _, tc := range m.ToolCalls {
			n += 48 + int64(len(tc.ID)+len(tc.Name)+len(tc.Arguments))
		}
	}
	return n
}

// A fleet shares its conversations: keep also writes each to the store
// ("conv:" and a hash of the client and the response id, for the TTL),
// bounded by state.timeout, before the answer's last byte; a replica that
// does not hold an id reads the store, bounded the same way. A store that
// is away or slow costs a follow-up its earlier turns on another replica
// (the 400), never a request.

func conversationStoreKey(client, id string) string {
	sum := sha256.Sum256([]byte(conversationKey(client, id)))
	return "conv:" + hex.EncodeToString(sum[:])
}

// shareConversation writes msgs to the fleet's store, if there is one.
func (s *Server) shareConversation(ttl time.Duration, client, id string, msgs []llm.Message) {
	fs := s.fleet
	if fs == nil || !fs.f.Up() {
		return
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), fs.timeout)
	defer cancel()
	_ = fs.records.Put(ctx, conversationStoreKey(client, id), b, ttl)
}

// sharedConversation reads a conversation from the fleet's store.
func (s *Server) sharedConversation(client, id string) ([]llm.Message, bool) {
	fs := s.fleet
	if fs == nil || !fs.f.Up() {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), fs.timeout)
	defer cancel()
	b, ok, err := fs.records.Load(ctx, conversationStoreKey(client, id))
	if err != nil || !ok {
		return nil, false
	}
	var msgs []llm.Message
	if json.Unmarshal(b, &msgs) != nil {
		return nil, false
	}
	return msgs, true
}

// continueConversation prepends to req the conversation kept under prev:
// req's own instructions first (a previous response's instructions are not
// carried over, as the API does), then the earlier turns, then req's input.
// An unknown or expired id is the API's 400.
func (s *Server) continueConversation(now time.Time, client string, req *llm.Request, prev string) error {
	earlier, ok := s.convs.get(now, client, prev)
	if !ok {
		earlier, ok = s.sharedConversation(client, prev)
	}
	if !ok {
		return responses.PreviousNotFound(prev)
	}
	var sys, rest []llm.Message
	for _, m := range req.Messages {
		if m.Role == llm.RoleSystem && len(rest) == 0 {
			sys = append(sys, m)
		} else {
			rest = append(rest, m)
		}
	}
	msgs := make([]llm.Message, 0, len(sys)+len(earlier)+len(rest))
	msgs = append(append(append(msgs, sys...), earlier...), rest...)
	req.Messages = msgs
	return nil
}

// keep stores the conversation the client just received (its input
// without instructions, then the answer) under the response id it saw,
// before the answer's last byte is written, so a follow-up sent at once
// finds it.
func (x *exchange) keep() {
	cfg := x.rt.cfg.Responses
	if !x.keepAnswer || cfg.StoreTTL.D() <= 0 {
		return
	}
	var id string
	answer := llm.Message{Role: llm.RoleAssistant}
	if x.committed { // a stream relayed event by event
		id = x.respID
		if p := x.lc.Partial(); p != "" {
			answer.Content = []llm.Part{llm.TextPart(p)}
		}
		answer.ToolCalls = append([]llm.ToolCall(nil), x.lc.Tools()...)
	} else if x.resp != nil { // a complete answer, written whole or as a stream
		id = x.resp.ID
		if x.resp.Content != "" {
			answer.Content = []llm.Part{llm.TextPart(x.resp.Content)}
		}
		for _, tc := range x.resp.ToolCalls {
			tc.ID = inbound.ToolCallID(x.in.Format(), tc.ID)
			answer.ToolCalls = append(answer.ToolCalls, tc)
		}
	}
	if id == "" {
		return
	}
	msgs := make([]llm.Message, 0, len(x.req.Messages)+1)
	for _, m := range x.req.Messages {
		if m.Role != llm.RoleSystem {
			msgs = append(msgs, m)
		}
	}
	msgs = append(msgs, answer)
	id = responses.ResponseID(id)
	x.s.convs.put(time.Now(), cfg.StoreTTL.D(), or(cfg.StoreMaxBytes, 64<<20), x.client, id, msgs)
	x.s.shareConversation(cfg.StoreTTL.D(), x.client, id, msgs)
}

// decodeRequest decodes a request in the in format. When the gateway keeps
// responses (responses.store_ttl), a Responses request may name a
// previous_response_id; otherwise the codec refuses it with the API's 400.
func decodeRequest(in llm.Codec, body []byte, keeps bool) (*llm.Request, responses.State, error) {
	if rc, ok := in.(interface {
		DecodeContinuation([]byte) (*llm.Request, responses.State, error)
	}); ok && keeps {
		return rc.DecodeContinuation(body)
	}
	req, err := in.DecodeRequest(body)
	return req, responses.State{}, err
}
