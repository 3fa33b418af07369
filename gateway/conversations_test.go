package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
)

// TestConversationsBounded: a kept conversation expires after its TTL, the
// oldest are evicted when the bytes pass the bound, one larger than the
// bound is not kept, and another client does not find it.
func TestConversationsBounded(t *testing.T) {
	t0 := time.Unix(1764633600, 0)
	c := newConversations()
	msgs := func(text string) []llm.Message {
		return []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(text)}}}
	}
	one := messagesSize(msgs("0123456789"))
	c.put(t0, time.Minute, 3*one, "k1", "resp_a", msgs("0123456789"))
	got, ok := c.get(t0.Add(59*time.Second), "k1", "resp_a")
	require.True(t, ok)
	assert.Equal(t, "0123456789", got[0].Text())
	_, ok = c.get(t0, "k2", "resp_a")
	assert.False(t, ok, "another client's conversation")
	_, ok = c.get(t0.Add(time.Minute), "k1", "resp_a")
	assert.False(t, ok, "expired")
	assert.Zero(t, c.bytes)

	for i, id := range []string{"resp_1", "resp_2", "resp_3", "resp_4"} {
		c.put(t0.Add(time.Duration(i)*time.Second), time.Hour, 3*one, "k1", id, msgs("0123456789"))
	}
	_, ok = c.get(t0, "k1", "resp_1")
	assert.False(t, ok, "the oldest was evicted")
	_, ok = c.get(t0, "k1", "resp_4")
	assert.True(t, ok)
	assert.LessOrEqual(t, c.bytes, 3*one)

	c.put(t0, time.Hour, one-1, "k1", "resp_big", msgs("0123456789"))
	_, ok = c.get(t0, "k1", "resp_big")
	assert.False(t, ok, "larger than the bound")
}
