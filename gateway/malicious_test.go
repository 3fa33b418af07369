package gateway_test

// Malicious upstreams: raw TCP servers on loopback that break HTTP on
// purpose, one test per case. Each sits in front of a well-behaved fallback
// (or alone), and the tests check what the client sees, the class of the
// attempt, and what happened to the connection.

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
)

// rawUpstream is a loopback TCP server that reads HTTP requests and answers
// each with answer, which writes whatever bytes it likes to the connection.
// answer returns false to stop serving the connection (it is then closed).
type rawUpstream struct {
	ln    net.Listener
	url   string
	conns atomic.Int32
	// closed receives the number of requests a connection carried when the
	// gateway closed it (the server read end of stream).
	closed chan int
	wg     sync.WaitGroup
	mu     sync.Mutex
	open   []net.Conn
}

// stop closes the listener and every connection, and waits for them.
func (u *rawUpstream) stop() {
	_ = u.ln.Close()
	u.mu.Lock()
	for _, c := range u.open {
		_ = c.Close()
	}
	u.mu.Unlock()
	u.wg.Wait()
}

func startRaw(t *testing.T, answer func(n int, req *http.Request, c net.Conn) bool) *rawUpstream {
	t.Helper()
	return startRawTLS(t, nil, answer)
}

// startRawTLS is startRaw over TLS with cfg (nil: cleartext).
func startRawTLS(t *testing.T, cfg *tls.Config, answer func(n int, req *http.Request, c net.Conn) bool) *rawUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	scheme := "http://"
	if cfg != nil {
		ln, scheme = tls.NewListener(ln, cfg), "https://"
	}
	u := &rawUpstream{ln: ln, url: scheme + ln.Addr().String(), closed: make(chan int, 64)}
	u.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.conns.Add(1)
			u.mu.Lock()
			u.open = append(u.open, c)
			u.mu.Unlock()
			u.wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for n := 0; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						if err == io.EOF || strings.Contains(err.Error(), "reset") {
							select {
							case u.closed <- n:
							default:
							}
						}
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if !answer(n, req, c) {
						return
					}
				}
			})
		}
	})
	t.Cleanup(u.stop)
	return u
}

