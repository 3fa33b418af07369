package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/usage"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/anthropic"
	"github.com/brownout-dev/brownout/llm/openai"
)

// Client keys of the trust tests (at least 16 characters).
const (
	keyApp   = "ck-app-0123456789abcdef"
	keyBatch = "ck-batch-0123456789abcdef"
	keySlow  = "ck-slow-0123456789abcdef"
)

var trustEnv = map[string]string{
	"ALPHA_KEY": "sk-alpha-secret", "BETA_KEY": "sk-beta-secret", "GAMMA_KEY": "sk-gamma-secret",
	"APP_KEY": keyApp, "BATCH_KEY": keyBatch, "SLOW_KEY": keySlow, "ADMIN": "admin-token-0123456789",
}

// trustConfig is the e2e configuration with extra sections, parsed with
// trustEnv.
func trustConfig(t *testing.T, m *mocks, extra string) *gateway.Config {
	t.Helper()
	// A second route, for the clients allowed only one.
	text := strings.Replace(configText(m, extra), "policy:\n", "  - name: other\n    targets: [{provider: alpha, model: gpt-4o}]\npolicy:\n", 1)
	cfg, err := gateway.ParseConfig("trust.yaml", []byte(text), gateway.LoadOptions{LookupEnv: func(k string) (string, bool) {
		v, ok := trustEnv[k]
		return v, ok
	}})
	require.NoError(t, err)
	return cfg
}

const clientsYAML = `clients:
  - {id: app, key: "${APP_KEY}", routes: [chat]}
  - {id: batch, key: "${BATCH_KEY}", routes: [other]}
  - {id: slow, key: "${SLOW_KEY}", requests_per_minute: 1}
`

// errorShape decodes an error body in the inbound API's shape and returns
// its type.
func errorShape(t *testing.T, path, body string) string {
	t.Helper()
	if path == "/v1/messages" {
		var e struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &e), body)
		require.Equal(t, "error", e.Type, body)
		require.NotEmpty(t, e.Error.Message, body)
		return e.Error.Type
	}
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	require.NotEmpty(t, e.Error.Message, body)
	return e.Error.Type
}

// wireType is the error type the inbound API of path writes for t.
func wireType(tt *testing.T, path string, t llm.ErrorType) string {
	var c llm.Codec = openai.Codec{}
	if path == "/v1/messages" {
		c = anthropic.Codec{}
	}
	_, body := c.EncodeError(&llm.Error{Type: t, Message: "x"})
	return errorShape(tt, path, string(body))
}

