package gateway

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
)

// BenchmarkUpstreamReuse is one small request and answer on loopback
// HTTP/1.1 through the upstream transport, back to back: with the quiet
// rule (a connection younger than ReuseQuiet since its last answer is not
// handed out: here every request dials) and with net/http's own reuse.
// "quiet-idle" waits past a short ReuseQuiet between requests, so the
// gateway hands the connection out again (no dial); against
// "net-http-idle" it measures what the slots (plainTransport) cost.
func BenchmarkUpstreamReuse(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`)
	}))
	defer srv.Close()
	run := func(b *testing.B, o TransportOptions, pause time.Duration) {
		tr := NewTransport(ProtocolHTTP1, o)
		tr.Proxy = nil
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr}
		ctx := b.Context()
		var dials atomic.Int64
		dial := tr.DialContext
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return dial(ctx, network, addr)
		}
		b.ReportAllocs()
		for b.Loop() {
			if pause > 0 {
				b.StopTimer()
				time.Sleep(pause)
				b.StartTimer()
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"model":"m","messages":[]}`))
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		b.ReportMetric(float64(dials.Load())/float64(b.N), "dials/op")
	}
	b.Run("quiet", func(b *testing.B) { run(b, TransportOptions{}, 0) })
	b.Run("net-http", func(b *testing.B) { run(b, TransportOptions{ReuseQuiet: -1}, 0) })
	b.Run("quiet-idle", func(b *testing.B) { run(b, TransportOptions{ReuseQuiet: time.Millisecond}, 2*time.Millisecond) })
	b.Run("net-http-idle", func(b *testing.B) { run(b, TransportOptions{ReuseQuiet: -1}, 2*time.Millisecond) })
}

// TestQuietConnRetires: back-to-back requests to an HTTP/1.1 upstream over
// TLS (bodies larger than the connection's write buffer) each go out on a
// new connection, the young one retired without a failed request; after a
// quiet pause the connection is reused. (Cleartext upstreams:
// TestCleartextQuietReuse.)
func TestQuietConnRetires(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS() // HTTP/1.1 only: httptest enables no HTTP/2
	defer srv.Close()
	tlsCfg := srv.Client().Transport.(*http.Transport).TLSClientConfig
	run := func(quiet, pause time.Duration) int64 {
		before := conns.Load()
		tr := NewTransport(ProtocolAuto, TransportOptions{ReuseQuiet: quiet, TLSConfig: tlsCfg})
		tr.Proxy = nil
		defer tr.CloseIdleConnections()
		u := newUpstream(&Provider{Name: "p", Kind: KindOpenAI, BaseURL: srv.URL + "/v1"}, tr)
		for range 4 {
			time.Sleep(pause)
			req := &llm.Request{Model: "m", MaxTokens: 5, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(strings.Repeat("x", 4000))}}}}
			hr, err := u.newRequest(t.Context(), req, "r")
			require.NoError(t, err)
			resp, err := u.do(hr)
			require.NoError(t, err, "a retired connection fails no request")
			require.Equal(t, 1, resp.ProtoMajor)
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		return conns.Load() - before
	}
	// Sleeping is not timing here: a pause always outlasts a 1 ms quiet,
	// and back-to-back requests never a 10 s one.
	require.Equal(t, int64(4), run(10*time.Second, 0), "each young connection retired")
	require.Equal(t, int64(1), run(time.Millisecond, 20*time.Millisecond), "a quiet connection is reused")
}

// TestCleartextQuietReuse: a cleartext HTTP/1.1 upstream's connection
// carries another request only once it was quiet for ReuseQuiet after its
// answer (plainTransport): reused after a quiet pause, replaced back to back,
// and closed, never reused, when the upstream sent bytes after an answer
// or closed its side; no request fails for it.
func TestCleartextQuietReuse(t *testing.T) {
	const answer = `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`
	for _, tc := range []struct {
		name         string
		quiet, pause time.Duration
		extra        string // written 5 ms after each answer
		hangUp       bool   // the upstream closes its side after each answer (without saying so)
		conns        int64
	}{
		{"clean answers, quiet pause", time.Millisecond, 30 * time.Millisecond, "", false, 1},
		{"back to back", 10 * time.Second, 0, "", false, 3},
		{"extra bytes after an answer", time.Millisecond, 30 * time.Millisecond, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno", false, 3},
		{"garbage after an answer", time.Millisecond, 30 * time.Millisecond, "\x00garbage", false, 3},
		{"upstream hangs up after an answer", time.Millisecond, 30 * time.Millisecond, "", true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			var conns atomic.Int64
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					conns.Add(1)
					go func() {
						defer c.Close()
						br := bufio.NewReader(c)
						for {
							req, err := http.ReadRequest(br)
							if err != nil {
								return
							}
							_, _ = io.Copy(io.Discard, req.Body)
							if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(answer))+"\r\n\r\n"+answer); err != nil {
								return
							}
							if tc.extra != "" {
								time.Sleep(5 * time.Millisecond)
								_, _ = io.WriteString(c, tc.extra)
							}
							if tc.hangUp {
								return
							}
						}
					}()
				}
			}()
			tr := NewTransport(ProtocolAuto, TransportOptions{ReuseQuiet: tc.quiet})
			tr.Proxy = nil
			defer tr.CloseIdleConnections()
			u := newUpstream(&Provider{Name: "p", Kind: KindOpenAI, BaseURL: "http://" + ln.Addr().String() + "/v1"}, tr)
			for range 3 {
				// Sleeping is not timing here: a 30 ms pause always outlasts a
				// 1 ms quiet, and back-to-back requests never a 10 s one.
				time.Sleep(tc.pause)
				hr, err := u.newRequest(t.Context(), &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}}}, "r")
				require.NoError(t, err)
				require.False(t, hr.Close, "a cleartext request does not ask the upstream to close")
				resp, err := u.do(hr)
				require.NoError(t, err, "a retired connection fails no request")
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				require.JSONEq(t, answer, string(body))
			}
			require.Equal(t, tc.conns, conns.Load())
		})
	}
}

// TestCleartextReuseNeedsWholeAnswer: a cleartext connection is reused
// (after ReuseQuiet) only when its answer was read to its end, error
// answers included; one whose body was closed early, or that answered
// with a 101, is closed.
func TestCleartextReuseNeedsWholeAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		read   int // bytes of the body read before closing it; -1: all
		conns  int64
	}{
		{"whole answer", 200, -1, 1},
		{"whole error answer", 429, -1, 1},
		{"body closed early", 200, 10, 2},
		{"switching protocols", 101, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var conns atomic.Int64
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if tc.status == 101 {
					w.Header().Set("Connection", "Upgrade")
					w.Header().Set("Upgrade", "x")
					w.WriteHeader(101)
					return
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, strings.Repeat("answer ", 2000))
			}))
			srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			tr := NewTransport(ProtocolAuto, TransportOptions{ReuseQuiet: time.Millisecond})
			tr.Proxy = nil
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			for range 2 {
				// Pacing: 20 ms outlasts the 1 ms quiet.
				time.Sleep(20 * time.Millisecond)
				resp, err := c.Post(srv.URL, "application/json", strings.NewReader("{}"))
				require.NoError(t, err)
				if tc.read < 0 {
					_, _ = io.Copy(io.Discard, resp.Body)
				} else {
					_, _ = io.CopyN(io.Discard, resp.Body, int64(tc.read))
				}
				_ = resp.Body.Close()
			}
			require.Equal(t, tc.conns, conns.Load())
		})
	}
}
