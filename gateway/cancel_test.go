package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TestClientGoneDuringBackoff: a client that leaves while the gateway waits
// out a Retry-After ends its request as failed / client_canceled (a
// request.end is emitted, nothing dangles), and the primary is not blamed.
func TestClientGoneDuringBackoff(t *testing.T) {
	m := startMocks(t)
	cfg := m.config(t, "")
	cfg.Routes[0].Targets[0].Retry.Attempts = 2
	cfg.Routes[0].Targets[0].Retry.RetryAfterCap = yamlfile.Duration(time.Minute)
	g := startGateway(t, cfg, gateway.Options{Logger: discardLogger()})
	addFault(t, m.alpha, `{kind: http_error, status: 429, retry_after: 30s}`)

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url+"/v1/chat/completions", strings.NewReader(openaiBody(false)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()

	// Wait until the gateway observed the 429 and is waiting out the 30s.
	waitFor(t, func() bool { return countKind(g.log.Events(), events.AttemptEnd) == 1 })
	cancel()
	require.Error(t, <-errc)

	var end events.Event
	waitFor(t, func() bool {
		for _, e := range g.log.Events() {
			if e.Kind == events.RequestEnd {
				end = e
				return true
			}
		}
		return false
	})
	assert.Equal(t, events.OutcomeFailed, end.Outcome)
	assert.Equal(t, string(policy.ClientCanceled), end.Class)
	assert.Equal(t, 499, end.Status)
	assert.Equal(t, 1, end.Attempt, "no second attempt after the client left")
	assert.Len(t, m.alpha.Model().Journal(), 1)
	for _, ts := range g.srv.State().Policy.Targets {
		if ts.Key == "alpha:gpt-4o" {
			assert.Equal(t, 1, ts.Samples, "only the 429 counts; the cancel does not")
		}
	}
}

// waitFor polls cond for up to 5s (a bound on a hang, not a timing check).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5s")
}
