package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// h1Transport is the gateway's HTTP/1.1 transport for cleartext (http://)
// upstreams. Unlike http.Transport it starts no goroutine per connection:
// the request is written and the answer read on the caller's goroutine, and
// a cancelled context reaches a blocked read or write through a connection
// deadline (context.AfterFunc, which runs nothing until it fires). A held
// stream costs its connection, one small read buffer and the response.
//
// It pools keep-alive connections per host (LIFO, at most maxIdle idle ones
// per host, each closed after idleTimeout). Without a reader goroutine a
// pooled connection the server closed while idle is noticed when it is taken
// (a non-blocking peek, see connAlive); a request that still meets a closed
// reused connection is retried once on a fresh one when net/http would
// retry it: nothing was written, or it is replayable (idempotent method or
// an Idempotency-Key header, with a body that can be rewound). Otherwise the
// error says the reused connection was closed.
//
// Requests it does not handle go to fallback: https URLs (TLS upstreams keep
// http.Transport, which negotiates HTTP/2 with real providers) and requests
// that the environment's proxy settings send through a proxy.
type h1Transport struct {
	dialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	maxIdle     int
	idleTimeout time.Duration
	proxy       func(*http.Request) (*url.URL, error)
	fallback    http.RoundTripper

	mu   sync.Mutex
	idle map[string][]*h1Conn // by host:port, most recently used last
}

func newH1Transport(o TransportOptions, fallback http.RoundTripper) *h1Transport {
	if o.MaxIdleConnsPerHost == 0 {
		o.MaxIdleConnsPerHost = 256
	}
	if o.IdleConnTimeout == 0 {
		o.IdleConnTimeout = 90 * time.Second
	}
	d := &net.Dialer{KeepAlive: 30 * time.Second}
	return &h1Transport{
		dialContext: d.DialContext,
		maxIdle:     o.MaxIdleConnsPerHost,
		idleTimeout: o.IdleConnTimeout,
		proxy:       http.ProxyFromEnvironment,
		fallback:    fallback,
		idle:        map[string][]*h1Conn{},
	}
}

// h1Conn is one upstream connection.
type h1Conn struct {
	t     *h1Transport
	key   string
	nc    net.Conn
	raw   syscall.RawConn // for the liveness peek; nil when unavailable
	br    *bufio.Reader
	wrote int64       // bytes written by the current request
	timer *time.Timer // idle timeout, while pooled
}

// Write counts what reaches the connection (for the retry rules).
func (c *h1Conn) Write(p []byte) (int, error) {
	n, err := c.nc.Write(p)
	c.wrote += int64(n)
	return n, err
}

// h1ReadBufferSize is an upstream connection's read buffer; larger reads
// pass through it.
const h1ReadBufferSize = transportBufferSize

var h1WriterPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}

// aLongTimeAgo is a deadline in the past: it fails blocked and future I/O at
// once.
var aLongTimeAgo = time.Unix(1, 0)

// errReusedConnClosed is the error of a request that met a pooled
// connection the server had closed and could not be retried.
var errReusedConnClosed = errors.New("the upstream closed a reused keep-alive connection before answering")

// errClosedBody is a read after Close.
var errClosedBody = errors.New("http: read on closed response body")

func (t *h1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" {
		return t.fallback.RoundTrip(req)
	}
	if t.proxy != nil {
		if pu, err := t.proxy(req); err != nil || pu != nil {
			return t.fallback.RoundTrip(req)
		}
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeReqBody(req)
		return nil, err
	}
	key := hostPort(req.URL)
	orig := req
	for retried := false; ; retried = true {
		c, reused, err := t.get(ctx, key)
		if err != nil {
			closeReqBody(req)
			return nil, err
		}
		resp, err := c.roundTrip(ctx, req)
		if err == nil {
			return resp, nil
		}
		if !reused || retried || ctx.Err() != nil {
			return nil, err
		}
		var rerr *reusedConnError
		if !errors.As(err, &rerr) || !rerr.retryable(orig) {
			if rerr != nil {
				return nil, fmt.Errorf("%w: %w", errReusedConnClosed, rerr.err)
			}
			return nil, err
		}
		if orig.Body != nil && orig.Body != http.NoBody {
			body, gerr := orig.GetBody()
			if gerr != nil {
				return nil, gerr
			}
			r2 := *orig
			r2.Body = body
			req = &r2
		}
	}
}

