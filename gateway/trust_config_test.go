package gateway_test

import (
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
)

func TestTrustConfigErrors(t *testing.T) {
	vars := map[string]string{"OPENAI_API_KEY": "sk-very-secret", "EMPTY": "", "SHORT": "abc", "K1": "client-key-0123456789", "K2": "client-key-0123456789"}
	tests := []struct {
		name, extra, want string
	}{
		{"empty admin token", "admin: {token: \"${EMPTY}\"}\n", "gw.yaml:10:16: admin.token: is blank"},
		{"blank admin token", "admin: {token: \"   \"}\n", "gw.yaml:10:16: admin.token: is blank"},
		{"whitespace admin token", "admin:\n  token: \"\\t \\n\"\n", "gw.yaml:11:10: admin.token: is blank"},
		{"negative byte budget", "limits: {max_inflight_bytes: -1}\n", "limits.max_inflight_bytes: must not be negative"},
		{"negative output reservation", "limits: {reserve_output_tokens: -1}\n", "limits.reserve_output_tokens: must not be negative"},
		{"metrics protection needs a token", "admin: {protect_metrics: true}\n", "admin.protect_metrics: needs admin.token"},
		{"client without a key", "clients: [{id: app}]\n", "clients.0.key: a client needs a key"},
		{"client key too short", "clients: [{id: app, key: \"${SHORT}\"}]\n", "clients.0.key: a client key must be at least 16 characters (got 3)"},
		{"client key unset", "clients: [{id: app, key: \"${NOPE}\"}]\n", "clients.0.key: environment variable NOPE is not set"},
		{"key and key_file", "clients: [{id: app, key: \"${K1}\", key_file: k}]\n", "clients.0.key_file: give key or key_file, not both"},
		{"key file missing", "clients: [{id: app, key_file: /nonexistent/key}]\n", "clients.0.key_file: cannot read the key"},
		{"bad client id", "clients: [{id: \"a b\", key: \"${K1}\"}]\n", `clients.0.id: "a b" must be 1 to 64`},
		{"duplicate client", "clients: [{id: a, key: \"${K1}\"}, {id: a, key: \"${OPENAI_API_KEY}-longer\"}]\n", `clients.1.id: duplicate client "a"`},
		{"shared key", "clients: [{id: a, key: \"${K1}\"}, {id: b, key: \"${K2}\"}]\n", `clients.1.key: the same key as client "a"`},
		{"unknown route", "clients: [{id: a, key: \"${K1}\", routes: [chta]}]\n", `clients.0.routes.0: unknown route "chta"`},
		{"negative limit", "clients: [{id: a, key: \"${K1}\", requests_per_minute: -1}]\n", "clients.0.requests_per_minute: must not be negative"},
		{"negative body limit", "limits: {max_body_bytes: -1}\n", "limits.max_body_bytes: must not be negative"},
		{"decoded below body", "limits: {max_body_bytes: 1000, max_decoded_bytes: 10}\n", "limits.max_decoded_bytes: must be at least limits.max_body_bytes"},
		{"negative rotation", "usage: {file: u.jsonl, rotate_bytes: -5}\n", "usage.rotate_bytes: must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gateway.ParseConfig("gw.yaml", []byte(minimalConfig+tt.extra), env(vars))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			for _, secret := range []string{"sk-very-secret", "client-key-0123456789"} {
				assert.NotContains(t, err.Error(), secret)
			}
		})
	}
}

func TestClientKeyFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.key"), []byte("  file-key-0123456789abcdef\n"), 0o600))
	path := filepath.Join(dir, "gw.yaml")
	require.NoError(t, os.WriteFile(path, []byte(minimalConfig+"clients: [{id: app, key_file: app.key}]\n"), 0o600))
	cfg, err := gateway.LoadConfig(path, env(map[string]string{"OPENAI_API_KEY": "sk-x"}))
	require.NoError(t, err)
	require.Equal(t, "file-key-0123456789abcdef", cfg.Clients[0].Key.Value(), "relative to the file, trimmed")
}

// serve warns loudly when it listens beyond loopback without client keys.
func TestExposureWarning(t *testing.T) {
	vars := map[string]string{"OPENAI_API_KEY": "sk-x", "K1": "client-key-0123456789"}
	ips := []string{"127.0.0.1"}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				ips = append(ips, ipn.IP.String())
				break
			}
		}
	}
	if len(ips) < 2 {
		t.Skip("no non-loopback IPv4 address to listen on")
	}
	for _, c := range []struct {
		ip, extra string
		warn      bool
	}{
		{"127.0.0.1", "", false},
		{ips[1], "", true},
		{ips[1], "clients: [{id: a, key: \"${K1}\"}]\n", false},
	} {
		cfg, err := gateway.ParseConfig("gw.yaml", []byte(minimalConfig+c.extra), env(vars))
		require.NoError(t, err)
		logs := &lockedBuffer{}
		_, addr := serveRealOn(t, cfg, gateway.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}, c.ip+":0")
		resp, err := http.Get("http://" + addr + "/healthz") // Serve is running: it has warned
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, c.warn, strings.Contains(logs.String(), "OPEN GATEWAY"), "%s %q: %s", c.ip, c.extra, logs.String())
	}
}

// lockedBuffer is a bytes.Buffer safe for a logger and a test at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
