package scenarios

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/yamlfile"
)

// ErrNoRedis is returned (with ErrInvalid) by a live run of a game day
// with gateway.state: redis when redis-server is not installed.
var ErrNoRedis = errors.New("gateway.state: redis runs live against a real redis-server, which is not installed (apt-get install redis-server); sim mode needs none")

// replicaSink stamps a replica's number on the events of its gateway.
type replicaSink struct {
	l *liveRun
	n int // 0 for a gateway alone
}

func (r replicaSink) Emit(e events.Event) {
	e.Replica = r.n
	r.l.Emit(e)
}

// startGateways starts the gateway's replicas in-process, each on its own
// loopback listener, and with state: redis a redis-server behind a
// loopback proxy (which store steps take down or slow). The returned
// function stops them all.
func (l *liveRun) startGateways(ctx context.Context, seed uint64) (func(), error) {
	s := l.s
	var stops []func()
	stopAll := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if s.Gateway.shared() {
		rs, err := startRedisServer()
		if err != nil {
			return nil, err
		}
		stops = append(stops, rs.stop)
		px, err := startStoreProxy(rs.addr)
		if err != nil {
			stopAll()
			return nil, err
		}
		stops = append(stops, px.close)
		l.storeProxy = px
	}
	n := max(s.Gateway.Replicas, 1)
	for i := range n {
		cfg, err := l.replicaConfig(s.env.gatewayFile, seed)
		if err != nil {
			stopAll()
			return nil, err
		}
		sink := replicaSink{l: l}
		if n > 1 {
			sink.n = i + 1
		}
		srv, err := gateway.New(cfg, gateway.Options{Events: sink, Logger: slog.New(slog.DiscardHandler), TracerProvider: l.traces.provider()})
		if err != nil {
			stopAll()
			return nil, fmt.Errorf("%w: gateway: %w", ErrInvalid, err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = srv.Close()
			stopAll()
			return nil, err
		}
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() { _ = srv.Serve(sctx, ln); close(done) }()
		stops = append(stops, func() { cancel(); <-done; _ = srv.Close() })
		l.replicas = append(l.replicas, srv)
		l.replicaURLs = append(l.replicaURLs, "http://"+ln.Addr().String())
	}
	l.srv, l.gwURL = l.replicas[0], l.replicaURLs[0]
	return stopAll, nil
}

// replicaConfig is a replica's gateway config: the file, pointed at the
// in-process mocks and sinks, with the game day's state store.
func (l *liveRun) replicaConfig(path string, seed uint64) (*gateway.Config, error) {
	cfg, err := l.gatewayConfig(path, seed)
	if err != nil {
		return nil, err
	}
	// No load balancer watches the run's own gateway: it stops without
	// a lame-duck period.
	cfg.Shutdown.LameDuck = new(yamlfile.Duration)
	cfg.State = gateway.StateConfig{Timeout: cfg.State.Timeout}
	if l.storeProxy != nil {
		cfg.State.Backend = StateRedis
		cfg.State.URL = gateway.NewSecret("redis://" + l.storeProxy.addr + "/0")
		cfg.State.Prefix = "gameday"
	}
	return cfg, nil
}

// replicaURL is the gateway replica that serves user request id ("req-n"):
// round robin by request number, as in the simulator.
func (l *liveRun) replicaURL(id string) string {
	if len(l.replicaURLs) <= 1 {
		return l.gwURL
	}
	n, err := strconv.Atoi(strings.TrimPrefix(id, "req-"))
	if err != nil || n < 1 {
		return l.gwURL
	}
	return l.replicaURLs[(n-1)%len(l.replicaURLs)]
}

// reloadReplicas reloads every replica with the config file at path.
func (l *liveRun) reloadReplicas(path string) error {
	for _, srv := range l.replicas {
		cfg, err := l.replicaConfig(path, l.s.Seed)
		if err == nil {
			err = srv.Reload(cfg)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// storeStep starts (on) or ends a store step.
func (l *liveRun) storeStep(st *Step, on bool) {
	px := l.storeProxy
	if px == nil {
		return
	}
	switch {
	case st.Store.Down:
		px.setDown(on)
	case on:
		px.slow.Store(int64(st.Store.Slow.D()))
	default:
		px.slow.Store(0)
	}
}

// redisServer is a redis-server the runner started on a free loopback
// port, persisting nothing.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
	dir  string
}

func startRedisServer() (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, invalid(ErrNoRedis) // the run cannot happen as asked (exit 2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	dir, err := os.MkdirTemp("", "brownout-redis-")
	if err != nil {
		return nil, err
	}
	rs := &redisServer{addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir}
	rs.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning")
	if err := rs.cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	for range 500 { // up to ~5s to listen
		if redisPing(rs.addr) {
			return rs, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	rs.stop()
	return nil, fmt.Errorf("redis-server on %s did not answer PING within 5s", rs.addr)
}

func (rs *redisServer) stop() {
	_ = rs.cmd.Process.Kill()
	_ = rs.cmd.Wait()
	_ = os.RemoveAll(rs.dir)
}

// redisPing reports whether a Redis server answers PING at addr.
func redisPing(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// storeProxy is a loopback TCP proxy in front of the store, so a store
// step means what it means in the simulator: down cuts every connection
// and refuses new ones while what Redis holds survives; slow delays what
// the store sends (answers and published changes) by that much.
type storeProxy struct {
	addr, upstream string
	ln             net.Listener
	slow           atomic.Int64 // time.Duration

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func startStoreProxy(upstream string) (*storeProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	px := &storeProxy{addr: ln.Addr().String(), upstream: upstream, ln: ln, conns: map[net.Conn]bool{}}
	px.wg.Add(1)
	go px.accept()
	return px, nil
}

func (px *storeProxy) accept() {
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
func (px *storeProxy) pipe(dst, src net.Conn, delayed bool) {
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

func (px *storeProxy) drop(a, b net.Conn) {
	_ = a.Close()
	_ = b.Close()
	px.mu.Lock()
	delete(px.conns, a)
	delete(px.conns, b)
	px.mu.Unlock()
}

// setDown takes the store away (cutting every connection) or brings it
// back.
func (px *storeProxy) setDown(down bool) {
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

func (px *storeProxy) close() {
	_ = px.ln.Close()
	px.setDown(true)
	px.wg.Wait()
}