// reusedConnError is a failure on a reused connection before any byte of
// the answer arrived.
type reusedConnError struct {
	err          error
	wroteNothing bool
}

func (e *reusedConnError) Error() string { return e.err.Error() }
func (e *reusedConnError) Unwrap() error { return e.err }

// retryable applies net/http's rules to a request that failed this way.
func (e *reusedConnError) retryable(req *http.Request) bool {
	rewind := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	if e.wroteNothing {
		return rewind
	}
	if !rewind {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, k1 := req.Header["Idempotency-Key"]
	_, k2 := req.Header["X-Idempotency-Key"]
	return k1 || k2
}

func closeReqBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// hostPort is the pool key of a URL: host:port with the default port.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// get returns a pooled connection to key that is still open, or dials one.
func (t *h1Transport) get(ctx context.Context, key string) (*h1Conn, bool, error) {
	for {
		t.mu.Lock()
		conns := t.idle[key]
		if len(conns) == 0 {
			t.mu.Unlock()
			break
		}
		c := conns[len(conns)-1]
		conns[len(conns)-1] = nil
		t.idle[key] = conns[:len(conns)-1]
		t.mu.Unlock()
		// The idle timer fired: the connection is being closed.
		if !c.timer.Stop() {
			continue
		}
		if !connAlive(c) {
			_ = c.nc.Close()
			continue
		}
		return c, true, nil
	}
	c, err := t.dial(ctx, key)
	return c, false, err
}

func (t *h1Transport) dial(ctx context.Context, key string) (*h1Conn, error) {
	var nc net.Conn
	var err error
	if d, ok := ctx.Value(connectTimeoutKey{}).(time.Duration); ok {
		dctx, cancel := context.WithTimeout(ctx, d)
		nc, err = t.dialContext(dctx, "tcp", key)
		if err != nil && ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
			err = &connectTimeoutError{d}
		}
		cancel()
	} else {
		nc, err = t.dialContext(ctx, "tcp", key)
	}
	if err != nil {
		return nil, err
	}
	c := &h1Conn{t: t, key: key, nc: nc, br: bufio.NewReaderSize(nc, h1ReadBufferSize)}
	if sc, ok := nc.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	return c, nil
}

// put returns a connection whose exchange ended cleanly to the pool.
func (t *h1Transport) put(c *h1Conn) {
	if c.br.Buffered() > 0 { // an answer nobody asked for
		_ = c.nc.Close()
		return
	}
	t.mu.Lock()
	conns := t.idle[c.key]
	if len(conns) >= t.maxIdle {
		t.mu.Unlock()
		_ = c.nc.Close()
		return
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(t.idleTimeout, func() { t.expire(c) })
	} else {
		c.timer.Reset(t.idleTimeout)
	}
	t.idle[c.key] = append(conns, c)
	t.mu.Unlock()
}

// expire closes a connection idle for idleTimeout.
func (t *h1Transport) expire(c *h1Conn) {
	t.mu.Lock()
	conns := t.idle[c.key]
	for i, x := range conns {
		if x == c {
			t.idle[c.key] = append(conns[:i], conns[i+1:]...)
			conns[len(conns)-1] = nil
			break
		}
	}
	if len(t.idle[c.key]) == 0 {
		delete(t.idle, c.key)
	}
	t.mu.Unlock()
	_ = c.nc.Close()
}

// CloseIdleConnections closes the pooled connections (and those of the
// fallback).
func (t *h1Transport) CloseIdleConnections() {
	t.mu.Lock()
	var all []*h1Conn
	for k, conns := range t.idle {
		for _, c := range conns {
			if c.timer.Stop() {
				all = append(all, c)
			}
		}
		delete(t.idle, k)
	}
	t.mu.Unlock()
	for _, c := range all {
		_ = c.nc.Close()
	}
	if ci, ok := t.fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// roundTrip writes req and reads the answer's header. The body, when there
// is one, owns the connection until it is read to its end or closed.
func (c *h1Conn) roundTrip(ctx context.Context, req *http.Request) (*http.Response, error) {
	// A cancelled context fails the connection's blocked and future I/O.
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, error) {
		stop()
		_ = c.nc.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	c.wrote = 0
	bw := h1WriterPool.Get().(*bufio.Writer)
	bw.Reset(c)
	err := req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	h1WriterPool.Put(bw)
	if err != nil {
		if c.wrote == 0 {
			return fail(&reusedConnError{err: err, wroteNothing: true})
		}
		return fail(err)
	}
	// A connection the server closed fails here, before any byte of the
	// answer: the one case a reused connection may be retried after writing.
	if _, err := c.br.Peek(1); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			err = &reusedConnError{err: err}
		}
		return fail(err)
	}
	var resp *http.Response
	for {
		resp, err = http.ReadResponse(c.br, req)
		if err != nil {
			return fail(err)
		}
		// Informational answers (103 Early Hints) precede the real one.
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		break
	}
	reuse := !resp.Close && !req.Close
	if resp.Body == nil || resp.Body == http.NoBody {
		resp.Body = http.NoBody
		c.release(stop, reuse)
		return resp, nil
	}
	resp.Body = &h1Body{c: c, rc: resp.Body, ctx: ctx, stop: stop, reuse: reuse}
	return resp, nil
}