func send(t *testing.T, url, path, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	resp := post(t, url, path, body, hdr)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

func TestClientKeys(t *testing.T) {
	m := startMocks(t)
	dir := t.TempDir()
	usageFile := filepath.Join(dir, "usage.jsonl")
	g := startGateway(t, trustConfig(t, m, clientsYAML+"usage: {file: "+usageFile+"}\n"), gateway.Options{Logger: discardLogger()})
	bearer := func(k string) map[string]string { return map[string]string{"Authorization": "Bearer " + k} }
	cases := []struct {
		name      string
		path      string
		hdr       map[string]string
		body      string
		status    int
		errType   llm.ErrorType // in the API's shape
		retryHint bool          // Retry-After set
	}{
		{"no key", "/v1/chat/completions", nil, openaiBody(false), 401, llm.ErrAuthentication, false},
		{"no key, anthropic shape", "/v1/messages", nil, anthropicBody(false), 401, llm.ErrAuthentication, false},
		{"wrong key", "/v1/chat/completions", bearer(keyApp + "x"), openaiBody(false), 401, llm.ErrAuthentication, false},
		{"a key's prefix", "/v1/chat/completions", bearer(keyApp[:16]), openaiBody(false), 401, llm.ErrAuthentication, false},
		{"bearer", "/v1/chat/completions", bearer(keyApp), openaiBody(false), 200, "", false},
		{"x-api-key", "/v1/messages", map[string]string{"x-api-key": keyApp}, anthropicBody(false), 200, "", false},
		{"stream", "/v1/chat/completions", bearer(keyApp), openaiBody(true), 200, "", false},
		{"route not allowed", "/v1/chat/completions", bearer(keyBatch), openaiBody(false), 403, llm.ErrPermission, false},
		{"route not allowed, anthropic shape", "/v1/messages", map[string]string{"x-api-key": keyBatch}, anthropicBody(false), 403, llm.ErrPermission, false},
		{"first request of the minute", "/v1/chat/completions", bearer(keySlow), openaiBody(false), 200, "", false},
		{"second request of the minute", "/v1/chat/completions", bearer(keySlow), openaiBody(false), 429, llm.ErrRateLimit, true},
		{"second request, anthropic shape", "/v1/messages", map[string]string{"x-api-key": keySlow}, anthropicBody(false), 429, llm.ErrRateLimit, true},
	}
	for _, c := range cases {
		status, h, body := send(t, g.url, c.path, c.body, c.hdr)
		require.Equal(t, c.status, status, "%s: %s", c.name, body)
		if c.errType != "" {
			require.Equal(t, wireType(t, c.path, c.errType), errorShape(t, c.path, body), c.name)
		}
		if c.retryHint {
			require.NotEmpty(t, h.Get("Retry-After"), c.name)
		}
		if status == 401 {
			require.NotEmpty(t, h.Get("WWW-Authenticate"), c.name)
		}
		for _, k := range []string{keyApp, keyBatch, keySlow} {
			require.NotContains(t, body, k, c.name)
		}
	}

	// The client's id (never its key) is on the request's events, its usage
	// records and its metrics.
	var clientsSeen []string
	for _, ev := range g.log.Events() {
		if ev.Kind == events.RequestStart || ev.Kind == events.AttemptEnd || ev.Kind == events.RequestEnd {
			require.NotEmpty(t, ev.Client, "%+v", ev)
			clientsSeen = append(clientsSeen, ev.Client)
		}
	}
	require.Subset(t, []string{"app", "slow"}, clientsSeen)
	require.Contains(t, clientsSeen, "slow")
	require.NoError(t, g.srv.Close())
	f, err := os.Open(usageFile)
	require.NoError(t, err)
	recs, err := usage.Read(f)
	_ = f.Close()
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	for _, r := range recs {
		require.Contains(t, []string{"app", "slow"}, r.Client)
	}
	metrics := scrape(t, g.url, "")
	for _, line := range []string{
		`brownout_inbound_requests_total{client="unknown",result="unauthorized"} 4`,
		`brownout_inbound_requests_total{client="batch",result="forbidden"} 2`,
		`brownout_inbound_requests_total{client="slow",result="rate_limited"} 2`,
		`brownout_inbound_requests_total{client="app",result="admitted"} 3`,
	} {
		require.Contains(t, metrics, line)
	}
	require.Regexp(t, `brownout_client_cost_dollars_total\{client="app"\} 0\.\d+`, metrics)
}

func scrape(t *testing.T, url, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, string(b))
	return string(b)
}

func TestClientBudgetFromPricing(t *testing.T) {
	m := startMocks(t)
	// One answer costs more than the budget: the next request is refused
	// until the period ends.
	g := startGateway(t, trustConfig(t, m, `clients:
  - {id: app, key: "${APP_KEY}", budget: 0.0000001, budget_period: 1h}
`), gateway.Options{Logger: discardLogger()})
	hdr := map[string]string{"Authorization": "Bearer " + keyApp}
	status, _, body := send(t, g.url, "/v1/chat/completions", openaiBody(false), hdr)
	require.Equal(t, 200, status, body)
	status, h, body := send(t, g.url, "/v1/chat/completions", openaiBody(false), hdr)
	require.Equal(t, 429, status, body)
	require.Contains(t, body, "budget")
	require.NotEmpty(t, h.Get("Retry-After"))
}

func TestOpenGatewayStillServes(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, trustConfig(t, m, ""), gateway.Options{Logger: discardLogger()})
	status, _, body := send(t, g.url, "/v1/chat/completions", openaiBody(false), nil)
	require.Equal(t, 200, status, body)
	require.Contains(t, scrape(t, g.url, ""), `brownout_inbound_requests_total{client="anonymous",result="admitted"} 1`)
}

func TestProtectMetrics(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, trustConfig(t, m, "admin: {token: \"${ADMIN}\", protect_metrics: true}\n"), gateway.Options{Logger: discardLogger()})
	resp, err := http.Get(g.url + "/metrics")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, 401, resp.StatusCode)
	require.Contains(t, scrape(t, g.url, trustEnv["ADMIN"]), "brownout_requests_in_flight")
}

