package gateway_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/usage"
)

// TestUsageRecords: one record per attempt, the failed attempt that
// streamed tokens before it was cut included and priced.
func TestUsageRecords(t *testing.T) {
	m := startMocks(t)
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	cfg := m.config(t, "usage: {file: "+path+"}\n")
	srv, err := gateway.New(cfg, gateway.Options{Logger: discardLogger()})
	require.NoError(t, err)
	g := &gw{srv: srv}
	hs := newTestServer(srv)
	g.url = hs.URL
	addFault(t, m.alpha, `{kind: cut, after: 6}`)
	r := g.do(t, true, map[string]string{"X-Request-Id": "bill-me"})
	require.Equal(t, 200, r.status)
	require.True(t, r.clean)
	hs.Close()
	require.NoError(t, srv.Close()) // flushes the records

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := usage.Read(f)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, "alpha:gpt-4o", recs[0].Target)
	assert.Equal(t, "cut_mid_stream", recs[0].Class)
	assert.Equal(t, usage.Failed, recs[0].Outcome)
	assert.Positive(t, recs[0].OutputTokens, "the tokens streamed before the cut are metered")
	assert.Positive(t, recs[0].Cost)
	assert.Equal(t, "beta:claude-sonnet", recs[1].Target)
	assert.Equal(t, usage.Served, recs[1].Outcome)
	assert.Equal(t, "equivalent", recs[1].Tier)
	for _, rec := range recs {
		assert.Equal(t, "bill-me", rec.RequestID)
		assert.Equal(t, "chat", rec.Route)
	}
}
