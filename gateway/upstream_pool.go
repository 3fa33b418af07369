package gateway

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// plainTransport carries the requests to cleartext (http://) HTTP/1.1
// upstreams (Transport registers it for the scheme). net/http's Transport
// keeps connections alive, but hands out the one whose answer ended last,
// which is too young for the quiet rule (see upstream_conn.go) whenever
// requests to an upstream come faster than one per ReuseQuiet: each would
// be refused, and every request would dial.
//
// So the connections to an upstream are spread over slots. A slot is a
// net/http Transport of its own that keeps at most one connection alive,
// and carries one request at a time. A request goes to the free slot whose
// connection has been quiet the longest, once that is ReuseQuiet or more,
// and to a new slot (a new connection) when none has been. A kept
// connection stays net/http's: its reader, writer and read loop live on
// between requests (nothing is rebuilt per request), and the read loop
// closes a connection that receives bytes, or an end of stream, while it
// is idle. The quietConn under it refuses a request when bytes came after
// all in the moment before it was sent (net/http then sends it on a new
// connection).
//
// An upstream has at most max slots (MaxIdleConnsPerHost); a request that
// finds every one busy or too young beyond that goes out on a connection
// of its own, closed after its answer (overflow).
type plainTransport struct {
	outer *http.Transport
	quiet time.Duration // the quiet rule (ReuseQuiet)
	max   int           // slots per upstream address (MaxIdleConnsPerHost)

	mu     sync.Mutex
	free   map[string][]*slot // per address, the free slots in the order they were let go
	slots  map[string][]*slot // per address, every slot
	closed bool               // CloseIdleConnections was called

	once     sync.Once
	overflow *http.Transport // no keep-alive: one connection per request
}

// slot is one of plainTransport's net/http Transports, for one address.
type slot struct {
	tr   *http.Transport
	conn atomic.Pointer[quietConn] // the connection it dialed last (the one its requests go out on)
}

// idle reports whether s may take a request at now: its connection has
// been quiet for quiet, or it has none (a new one is dialed).
func (s *slot) idle(now time.Time, quiet time.Duration) bool {
	c := s.conn.Load()
	if c == nil || c.closed.Load() {
		return true
	}
	last := c.lastRead.Load()
	return last == 0 || now.Sub(time.Unix(0, last)) >= quiet
}

func newPlainTransport(outer *http.Transport, quiet time.Duration, max int) *plainTransport {
	return &plainTransport{outer: outer, quiet: quiet, max: max, free: map[string][]*slot{}, slots: map[string][]*slot{}}
}

// clone is a Transport cloned from the outer one (what was set on it until
// then, a proxy, a dialer, holds here too), speaking HTTP/1.1 and keeping
// keep connections alive per host (negative: none). It dials with the
// outer dialer, wraps each connection in a quietConn and hands it to
// dialed (nil: nobody).
func (p *plainTransport) clone(keep int, dialed func(*quietConn)) *http.Transport {
	dial := p.outer.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t := p.outer.Clone()
	t.MaxIdleConnsPerHost = keep
	t.MaxIdleConns = 0
	var protos http.Protocols
	protos.SetHTTP1(true)
	t.Protocols = &protos
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		qc := &quietConn{Conn: c, quiet: p.quiet}
		if dialed != nil {
			dialed(qc)
		}
		return qc, nil
	}
	return t
}

func (p *plainTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	addr := req.URL.Host
	s := p.get(addr, time.Now())
	if s == nil {
		p.once.Do(func() { p.overflow = p.clone(-1, nil) })
		return p.overflow.RoundTrip(req)
	}
	resp, err := s.tr.RoundTrip(req)
	if err != nil {
		p.put(addr, s)
		return nil, err
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// The body is the connection itself, the caller's now (and a
		// ReadWriteCloser, which a wrapper would hide).
		s.conn.Store(nil)
		p.put(addr, s)
		return resp, nil
	}
	resp.Body = &slotBody{ReadCloser: resp.Body, p: p, s: s, addr: addr}
	return resp, nil
}

// get takes the free slot of addr that may carry a request now (the first
// let go, when its connection is quiet or closed), or a new slot; nil when
// addr has max slots and none is free and quiet.
func (p *plainTransport) get(addr string, now time.Time) *slot {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Slots are let go in about the order their answers end: when the
	// first one let go is not quiet yet, the ones after it are younger.
	if q := p.free[addr]; len(q) > 0 && q[0].idle(now, p.quiet) {
		s := q[0]
		n := copy(q, q[1:])
		q[n] = nil
		p.free[addr] = q[:n]
		return s
	}
	if len(p.slots[addr]) >= p.max {
		return nil
	}
	s := new(slot)
	s.tr = p.clone(1, s.conn.Store)
	p.slots[addr] = append(p.slots[addr], s)
	return s
}

// put lets s go after its request: its answer was read to its end or
// closed (net/http kept its connection or closed it), or it failed.
func (p *plainTransport) put(addr string, s *slot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free[addr] = append(p.free[addr], s)
	if p.closed {
		s.tr.CloseIdleConnections()
	}
}

// closeIdle closes every slot's idle connection, and, from now on, the
// connection of a slot when it is let go.
func (p *plainTransport) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, q := range p.slots {
		for _, s := range q {
			s.tr.CloseIdleConnections()
		}
	}
}

// slotBody is the body of an answer on a slot: its end (or its closing,
// or a failed read) lets the slot go.
type slotBody struct {
	io.ReadCloser
	p    *plainTransport
	s    *slot
	addr string
	done atomic.Bool
}

func (b *slotBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		// At io.EOF net/http has already kept the connection (it does so
		// before the body returns its end); on any other error it closes
		// it.
		b.release()
	}
	return n, err
}

func (b *slotBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

func (b *slotBody) release() {
	if !b.done.Swap(true) {
		b.p.put(b.addr, b.s)
	}
}
