package gateway

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// plainTransport carries the requests to cleartext (http://) HTTP/1.1
// upstreams (Transport registers it for the scheme). It is net/http's
// Transport with its own pooling turned off (MaxIdleConnsPerHost < 0: it
// closes a connection after each answer, without asking the upstream to)
// and a connPool in its place, which hands a connection out again only
// under the quiet rule (see upstream_conn.go). net/http's pool hands out
// the connection that finished last, which is too young whenever requests
// come faster than one per ReuseQuiet; the connPool hands out the one that
// has been quiet longest.
type plainTransport struct {
	outer *http.Transport
	pool  *connPool
	once  sync.Once
	inner *http.Transport
}

func (p *plainTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p.once.Do(func() {
		// Cloned at first use: what was set on the outer transport until
		// then (a proxy, a dialer) holds here too.
		p.inner = p.outer.Clone()
		p.inner.MaxIdleConnsPerHost = -1
		var protos http.Protocols
		protos.SetHTTP1(true)
		p.inner.Protocols = &protos
		dial := p.outer.DialContext
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		p.inner.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if c := p.pool.get(addr, time.Now()); c != nil {
				return c, nil
			}
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &quietConn{Conn: c, quiet: p.pool.quiet, pool: p.pool, addr: addr}, nil
		}
	})
	// The connection the request went out on (the last, when net/http
	// retried on another): its answer's body says whether it may be
	// reused (reuseOnEOF).
	var conn atomic.Pointer[quietConn]
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		qc, _ := i.Conn.(*quietConn)
		conn.Store(qc)
	}}
	resp, err := p.inner.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	qc := conn.Load()
	if err != nil {
		if qc != nil {
			qc.spoil()
		}
		return nil, err
	}
	if qc != nil {
		s := resp.StatusCode
		resp.Body = &reuseOnEOF{ReadCloser: resp.Body, c: qc, final: !resp.Close && s >= 200 && s < 600 && (s < 300 || s >= 400)}
	}
	return resp, nil
}

// connPool keeps the cleartext HTTP/1.1 connections whose last answer was
// read to its end, oldest first, and hands one out once it has received
// nothing for quiet since that answer and has nothing waiting to be read
// (quietSocket): bytes an upstream sends after an answer close the
// connection instead of answering the next request.
type connPool struct {
	quiet time.Duration // the quiet rule (ReuseQuiet)
	idle  time.Duration // a connection idle longer is closed (IdleConnTimeout)
	max   int           // connections kept per address (MaxIdleConnsPerHost)

	mu     sync.Mutex
	conns  map[string][]*quietConn // per address, in the order they were let go
	closed bool
}

func newConnPool(quiet, idle time.Duration, max int) *connPool {
	return &connPool{quiet: quiet, idle: idle, max: max, conns: map[string][]*quietConn{}}
}

// put takes c, which net/http let go: false when the pool is full or
// closed (the caller closes c). Whether c's answer was read to its end may
// be known only a moment later (quietConn.answered): get decides then.
func (p *connPool) put(c *quietConn) bool {
	// A reader still blocked on the connection (net/http closes a
	// connection on errors while its read loop waits) returns at once;
	// get clears the deadline when it hands the connection out.
	if c.Conn.SetReadDeadline(aLongTimeAgo) != nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.conns[c.addr]
	if p.closed || len(q) >= p.max {
		return false
	}
	p.conns[c.addr] = append(q, c)
	return true
}

var aLongTimeAgo = time.Unix(1, 0)

// get returns a connection to addr that may carry a new request, in a
// new quietConn, or nil. Connections it finds unfit on the way (answer not
// read to its end, idle too long, bytes or an end of stream waiting) are
// closed.
func (p *connPool) get(addr string, now time.Time) net.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.conns[addr]
	i := 0
	var found *quietConn
	for ; i < len(q); i++ {
		c := q[i]
		if !c.answered.Load() || c.reading.Load() {
			if now.Sub(c.parked) < p.quiet {
				break // maybe still finishing; the ones after it are younger
			}
			_ = c.Conn.Close()
			continue
		}
		age := now.Sub(time.Unix(0, c.lastRead.Load()))
		if age < p.quiet {
			break // connections are let go in about the order their answers end
		}
		if age > p.idle || !quietSocket(c.Conn) || c.Conn.SetReadDeadline(time.Time{}) != nil {
			_ = c.Conn.Close()
			continue
		}
		found = c
		i++
		break
	}
	if i > 0 {
		n := copy(q, q[i:])
		clear(q[n:])
		p.conns[addr] = q[:n]
	}
	if found == nil {
		return nil
	}
	nc := &quietConn{Conn: found.Conn, quiet: p.quiet, pool: p, addr: addr}
	nc.lastRead.Store(found.lastRead.Load())
	return nc
}

// closeIdle closes every kept connection, and those let go from now on.
func (p *connPool) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, q := range p.conns {
		for _, c := range q {
			_ = c.Conn.Close()
		}
		delete(p.conns, addr)
	}
	p.closed = true
}

// reuseOnEOF is the body of an answer on a pooled connection: reading it
// to its end is what lets the pool hand the connection out again; closing
// it before that closes the connection.
type reuseOnEOF struct {
	io.ReadCloser
	c     *quietConn
	final bool // the answer is a final one (2xx, 4xx, 5xx), not a 101
}

func (r *reuseOnEOF) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err == io.EOF && r.final {
		r.c.answered.Store(true)
	}
	return n, err
}

func (r *reuseOnEOF) Close() error {
	err := r.ReadCloser.Close()
	if !r.c.answered.Load() {
		r.c.spoil()
	}
	return err
}
