package gateway

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
)

// h1Server is a loopback HTTP/1.1 server that counts the connections it
// accepted.
type h1Server struct {
	*httptest.Server
	conns atomic.Int32
}

func newH1Server(t *testing.T, h http.HandlerFunc) *h1Server {
	t.Helper()
	s := &h1Server{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// noFallback fails a test whose request leaves the lean transport.
type noFallback struct{ t *testing.T }

func (f noFallback) RoundTrip(r *http.Request) (*http.Response, error) {
	f.t.Errorf("request to %s went to the fallback transport", r.URL)
	return nil, errors.New("fallback")
}

func newTestH1(t *testing.T, o TransportOptions) (*h1Transport, *http.Client) {
	tr := newH1Transport(o, noFallback{t})
	tr.proxy = nil
	t.Cleanup(tr.CloseIdleConnections)
	return tr, &http.Client{Transport: tr, CheckRedirect: noRedirect}
}

func (t *h1Transport) idleCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, conns := range t.idle {
		n += len(conns)
	}
	return n
}

// TestH1TransportBodies: content-length, chunked and empty bodies arrive
// whole, and one keep-alive connection carries all the requests.
func TestH1TransportBodies(t *testing.T) {
	srv := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		in, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/length":
			w.Header().Set("Content-Length", strconv.Itoa(len(in)+6))
			_, _ = io.WriteString(w, "echo: ")
			_, _ = w.Write(in)
		case "/chunked":
			for i := range 3 {
				_, _ = io.WriteString(w, "part"+strconv.Itoa(i)+";")
				w.(http.Flusher).Flush()
			}
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		}
	})
	_, client := newTestH1(t, TransportOptions{})
	cases := []struct {
		name, path, method, body string
		want                     string
		status                   int
		chunked                  bool
	}{
		{"content-length", "/length", http.MethodPost, `{"a":1}`, `echo: {"a":1}`, 200, false},
		{"chunked", "/chunked", http.MethodPost, `{}`, "part0;part1;part2;", 200, true},
		{"no body", "/empty", http.MethodGet, "", "", 204, false},
		{"content-length again", "/length", http.MethodPost, "x", "echo: x", 200, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			req, err := http.NewRequest(c.method, srv.URL+c.path, body)
			require.NoError(t, err)
			resp, err := client.Do(req)
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, c.status, resp.StatusCode)
			assert.Equal(t, c.want, string(got))
			assert.Equal(t, c.chunked, len(resp.TransferEncoding) > 0 && resp.TransferEncoding[0] == "chunked")
		})
	}
	assert.Equal(t, int32(1), srv.conns.Load(), "keep-alive: one connection for every request")
}

// TestH1TransportConcurrentPool: concurrent requests get one connection
// each; at most MaxIdleConnsPerHost stay pooled and later requests reuse
// them.
func TestH1TransportConcurrentPool(t *testing.T) {
	const n = 4
	var started sync.WaitGroup
	started.Add(n)
	release := make(chan struct{})
	var wait atomic.Bool
	wait.Store(true)
	srv := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		if wait.Load() {
			started.Done()
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	})
	tr, client := newTestH1(t, TransportOptions{MaxIdleConnsPerHost: 2})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := client.Get(srv.URL)
			if !assert.NoError(t, err) {
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, "ok", string(b))
		})
	}
	started.Wait()
	wait.Store(false)
	close(release)
	wg.Wait()
	assert.Equal(t, int32(n), srv.conns.Load())
	assert.Equal(t, 2, tr.idleCount(), "idle connections are bounded per host")
	for range 3 {
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	assert.Equal(t, int32(n), srv.conns.Load(), "pooled connections are reused")
}

// TestH1TransportStreamsIncrementally: each flushed part of a streamed body
// reaches the reader before the server writes the next one.
func TestH1TransportStreamsIncrementally(t *testing.T) {
	next := make(chan struct{})
	var released atomic.Bool
	srv := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			_, _ = io.WriteString(w, "data: "+strconv.Itoa(i)+"\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-next:
			case <-time.After(10 * time.Second): // a buffering transport fails below instead of hanging
				released.Store(true)
			}
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	})
	tr, client := newTestH1(t, TransportOptions{})
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	br := bufio.NewReader(resp.Body)
	for i := range 3 {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "data: "+strconv.Itoa(i)+"\n", line)
		assert.False(t, released.Load(), "part %d arrived only after the server gave up waiting", i)
		_, _ = br.ReadString('\n')
		next <- struct{}{}
	}
	line, _ := br.ReadString('\n')
	assert.Equal(t, "data: [DONE]\n", line)
	_, _ = br.ReadString('\n')
	// The reader stopped at the end marker, before the body's end; the
	// chunked terminator came with it, so Close keeps the connection.
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, 1, tr.idleCount())
}