// serveReal runs the gateway on a loopback listener through Serve (the
// server's own header limits and timeouts) and returns its address.
func serveReal(t *testing.T, cfg *gateway.Config, opts gateway.Options) (*gateway.Server, string) {
	t.Helper()
	return serveRealOn(t, cfg, opts, "127.0.0.1:0")
}

func serveRealOn(t *testing.T, cfg *gateway.Config, opts gateway.Options, addr string) (*gateway.Server, string) {
	t.Helper()
	srv, err := gateway.New(cfg, opts)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = srv.Close()
	})
	return srv, ln.Addr().String()
}

// rawRequest writes a request head on a new connection and returns it.
func rawRequest(t *testing.T, addr, path string, contentLength int, extra string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n", path, contentLength, extra)
	require.NoError(t, err)
	return c
}

func readResponse(t *testing.T, c net.Conn) (*http.Response, string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// A body sent a byte a second is cut off at limits.read_body_timeout with
// a 408 in the API's shape, and the connection is closed.
func TestSlowBody(t *testing.T) {
	m := startMocks(t)
	_, addr := serveReal(t, trustConfig(t, m, "limits: {read_body_timeout: 1s}\n"), gateway.Options{Logger: discardLogger()})
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		body := anthropicBody(false)
		c := rawRequest(t, addr, path, len(body), "")
		stop := make(chan struct{})
		go func() { // one byte a second, until the gateway gives up
			for i := 0; i < len(body); i++ {
				select {
				case <-stop:
					return
				case <-time.After(time.Second):
				}
				if _, err := c.Write([]byte{body[i]}); err != nil {
					return
				}
			}
		}()
		resp, text := readResponse(t, c)
		close(stop)
		require.Equal(t, 408, resp.StatusCode, text)
		require.Equal(t, wireType(t, path, llm.ErrTimeout), errorShape(t, path, text))
		require.True(t, resp.Close, "the connection is closed")
	}
}

// heapGrowth runs f and returns how far the live heap rose above where it
// started, sampled every millisecond (the process's memory bound, as far as
// Go allocations go).
func heapGrowth(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var s runtime.MemStats
		for {
			runtime.ReadMemStats(&s)
			peak = max(peak, s.HeapAlloc)
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	if peak < base {
		return 0
	}
	return peak - base
}

func TestBodyLimits(t *testing.T) {
	m := startMocks(t)
	const maxBody = 1 << 20
	srv, addr := serveReal(t, trustConfig(t, m, fmt.Sprintf("limits: {max_body_bytes: %d, max_messages: 100, max_decoded_bytes: %d}\n", maxBody, 4*maxBody)),
		gateway.Options{Logger: discardLogger()})
	_ = srv
	url := "http://" + addr
	rep := func(s string, n int) string { return strings.TrimSuffix(strings.Repeat(s+",", n), ",") }
	cases := []struct {
		name, path, body string
		status           int
		errType          llm.ErrorType
	}{
		{"body over the limit", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"` + strings.Repeat("x", 2*maxBody) + `"}]}`, 413, llm.ErrInvalidRequest},
		{"anthropic body over the limit", "/v1/messages", `{"model":"chat","max_tokens":5,"messages":[{"role":"user","content":"` + strings.Repeat("x", 2*maxBody) + `"}]}`, 413, llm.ErrInvalidRequest},
		{"many messages", "/v1/chat/completions", `{"model":"chat","messages":[` + rep(`{"role":"user","content":"x"}`, 20000) + `]}`, 400, llm.ErrInvalidRequest},
		{"many messages, anthropic", "/v1/messages", `{"model":"chat","max_tokens":5,"messages":[` + rep(`{"role":"user","content":"x"}`, 20000) + `]}`, 400, llm.ErrInvalidRequest},
		{"many parts in few messages", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":[` + rep(`{"type":"text","text":"x"}`, 30000) + `]}]}`, 413, llm.ErrInvalidRequest},
		{"at the limits", "/v1/chat/completions", `{"model":"chat","messages":[` + rep(`{"role":"user","content":"`+strings.Repeat("x", maxBody/200)+`"}`, 100) + `]}`, 200, ""},
	}
	for _, c := range cases {
		var status int
		var body string
		grew := heapGrowth(func() {
			status, _, body = send(t, url, c.path, c.body, nil)
		})
		t.Logf("%s: %d, heap +%d KiB (body %d KiB)", c.name, status, grew>>10, len(c.body)>>10)
		require.Equal(t, c.status, status, "%s: %.300s", c.name, body)
		if c.errType != "" {
			require.Equal(t, wireType(t, c.path, c.errType), errorShape(t, c.path, body), c.name)
			// A refused request costs at most its (bounded) body, twice over:
			// the test client's copy and the gateway's.
			require.Less(t, grew, uint64(3*len(c.body)+4*maxBody), c.name)
		}
	}

	// A declared length over the limit is refused before the body is read.
	conn := rawRequest(t, addr, "/v1/chat/completions", 1<<30, "")
	resp, text := readResponse(t, conn)
	require.Equal(t, 413, resp.StatusCode, text)

	// Headers past limits.max_header_bytes (default 64 KiB): 431.
	conn = rawRequest(t, addr, "/v1/chat/completions", 2, "X-Big: "+strings.Repeat("a", 200<<10)+"\r\n")
	resp, text = readResponse(t, conn)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode, text)
}

