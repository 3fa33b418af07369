package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// HTTP/1.1 has no way to tell which answer belongs to which request: an
// upstream that sends bytes after an answer's end (an extra "answer", by
// malice or by a broken proxy) has them read as the answer to the next
// request on that connection — another client's. net/http's Transport
// reads an idle connection all the time and closes one that receives bytes
// while no request is in flight on it; what it cannot see is bytes that
// arrive after the connection was handed the next request.
//
// An HTTP/1.1 connection therefore takes a new request only once it has
// been quiet (no byte received) for TransportOptions.ReuseQuiet since the
// last byte of its previous answer; bytes the upstream sends within that
// time close it, and never reach another request. HTTP/2 connections
// (their streams are numbered) are not concerned.
//
// Cleartext (http://) connections are spread over slots, each a net/http
// Transport keeping one connection alive (plainTransport,
// upstream_pool.go): a request goes to the slot whose connection has been
// quiet the longest, when that is ReuseQuiet or more, else to a new one.
//
// Over TLS, where HTTP/2 is the rule, a connection that negotiated
// HTTP/1.1 stays in net/http's pool, wrapped in quietConn. Either way,
// bytes the upstream sends while a connection is idle reach the
// Transport's read loop, which closes it. A
// connection younger than ReuseQuiet refuses the request before writing a
// byte of it: the Transport closes it and sends the request on another
// connection (a retry net/http makes for a reused connection that wrote
// nothing; the request body is replayable). net/http may hand a
// connection straight to a waiting request and read bytes already there
// (or arriving in that instant) as its answer before the request is
// refused, or even before it is written: upstream.do discards an answer
// read on a connection that had not started sending the request
// (quietConn.requestsSent) and sends the request again.
//
// What no rule at this level can tell apart is an extra answer that
// arrives after the next request was written; the quiet time makes the
// upstream wait for that. The price is reuse: a connection is reused only
// when requests to its upstream come no faster than the pool holds
// connections per ReuseQuiet (MaxIdleConnsPerHost, 256 per 250 ms by
// default); beyond that a request dials (BenchmarkFloor's dial figures,
// BenchmarkUpstreamReuse).

// DefaultReuseQuiet is TransportOptions.ReuseQuiet's default.
const DefaultReuseQuiet = 250 * time.Millisecond

// errNotQuiet is a reused HTTP/1.1 connection refusing a request because
// it received bytes less than ReuseQuiet ago.
var errNotQuiet = errors.New("upstream connection not quiet since its last answer: retired")

// errUnsolicited is an answer read on a connection that refused to send
// the request: bytes the upstream sent unasked.
var errUnsolicited = errors.New("unsolicited answer on a connection that did not send the request")

// quietConn is an HTTP/1.1 upstream connection that records when it last
// received bytes (see above).
type quietConn struct {
	net.Conn
	quiet    time.Duration
	lastRead atomic.Int64  // Unix nanoseconds of the last read that returned bytes; 0: none yet
	writing  atomic.Bool   // a request is being written (its first Write passed the check)
	sent     atomic.Uint64 // requests whose first Write passed the check
	closed   atomic.Bool   // Close was called
}

// requestsSent is how many requests c started to send. An answer read on c
// while it did not grow (from before net/http handed c a request until the
// answer came) answers nothing that request sent: bytes the upstream sent
// unasked.
func (c *quietConn) requestsSent() uint64 { return c.sent.Load() }

func (c *quietConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.lastRead.Store(time.Now().UnixNano())
		c.writing.Store(false) // an answer is arriving: the next Write starts a new request
	}
	return n, err
}

func (c *quietConn) Write(p []byte) (int, error) {
	if !c.writing.Load() {
		if last := c.lastRead.Load(); last != 0 && time.Since(time.Unix(0, last)) < c.quiet {
			_ = c.Conn.Close()
			return 0, errNotQuiet
		}
		c.writing.Store(true)
		c.sent.Add(1)
	}
	return c.Conn.Write(p)
}

// Close closes c and notes it (a slot whose connection is closed dials a
// new one, plainTransport).
func (c *quietConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// quietTry follows one round trip's HTTP/1.1 connection (its GotConn
// trace hook) to tell whether what the round trip read came before its
// request was sent on that connection.
type quietTry struct {
	conn atomic.Pointer[quietConn] // the connection of net/http's last try
	sent atomic.Uint64             // its requestsSent when handed over
}

func (t *quietTry) gotConn(i httptrace.GotConnInfo) {
	qc, _ := i.Conn.(*quietConn)
	if qc != nil {
		t.sent.Store(qc.requestsSent())
	}
	t.conn.Store(qc)
}

// unsent reports whether the round trip ended on a quietConn that started
// sending no request since it was handed over: what was read on it is no
// answer to this request, which was not sent. A nil t is false.
func (t *quietTry) unsent() bool {
	if t == nil {
		return false
	}
	qc := t.conn.Load()
	return qc != nil && qc.requestsSent() == t.sent.Load()
}

// quietDialTLS dials TLS with ALPN protos itself (Transport.DialTLSContext):
// a connection that negotiated HTTP/2 is returned as the *tls.Conn the
// Transport needs to speak HTTP/2 on it; an HTTP/1.1 one is wrapped in
// quietConn.
func quietDialTLS(dial func(ctx context.Context, network, addr string) (net.Conn, error), cfg *tls.Config, protos []string, handshake, quiet time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := cfg.Clone()
		if c == nil {
			c = &tls.Config{}
		}
		if c.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			c.ServerName = host
		}
		if len(c.NextProtos) == 0 {
			c.NextProtos = protos
		}
		tc := tls.Client(raw, c)
		hctx, cancel := context.WithTimeout(ctx, handshake)
		defer cancel()
		if err := tc.HandshakeContext(hctx); err != nil {
			_ = raw.Close()
			return nil, err
		}
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			return tc, nil
		}
		return &quietConn{Conn: tc, quiet: quiet}, nil
	}
}