// TestH1TransportCancelMidBody: cancelling the request's context unblocks a
// body read waiting on the upstream and closes the connection.
func TestH1TransportCancelMidBody(t *testing.T) {
	gone := make(chan struct{})
	srv := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the client closed the connection
		close(gone)
	})
	tr, client := newTestH1(t, TransportOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	buf := make([]byte, 64)
	n, err := resp.Body.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "data: first\n\n", string(buf[:n]))
	readErr := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(buf)
		readErr <- err
	}()
	cancel()
	err = <-readErr
	assert.ErrorIs(t, err, context.Canceled)
	<-gone
	assert.Equal(t, 0, tr.idleCount())
	_, err = resp.Body.Read(buf)
	assert.ErrorIs(t, err, context.Canceled, "a failed body keeps failing")
}

// TestH1TransportCloseMidBody: closing a body that is not at its end, even
// while a read waits on it, closes the connection instead of reading on.
func TestH1TransportCloseMidBody(t *testing.T) {
	gone := make(chan struct{})
	srv := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	})
	tr, client := newTestH1(t, TransportOptions{})
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	buf := make([]byte, 4)
	_, err = io.ReadFull(resp.Body, buf)
	require.NoError(t, err)
	readErr := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(buf)
		readErr <- err
	}()
	require.NoError(t, resp.Body.Close())
	assert.Error(t, <-readErr)
	<-gone
	assert.Equal(t, 0, tr.idleCount())
}

// TestH1TransportConnectTimeout: a connect timeout from the attempt's
// context is a connectTimeoutError (a connect_error outcome), not the
// request's cancellation.
func TestH1TransportConnectTimeout(t *testing.T) {
	tr, client := newTestH1(t, TransportOptions{})
	tr.dialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done() // a host that never answers the SYN
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: ctx.Err()}
	}
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

// TestH1TransportServerCloses: a server that answers with Connection: close
// gets a new connection for each request, and none is pooled.
func TestH1TransportServerCloses(t *testing.T) {
	srv := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		_, _ = io.WriteString(w, "bye")
	})
	tr, client := newTestH1(t, TransportOptions{})
	for range 2 {
		resp, err := client.Post(srv.URL, "application/json", strings.NewReader("{}"))
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, "bye", string(b))
		assert.Equal(t, 0, tr.idleCount())
	}
	assert.Equal(t, int32(2), srv.conns.Load())
}

// TestH1TransportStaleIdleConn: a pooled connection the server closed while
// it was idle is noticed when taken; the request goes out on a new one,
// even a POST that could not be retried.
func TestH1TransportStaleIdleConn(t *testing.T) {
	srv := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	tr, client := newTestH1(t, TransportOptions{})
	post := func() {
		t.Helper()
		resp, err := client.Post(srv.URL, "application/json", strings.NewReader("{}"))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, "ok", string(b))
	}
	post()
	require.Equal(t, 1, tr.idleCount())
	srv.CloseClientConnections() // the server's idle timeout
	post()
	assert.Equal(t, int32(2), srv.conns.Load())
}

