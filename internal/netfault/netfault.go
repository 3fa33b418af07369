// Package netfault is a TCP proxy that injects network faults: the game
// day's store steps (store down, store slow) in a live run, where the
// gateways reach their Redis through it.
package netfault

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a loopback TCP proxy in front of an upstream that breaks on
// cue: down cuts every connection and refuses new ones while the
// upstream keeps what it holds; slow delays what the upstream sends by
// that much, in order.
type Proxy struct {
	addr, upstream string
	ln             net.Listener
	slow           atomic.Int64 // time.Duration

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// Start listens on a free loopback port and proxies each connection to
// upstream (host:port).
func Start(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	px := &Proxy{addr: ln.Addr().String(), upstream: upstream, ln: ln, conns: map[net.Conn]bool{}}
	px.wg.Add(1)
	go px.accept()
	return px, nil
}

func (px *Proxy) accept() {
	defer px.wg.Done()
	for {
		c, err := px.ln.Accept()
		if err != nil {
			return
		}
		px.mu.Lock()
		if px.down {
			px.mu.Unlock()
			_ = c.Close()
			continue
		}
		u, err := net.DialTimeout("tcp", px.upstream, time.Second)
		if err != nil {
			px.mu.Unlock()
			_ = c.Close()
			continue
		}
		px.conns[c], px.conns[u] = true, true
		px.wg.Add(2)
		px.mu.Unlock()
		go px.pipe(u, c, false) // to the store, as sent
		go px.pipe(c, u, true)  // from the store, delayed while slow
	}
}

// pipe copies src to dst until either side closes, then closes both.
// Delayed chunks keep their order, each held until it is slow old.
func (px *Proxy) pipe(dst, src net.Conn, delayed bool) {
	defer px.wg.Done()
	defer px.drop(dst, src)
	if !delayed {
		_, _ = io.Copy(dst, src)
		return
	}
	type chunk struct {
		at   time.Time
		data []byte
	}
	ch := make(chan chunk, 64)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				ch <- chunk{time.Now(), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		if d := time.Until(c.at.Add(time.Duration(px.slow.Load()))); d > 0 {
			time.Sleep(d)
		}
		if _, err := dst.Write(c.data); err != nil {
			px.drop(dst, src)
			for range ch { // let the reader end
			}
			return
		}
	}
}

func (px *Proxy) drop(a, b net.Conn) {
	_ = a.Close()
	_ = b.Close()
	px.mu.Lock()
	delete(px.conns, a)
	delete(px.conns, b)
	px.mu.Unlock()
}

// SetDown takes the upstream away (cutting every connection) or brings it
// back.
func (px *Proxy) SetDown(down bool) {
	px.mu.Lock()
	px.down = down
	var cut []net.Conn
	if down {
		for c := range px.conns {
			cut = append(cut, c)
		}
	}
	px.mu.Unlock()
	for _, c := range cut {
		_ = c.Close()
	}
}

// SetSlow delays what the upstream sends by d from now on (0: none).
func (px *Proxy) SetSlow(d time.Duration) { px.slow.Store(int64(d)) }

// Addr is where the proxy listens (host:port).
func (px *Proxy) Addr() string { return px.addr }

// Close stops the proxy and cuts every connection.
func (px *Proxy) Close() {
	_ = px.ln.Close()
	px.SetDown(true)
	px.wg.Wait()
}
