package gateway

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
)

// TestConnectTimeout: a connect timeout from the attempt's context is a
// connectTimeoutError (a connect_error outcome), not the request's
// cancellation.
func TestConnectTimeout(t *testing.T) {
	tr := NewTransport(ProtocolAuto, TransportOptions{})
	tr.Proxy = nil
	tr.DialContext = dialWithConnectTimeout(func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done() // a host that never answers the SYN
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: ctx.Err()}
	})
	client := &http.Client{Transport: tr, CheckRedirect: noRedirect}
	ctx := withConnectTimeout(context.Background(), time.Millisecond)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:1/v1/chat/completions", strings.NewReader("{}"))
	require.NoError(t, err)
	_, err = client.Do(req)
	var cte *connectTimeoutError
	require.ErrorAs(t, err, &cte)
	assert.Equal(t, "post: connect timeout after 1ms", scrubURL(err).Error())
	o := transportOutcome(context.Background(), ctx, err)
	assert.Equal(t, "connect_error", string(o.Class))
}

// TestNewTransportProtocols: each protocol setting speaks what it says, with
// the header limit and no transparent compression.
func TestNewTransportProtocols(t *testing.T) {
	for _, c := range []struct {
		p                    Protocol
		http1, http2, h2c    bool
		forceAttemptHTTP2TLS bool
	}{
		{ProtocolAuto, true, true, false, true},
		{ProtocolHTTP1, true, false, false, false},
		{ProtocolH2C, false, false, true, false},
	} {
		t.Run(string(c.p)+"?", func(t *testing.T) {
			tr := NewTransport(c.p, TransportOptions{})
			require.NotNil(t, tr.Protocols)
			assert.Equal(t, c.http1, tr.Protocols.HTTP1())
			assert.Equal(t, c.http2, tr.Protocols.HTTP2())
			assert.Equal(t, c.h2c, tr.Protocols.UnencryptedHTTP2())
			assert.Equal(t, c.forceAttemptHTTP2TLS, tr.ForceAttemptHTTP2)
			assert.Equal(t, int64(64<<10), tr.MaxResponseHeaderBytes)
			assert.True(t, tr.DisableCompression)
			assert.Equal(t, 256, tr.MaxIdleConnsPerHost)
			assert.Equal(t, 1024, tr.MaxIdleConns)
		})
	}
}

// TestGatewayReusesUpstreamConns: streamed and complete answers through the
// gateway leave the upstream connection pooled for the next request, also
// when the upstream sends the chunked terminator after its end marker.
func TestGatewayReusesUpstreamConns(t *testing.T) {
	var conns atomic.Int32
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if !strings.Contains(r.Header.Get("Accept"), "event-stream") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`+"\n\n")
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
		w.(http.Flusher).Flush() // the terminator follows in its own write
	}))
	up.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	up.StartTLS() // HTTP/1.1 over TLS (a cleartext upstream gets a connection per request)
	t.Cleanup(up.Close)
	cfg, err := ParseConfig("reuse.yaml", []byte(`version: 1
providers:
  - {name: alpha, kind: openai, base_url: "`+up.URL+`/v1"}
routes:
  - name: chat
    targets: [{provider: alpha, model: gpt-4o}]
cache: {max_entries: -1}
`), LoadOptions{})
	require.NoError(t, err)
	// A connection is reused once quiet for ReuseQuiet after its answer
	// (quietConn): 1 ms here, and the requests are 5 ms apart.
	tr := NewTransport(ProtocolAuto, TransportOptions{ReuseQuiet: time.Millisecond,
		TLSConfig: up.Client().Transport.(*http.Transport).TLSClientConfig})
	srv, err := New(cfg, Options{Events: events.Discard, Logger: slog.New(slog.DiscardHandler), Transport: tr})
	require.NoError(t, err)
	gws := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { gws.Close(); _ = srv.Close() })
	for i := range 6 {
		time.Sleep(5 * time.Millisecond)
		stream := i%2 == 0
		resp, err := http.Post(gws.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"chat","stream":`+strconv.FormatBool(stream)+`,"messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, string(b))
		if stream {
			assert.Contains(t, string(b), "data: [DONE]")
		}
		assert.Contains(t, string(b), "Hi")
	}
	assert.Equal(t, int32(1), conns.Load(), "one upstream connection for every request")
}