// TestH1TransportReusedConnClosed: a reused connection that the server
// closes after reading the request (the race the liveness peek cannot
// see) is retried once on a new connection when net/http would retry the
// request, and is otherwise a clear error.
func TestH1TransportReusedConnClosed(t *testing.T) {
	cases := []struct {
		name   string
		method string
		key    bool
		retry  bool
	}{
		{"GET is retried", http.MethodGet, false, true},
		{"POST with an idempotency key is retried", http.MethodPost, true, true},
		{"POST is not retried", http.MethodPost, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var reqs atomic.Int32
			var bodies sync.Map
			srv := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				n := reqs.Add(1)
				bodies.Store(n, string(b))
				if n == 2 { // the second request: drop the connection unanswered
					conn, _, err := http.NewResponseController(w).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
				_, _ = io.WriteString(w, "ok")
			})
			_, client := newTestH1(t, TransportOptions{})
			do := func() (*http.Response, error) {
				var body io.Reader
				if c.method == http.MethodPost {
					body = strings.NewReader(`{"n":1}`)
				}
				req, err := http.NewRequest(c.method, srv.URL, body)
				require.NoError(t, err)
				if c.key {
					req.Header.Set("Idempotency-Key", "k1")
				}
				return client.Do(req)
			}
			resp, err := do()
			require.NoError(t, err)
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()

			resp, err = do()
			if !c.retry {
				require.ErrorIs(t, err, errReusedConnClosed)
				assert.Equal(t, int32(2), reqs.Load())
				return
			}
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, "ok", string(b))
			assert.Equal(t, int32(3), reqs.Load())
			assert.Equal(t, int32(2), srv.conns.Load())
			if c.method == http.MethodPost {
				got, _ := bodies.Load(int32(3))
				assert.Equal(t, `{"n":1}`, got, "the retry sends the whole body again")
			}
		})
	}
}

// TestReusedConnRetryable: net/http's rules for retrying a request that met
// a closed reused connection.
func TestReusedConnRetryable(t *testing.T) {
	withBody := func(method string, rewind bool, hdr string) *http.Request {
		r, _ := http.NewRequest(method, "http://x/", strings.NewReader("{}"))
		if !rewind {
			r.GetBody = nil
		}
		if hdr != "" {
			r.Header.Set(hdr, "k")
		}
		return r
	}
	get, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	cases := []struct {
		name         string
		req          *http.Request
		wroteNothing bool
		want         bool
	}{
		{"get", get, false, true},
		{"post", withBody(http.MethodPost, true, ""), false, false},
		{"post, nothing written", withBody(http.MethodPost, true, ""), true, true},
		{"post, nothing written, body cannot rewind", withBody(http.MethodPost, false, ""), true, false},
		{"post with Idempotency-Key", withBody(http.MethodPost, true, "Idempotency-Key"), false, true},
		{"post with X-Idempotency-Key", withBody(http.MethodPost, true, "X-Idempotency-Key"), false, true},
		{"post with a key, body cannot rewind", withBody(http.MethodPost, false, "Idempotency-Key"), false, false},
		{"put", withBody(http.MethodPut, true, ""), false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &reusedConnError{err: io.EOF, wroteNothing: c.wroteNothing}
			assert.Equal(t, c.want, e.retryable(c.req))
		})
	}
}

