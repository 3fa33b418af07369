package gateway_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/internal/redistest"
)

// TestStoreDegradationLogged: the store dying and coming back are log
// lines, structured like every other (JSON here).
func TestStoreDegradationLogged(t *testing.T) {
	m := startMocks(t)
	srv := redistest.Start(t)
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	state := fmt.Sprintf("state: {backend: redis, url: %q}\n", srv.URL())
	g := startGateway(t, trustConfig(t, m, state), gateway.Options{Logger: logger})
	require.Eventually(t, func() bool { return g.srv.State().Fleet.Shared }, 10*time.Second, 5*time.Millisecond)

	srv.Stop()
	require.Eventually(t, func() bool { return !g.srv.State().Fleet.Shared }, 10*time.Second, 5*time.Millisecond)
	srv.Start()
	require.Eventually(t, func() bool { return g.srv.State().Fleet.Shared }, 20*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "resynced") }, 5*time.Second, 5*time.Millisecond)

	var msgs []string
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "an unstructured log line: %q", line)
		msgs = append(msgs, fmt.Sprint(rec["msg"]))
	}
	joined := strings.Join(msgs, "\n")
	require.Contains(t, joined, "state store unavailable")
	require.Contains(t, joined, "state store answers again")
}