// release ends an exchange: the connection goes back to the pool when it
// can carry another one, or is closed.
func (c *h1Conn) release(stop func() bool, reuse bool) {
	if !stop() { // the context fired: the deadline is in the past
		reuse = false
	}
	if !reuse {
		_ = c.nc.Close()
		return
	}
	c.t.put(c)
}

// h1Body is an answer's body: it owns the connection until its end, when
// the connection returns to the pool, or until Close, which closes it
// unless the rest of the body was already buffered. Close may be called
// while a Read waits: it closes the connection, which ends the Read.
type h1Body struct {
	rc    io.ReadCloser
	ctx   context.Context
	stop  func() bool
	reuse bool

	mu      sync.Mutex
	c       *h1Conn // nil once released or closed
	eof     bool
	err     error // the failure that ended the body
	closed  bool
	reading bool
}

func (b *h1Body) Read(p []byte) (int, error) {
	b.mu.Lock()
	switch {
	case b.closed:
		b.mu.Unlock()
		return 0, errClosedBody
	case b.err != nil:
		b.mu.Unlock()
		return 0, b.err
	case b.eof:
		b.mu.Unlock()
		return 0, io.EOF
	}
	b.reading = true
	b.mu.Unlock()
	n, err := b.rc.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reading = false
	if b.closed {
		return n, errClosedBody
	}
	if err == nil {
		return n, nil
	}
	if err == io.EOF {
		b.eof = true
		b.c.release(b.stop, b.reuse)
		b.c = nil
		return n, err
	}
	if b.ctx.Err() != nil {
		err = b.ctx.Err()
	}
	b.stop()
	_ = b.c.nc.Close()
	b.c = nil
	b.err = err
	return n, err
}

// Close releases the connection. A body not read to its end (an SSE
// stream whose reader stopped at its end marker) keeps its connection when
// the rest of the body is already buffered, or when it arrives within
// drainWait and drainMax bytes: a short-lived goroutine reads it then, so
// Close never waits on the network. Otherwise the connection is closed.
func (b *h1Body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	c := b.c
	if c == nil {
		return nil
	}
	b.c = nil
	if !b.stop() || !b.reuse || b.reading {
		_ = c.nc.Close()
		return nil
	}
	if c.br.Buffered() == 0 {
		if c.nc.SetReadDeadline(time.Now().Add(drainWait)) != nil {
			_ = c.nc.Close()
			return nil
		}
		go drain(c, b.rc)
		return nil
	}
	// Consume what is buffered without waiting for the network.
	_ = c.nc.SetReadDeadline(aLongTimeAgo)
	var scratch [256]byte
	for {
		_, err := b.rc.Read(scratch[:])
		if err == nil {
			continue
		}
		if err == io.EOF && c.nc.SetReadDeadline(time.Time{}) == nil {
			c.t.put(c)
			return nil
		}
		_ = c.nc.Close()
		return nil
	}
}

// Limits on reading the rest of a closed body to keep its connection.
const (
	drainWait = 100 * time.Millisecond
	drainMax  = 16 << 10
)

// drain reads the rest of a closed body (under the drainWait deadline) and
// pools the connection when the body ends within drainMax bytes.
func drain(c *h1Conn, rc io.Reader) {
	n, err := io.CopyN(io.Discard, rc, drainMax+1)
	if err == io.EOF && n <= drainMax && c.nc.SetReadDeadline(time.Time{}) == nil {
		c.t.put(c)
		return
	}
	_ = c.nc.Close()
}