// TestH1TransportFallback: TLS URLs and proxied requests go to the fallback
// transport; cleartext ones do not.
func TestH1TransportFallback(t *testing.T) {
	cases := []struct {
		name, url string
		proxy     bool
		want      bool
	}{
		{"https", "https://api.example.com/v1", false, true},
		{"proxied http", "http://api.example.com/v1", true, true},
		{"http", "http://127.0.0.1:1/v1", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var used bool
			fb := roundTripFunc(func(*http.Request) (*http.Response, error) {
				used = true
				return nil, errors.New("fallback")
			})
			tr := newH1Transport(TransportOptions{}, fb)
			tr.proxy = func(*http.Request) (*url.URL, error) {
				if c.proxy {
					return url.Parse("http://proxy.internal:3128")
				}
				return nil, nil
			}
			tr.dialContext = func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("dial") }
			req, _ := http.NewRequest(http.MethodGet, c.url, nil)
			_, _ = tr.RoundTrip(req)
			assert.Equal(t, c.want, used)
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestUpstreamTransportChoice: cleartext HTTP/1.1 goes through the lean
// transport (with http.Transport behind it for TLS and proxies); h2c keeps
// http.Transport.
func TestUpstreamTransportChoice(t *testing.T) {
	for _, c := range []struct {
		p    Protocol
		lean bool
	}{{ProtocolAuto, true}, {ProtocolHTTP1, true}, {ProtocolH2C, false}} {
		t.Run(string(c.p)+"?", func(t *testing.T) {
			tr := upstreamTransport(c.p, TransportOptions{})
			h1, ok := tr.(*h1Transport)
			require.Equal(t, c.lean, ok)
			if ok {
				_, ok = h1.fallback.(*http.Transport)
				assert.True(t, ok)
			}
		})
	}
}

// TestH1TransportCancelledBeforeSend: a request whose context is already
// done fails at once without opening a connection.
func TestH1TransportCancelledBeforeSend(t *testing.T) {
	srv := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {})
	_, client := newTestH1(t, TransportOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	require.NoError(t, err)
	_, err = client.Do(req)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int32(0), srv.conns.Load())
}

// waitIdle waits until the transport pools n connections (a drain
// goroutine pools a closed body's connection when the rest arrives).
func waitIdle(t *testing.T, tr *h1Transport, n int) {
	t.Helper()
	for range 2000 {
		if tr.idleCount() == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%d idle connections, want %d", tr.idleCount(), n)
}

// TestH1TransportDrainOnClose: a body closed at its SSE end marker, before
// the chunked terminator arrived, keeps its connection once the terminator
// comes; one that goes on past drainMax loses it.
func TestH1TransportDrainOnClose(t *testing.T) {
	cases := []struct {
		name  string
		after int // bytes the server sends after the end marker, once the client closed
		reuse bool
	}{
		{"terminator after close", 0, true},
		{"more than drainMax after close", drainMax + 4096, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			closed := make(chan struct{})
			gone := make(chan struct{}, 2)
			srv := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/next" {
					_, _ = io.WriteString(w, "ok")
					return
				}
				_, _ = io.WriteString(w, "data: [DONE]\n\n")
				w.(http.Flusher).Flush()
				<-closed
				for sent := 0; sent < c.after; sent += 1024 {
					if _, err := w.Write(make([]byte, 1024)); err != nil {
						break
					}
					w.(http.Flusher).Flush()
				}
				if c.after > 0 {
					<-r.Context().Done()
					gone <- struct{}{}
				}
			})
			tr, client := newTestH1(t, TransportOptions{})
			resp, err := client.Get(srv.URL)
			require.NoError(t, err)
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "data: [DONE]\n", line)
			require.NoError(t, resp.Body.Close())
			close(closed)
			if !c.reuse {
				<-gone // the transport closed the connection
				assert.Equal(t, 0, tr.idleCount())
				return
			}
			waitIdle(t, tr, 1)
			resp, err = client.Get(srv.URL + "/next")
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, "ok", string(b))
			assert.Equal(t, int32(1), srv.conns.Load())
		})
	}
}

// TestGatewayReusesUpstreamConns: streamed and complete answers through the
// gateway leave the upstream connection pooled for the next request, also
// when the upstream sends the chunked terminator after its end marker.
func TestGatewayReusesUpstreamConns(t *testing.T) {
	up := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
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
	})
	cfg, err := ParseConfig("reuse.yaml", []byte(`version: 1
providers:
  - {name: alpha, kind: openai, base_url: "`+up.URL+`/v1"}
routes:
  - name: chat
    targets: [{provider: alpha, model: gpt-4o}]
cache: {max_entries: -1}
`), LoadOptions{})
	require.NoError(t, err)
	srv, err := New(cfg, Options{Events: events.Discard, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	gws := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { gws.Close(); _ = srv.Close() })
	tr := srv.trs[ProtocolAuto].(*h1Transport)
	for i := range 6 {
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
		waitIdle(t, tr, 1)
	}
	assert.Equal(t, int32(1), up.conns.Load(), "one upstream connection for every request")
}

// TestH1TransportIdleTimeout: a connection idle for IdleConnTimeout is
// closed and leaves the pool; the next request dials a new one.
func TestH1TransportIdleTimeout(t *testing.T) {
	var closed atomic.Int32
	srv := &h1Server{Server: httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))}
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			srv.conns.Add(1)
		case http.StateClosed:
			closed.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	tr, client := newTestH1(t, TransportOptions{IdleConnTimeout: 5 * time.Millisecond})
	get := func() {
		t.Helper()
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	get()
	waitIdle(t, tr, 0)
	for i := 0; closed.Load() == 0 && i < 2000; i++ {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, int32(1), closed.Load(), "the server saw the idle connection closed")
	get()
	assert.Equal(t, int32(2), srv.conns.Load())
}