// blockingTransport holds every upstream request until release is closed.
type blockingTransport struct {
	started chan struct{}
	release chan struct{}
}

func (b *blockingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b.started <- struct{}{}
	select {
	case <-b.release:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestConcurrencyLimits(t *testing.T) {
	for _, c := range []struct {
		name, limits string
		first, next  string
	}{
		{"requests", "limits: {max_concurrent_requests: 1}\n", openaiBody(false), openaiBody(false)},
		{"streams", "limits: {max_concurrent_streams: 1}\n", openaiBody(true), openaiBody(true)},
		{"client cap", "clients: [{id: app, key: \"${APP_KEY}\", max_concurrent: 1}]\n", openaiBody(false), openaiBody(false)},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := startMocks(t)
			bt := &blockingTransport{started: make(chan struct{}, 8), release: make(chan struct{})}
			g := startGateway(t, trustConfig(t, m, c.limits), gateway.Options{Logger: discardLogger(), Transport: bt})
			hdr := map[string]string{"Authorization": "Bearer " + keyApp}
			var wg sync.WaitGroup
			var firstStatus int
			wg.Go(func() {
				resp := post(t, g.url, "/v1/chat/completions", c.first, hdr)
				firstStatus = resp.StatusCode
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			})
			<-bt.started // the first request holds its slot
			status, h, body := send(t, g.url, "/v1/chat/completions", c.next, hdr)
			close(bt.release)
			wg.Wait()
			require.Equal(t, 200, firstStatus)
			want := 503
			if c.name == "client cap" {
				want = 429
			}
			require.Equal(t, want, status, body)
			require.Equal(t, "1", h.Get("Retry-After"))
			errorShape(t, "/v1/chat/completions", body)
			// The slot is free again.
			status, _, body = send(t, g.url, "/v1/chat/completions", c.next, hdr)
			require.Equal(t, 200, status, body)
		})
	}
}

// Client-chosen model names never become metric series: 300 distinct (and
// long) names leave /metrics the size one unknown name does.
func TestMetricsCardinality(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, trustConfig(t, m, ""), gateway.Options{Logger: discardLogger()})
	send(t, g.url, "/v1/chat/completions", openaiBody(false), nil)
	send(t, g.url, "/v1/chat/completions", `{"model":"unknown-0","messages":[{"role":"user","content":"x"}]}`, nil)
	before := scrape(t, g.url, "")
	for i := range 300 {
		model := fmt.Sprintf("model-%d-%s", i, strings.Repeat("x", 1000))
		status, _, _ := send(t, g.url, "/v1/chat/completions", `{"model":"`+model+`","messages":[{"role":"user","content":"x"}]}`, nil)
		require.Equal(t, 404, status)
	}
	after := scrape(t, g.url, "")
	series := func(text string) map[string]bool {
		out := map[string]bool{}
		for _, l := range strings.Split(text, "\n") {
			if l != "" && !strings.HasPrefix(l, "#") && strings.HasPrefix(l, "brownout_") {
				out[l[:strings.LastIndexByte(l, ' ')]] = true
			}
		}
		return out
	}
	require.Equal(t, series(before), series(after), "no new series")
	require.Contains(t, after, `route="unknown"`)
	require.NotContains(t, after, "model-1")
}
