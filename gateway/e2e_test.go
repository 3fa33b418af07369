package gateway_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
)

func TestHealthyPrimary(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	for _, stream := range []bool{false, true} {
		r := g.do(t, stream, map[string]string{"X-Request-Id": "req-fixed"})
		require.Equal(t, 200, r.status, r.body)
		assert.Equal(t, "alpha:gpt-4o", r.header.Get(gateway.HeaderTarget))
		assert.Equal(t, "1", r.header.Get(gateway.HeaderAttempts))
		assert.Equal(t, "primary", r.header.Get(gateway.HeaderTier))
		assert.Equal(t, "req-fixed", r.header.Get("X-Request-Id"))
		assert.NotEmpty(t, r.text)
		if stream {
			assert.True(t, r.clean, "stream ends with [DONE]")
		}
	}
	j := m.alpha.Model().Journal()
	require.Len(t, j, 2)
	assert.Equal(t, "req-fixed", j[0].RequestID, "x-request-id is forwarded upstream")
	assert.Equal(t, 2, countKind(g.log.Events(), events.RequestEnd))
}