// completion is an OpenAI chat completion answer with text, as HTTP/1.1
// bytes; chunk is the same as a stream.
func completion(text string) string {
	body := `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":` +
		strconv.Quote(text) + `},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`
	return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

func streamAnswer(text string) string {
	body := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":` +
		strconv.Quote(text) + `},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// answerFor is a well-formed answer with text, streamed or not as asked.
func answerFor(req *http.Request, text string) string {
	if strings.Contains(req.Header.Get("Accept"), "event-stream") {
		return streamAnswer(text)
	}
	return completion(text)
}

// goodUpstream is a well-behaved OpenAI-style upstream that answers "fine".
func goodUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := answerFor(r, "fine")
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(raw)), r)
		if err != nil {
			panic(err)
		}
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(s.Close)
	return s
}

// badGateway is a gateway whose route chat sends to bad first and, unless
// alone, fails over to a good upstream.
// failsOverOnProtocolError sends one request through a gateway whose
// primary is the upstream at bad: the answer is the fallback's, after one
// protocol_error attempt on bad, whose attempt.end it returns.
func failsOverOnProtocolError(t *testing.T, bad string, stream bool) events.Event {
	t.Helper()
	g := badGateway(t, bad, false)
	r := g.do(t, stream, nil)
	require.Equal(t, 200, r.status, r.body)
	assert.Equal(t, "fine", r.text)
	ends := attemptEnds(g.log, "bad:gpt-4o")
	require.Len(t, ends, 1)
	assert.Equal(t, "protocol_error", ends[0].Class)
	return ends[0]
}

func badGateway(t *testing.T, bad string, alone bool) *gw {
	t.Helper()
	text := `version: 1
providers:
  - {name: bad, kind: openai, base_url: "` + bad + `/v1"}
`
	targets := `
      - {provider: bad, model: gpt-4o, tier: primary, retry: {attempts: 1}, timeouts: {first_token: 5s, idle: 5s, total: 10s}}`
	if !alone {
		text += `  - {name: good, kind: openai, base_url: "` + goodUpstream(t).URL + `/v1"}
`
		targets += `
      - {provider: good, model: gpt-4o-mini, tier: equivalent}`
	}
	text += `routes:
  - name: chat
    tiers: [primary, equivalent]
    targets:` + targets + `
policy:
  breaker: {min_samples: 1000}
cache: {max_entries: -1}
`
	cfg, err := gateway.ParseConfig("bad.yaml", []byte(text), gateway.LoadOptions{})
	require.NoError(t, err)
	return startGateway(t, cfg, gateway.Options{Logger: discardLogger()})
}

// attemptEnds returns the attempt.end events of target.
func attemptEnds(log *events.Log, target string) []events.Event {
	var out []events.Event
	for _, e := range log.Events() {
		if e.Kind == events.AttemptEnd && e.Target == target {
			out = append(out, e)
		}
	}
	return out
}

// TestUpstreamLateBytes: an upstream that sends a whole extra answer 30 ms
// after each answer. The connection received bytes after its answer: it is
// never reused. When the next request (sharing the host:port), sent after a
// pause longer than ReuseQuiet, looks for a connection, it finds the bytes
// waiting, closes that connection and goes out on a new one, and gets its
// own answer, never the injected one.
func TestUpstreamLateBytes(t *testing.T) {
	for _, extra := range []struct{ name, bytes string }{
		{"injected answer", completion("INJECTED")},
		{"garbage", "\x00\x01garbage that is not HTTP\r\n\r\n"},
	} {
		t.Run(extra.name, func(t *testing.T) {
			written := make(chan struct{}, 1)
			up := startRaw(t, func(n int, req *http.Request, c net.Conn) bool {
				if _, err := io.WriteString(c, answerFor(req, "real "+strconv.Itoa(n))); err != nil {
					return false
				}
				time.Sleep(30 * time.Millisecond)
				_, _ = io.WriteString(c, extra.bytes)
				written <- struct{}{}
				return true
			})
			g := badGateway(t, up.url, true)
			const requests = 4
			for i := range requests {
				if i > 0 {
					// Pacing, not timing: the previous connection is now old
					// enough to be reused, were it not for the extra bytes.
					time.Sleep(gateway.DefaultReuseQuiet + 50*time.Millisecond)
				}
				r := g.do(t, i%2 == 1, nil)
				require.Equal(t, 200, r.status, r.body)
				assert.Equal(t, "real 0", r.text, "request %d", i)
				<-written
				if i == 0 {
					continue
				}
				// The request closed the previous connection, which had
				// bytes waiting: the upstream reads the end of it.
				select {
				case n := <-up.closed:
					assert.Equal(t, 1, n, "requests on the closed connection")
				case <-time.After(10 * time.Second):
					t.Fatal("the connection that received extra bytes was not closed by the next request")
				}
			}
			assert.Equal(t, int32(requests), up.conns.Load(), "one connection per request")
			for _, e := range attemptEnds(g.log, "bad:gpt-4o") {
				assert.Equal(t, "ok", e.Class)
			}
		})
	}
}

// TestUpstreamGiantHeader: an upstream whose answer header is one endless
// line. The gateway reads a bounded amount (the header limit), fails the
// attempt as a protocol_error, closes the connection and fails over: the
// upstream cannot push more than the limit plus socket buffers.
func TestUpstreamGiantHeader(t *testing.T) {
	for _, stream := range both {
		t.Run(strconv.FormatBool(stream), func(t *testing.T) {
			const max = 64 << 20
			var sent atomic.Int64
			up := startRaw(t, func(_ int, _ *http.Request, c net.Conn) bool {
				if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Giant: "); err != nil {
					return false
				}
				line := []byte(strings.Repeat("a", 64<<10))
				for sent.Load() < max {
					n, err := c.Write(line)
					sent.Add(int64(n))
					if err != nil {
						return false
					}
				}
				return false
			})
			failsOverOnProtocolError(t, up.url, stream)
			up.stop()
			assert.Less(t, sent.Load(), int64(max/2), "bytes the upstream could push")
		})
	}
}

// TestUpstreamInformationalFlood: an upstream that answers with 103 Early
// Hints without end. 1xx answers count toward the header limit: the
// attempt is a protocol_error after a bounded number of them.
func TestUpstreamInformationalFlood(t *testing.T) {
	const max = 1_000_000
	var sent atomic.Int64
	up := startRaw(t, func(_ int, _ *http.Request, c net.Conn) bool {
		hint := []byte("HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n")
		batch := []byte(strings.Repeat(string(hint), 100))
		for sent.Load() < max {
			if _, err := c.Write(batch); err != nil {
				return false
			}
			sent.Add(100)
		}
		return false
	})
	failsOverOnProtocolError(t, up.url, true)
	up.stop()
	assert.Less(t, sent.Load(), int64(max/2), "103 answers the upstream could push")
}

// TestUpstreamSwitchingProtocols: a 101 is never forwarded: the attempt is a
// protocol_error that fails over, the connection is closed (the upstream
// reads its end) and the next request opens a new one. Alone on its route,
// the client gets an error in its API's shape, not the 101.
func TestUpstreamSwitchingProtocols(t *testing.T) {
	for _, c := range []struct{ name, answer string }{
		{"upgrade", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"},
		{"bare", "HTTP/1.1 101 Switching Protocols\r\n\r\n"},
	} {
		for _, stream := range both {
			t.Run(fmt.Sprintf("%s/stream=%v", c.name, stream), func(t *testing.T) {
				up := startRaw(t, func(_ int, _ *http.Request, conn net.Conn) bool {
					_, err := io.WriteString(conn, c.answer+"switched-protocol bytes")
					return err == nil
				})
				g := badGateway(t, up.url, false)
				for i := range 2 {
					r := g.do(t, stream, nil)
					require.Equal(t, 200, r.status, r.body)
					assert.Equal(t, "fine", r.text)
					assert.Equal(t, "good:gpt-4o-mini", r.header.Get(gateway.HeaderTarget))
					select {
					case n := <-up.closed:
						assert.Equal(t, 1, n)
					case <-time.After(10 * time.Second):
						t.Fatal("the connection stayed open after a 101")
					}
					assert.Equal(t, int32(i+1), up.conns.Load(), "a new connection for each request")
				}
				for _, e := range attemptEnds(g.log, "bad:gpt-4o") {
					assert.Equal(t, "protocol_error", e.Class)
					assert.Equal(t, 101, e.Status)
				}

				alone := badGateway(t, up.url, true)
				r := alone.do(t, stream, nil)
				assert.Equal(t, 503, r.status)
				assert.Contains(t, r.body, `"error"`)
				assert.Contains(t, r.body, "protocol_error")
				assert.NotContains(t, r.body, "switched-protocol")
			})
		}
	}
}

// TestUpstreamRedirect: a 302 is not followed and not forwarded: a
// protocol_error that fails over.
func TestUpstreamRedirect(t *testing.T) {
	var followed atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		followed.Add(1)
		_, _ = io.WriteString(w, completion("FOLLOWED"))
	}))
	t.Cleanup(elsewhere.Close)
	up := startRaw(t, func(_ int, _ *http.Request, c net.Conn) bool {
		body := "<a href=\"" + elsewhere.URL + "\">moved</a>"
		_, err := io.WriteString(c, "HTTP/1.1 302 Found\r\nLocation: "+elsewhere.URL+"/v1/chat/completions\r\nContent-Length: "+
			strconv.Itoa(len(body))+"\r\n\r\n"+body)
		return err == nil
	})
	for _, stream := range both {
		t.Run(strconv.FormatBool(stream), func(t *testing.T) {
			end := failsOverOnProtocolError(t, up.url, stream)
			assert.Equal(t, 302, end.Status)

			alone := badGateway(t, up.url, true)
			r := alone.do(t, stream, nil)
			assert.Equal(t, 503, r.status)
			assert.Empty(t, r.header.Get("Location"))
			assert.NotContains(t, r.body, "moved")
		})
	}
	assert.Zero(t, followed.Load(), "requests that followed the redirect")
}

// TestUpstreamGarbage: an answer that is not HTTP at all is a
// protocol_error that fails over.
func TestUpstreamGarbage(t *testing.T) {
	for _, c := range []struct{ name, answer string }{
		{"not http", "SSH-2.0-OpenSSH_9.6\r\n\r\n"},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n"},
		{"bad header line", "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := startRaw(t, func(_ int, _ *http.Request, conn net.Conn) bool {
				_, _ = io.WriteString(conn, c.answer)
				return false
			})
			failsOverOnProtocolError(t, up.url, false)
		})
	}
}

// TestUpstreamStatusClasses: statuses outside the classic lists fail over
// by class (a 499 from the primary is not the client going away), or are
// the final error in the client's API shape when the class says so.
func TestUpstreamStatusClasses(t *testing.T) {
	tests := []struct {
		status   int
		class    string
		failover bool
	}{
		{499, "upstream_canceled", true},
		{402, "rejected", true},
		{405, "rejected", true},
		{409, "rejected", true},
		{451, "rejected", true},
		{501, "server_error", false},
	}
	for _, tt := range tests {
		for _, stream := range both {
			t.Run(fmt.Sprintf("%d/stream=%v", tt.status, stream), func(t *testing.T) {
				up := startRaw(t, func(_ int, _ *http.Request, c net.Conn) bool {
					body := `{"error":{"message":"upstream says no","type":"server_error"}}`
					_, err := io.WriteString(c, "HTTP/1.1 "+strconv.Itoa(tt.status)+" X\r\nContent-Type: application/json\r\nContent-Length: "+
						strconv.Itoa(len(body))+"\r\n\r\n"+body)
					return err == nil
				})
				g := badGateway(t, up.url, false)
				r := g.do(t, stream, nil)
				ends := attemptEnds(g.log, "bad:gpt-4o")
				require.NotEmpty(t, ends)
				for _, e := range ends {
					assert.Equal(t, tt.class, e.Class)
				}
				if tt.failover {
					require.Equal(t, 200, r.status, r.body)
					assert.Equal(t, "fine", r.text)
					return
				}
				assert.Equal(t, tt.status, r.status)
				var e struct {
					Error struct{ Message string } `json:"error"`
				}
				require.NoError(t, json.Unmarshal([]byte(r.body), &e), r.body)
				assert.Equal(t, "upstream says no", e.Error.Message)
			})
		}
	}
}
