package benchmarks_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
)

// A proxy under measurement runs in a process of its own: the test binary
// started again with proxyRoleEnv set (TestMain), so that the CPU and the
// allocations counted are the proxy's alone, as an operator's `ps` would
// count them, and not also its client's and upstream's: the mock and the
// client stay in the benchmark's process. In one process (this
// benchmark's way until 2026-12-08, by subtracting a direct run) every
// proxy was also charged with whatever its client did differently to
// read its answers, and the proxies, the mock and the client shared one
// heap and one collector.
const (
	proxyRoleEnv     = "BROWNOUT_BENCH_PROXY"          // floor, gateway, traced or dial
	proxyUpstreamEnv = "BROWNOUT_BENCH_PROXY_UPSTREAM" // the mock's URL
	proxyTracesEnv   = "BROWNOUT_BENCH_PROXY_TRACES"   // traced: the collector's URL
	// proxyProfileEnv, set by whoever runs the benchmark, names a file
	// prefix: each proxy process writes the CPU profile of its life to
	// PREFIX.ROLE.pprof (go tool pprof -diff_base PREFIX.floor.pprof
	// PREFIX.gateway.pprof shows where the gateway's extra CPU goes).
	proxyProfileEnv = "BROWNOUT_BENCH_PROXY_CPUPROFILE"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(proxyRoleEnv); role != "" {
		if err := serveProxy(role, os.Getenv(proxyUpstreamEnv), os.Getenv(proxyTracesEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "proxy:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// proxyUsage is what a proxy process reports of itself: its CPU time
// (getrusage) and the objects it has allocated.
type proxyUsage struct {
	CPU     time.Duration `json:"cpu"`
	Mallocs uint64        `json:"mallocs"`
}

// serveProxy runs one proxy on the upstream (the child's side): it prints
// "PROXY-URL USAGE-URL" on a line and serves until its standard input
// closes. USAGE-URL answers proxyUsage on a listener of its own, apart
// from the proxy's.
func serveProxy(role, upstream, traces string) error {
	var h http.Handler
	switch role {
	case "floor":
		up, err := url.Parse(upstream)
		if err != nil {
			return err
		}
		rp := httputil.NewSingleHostReverseProxy(up)
		rp.FlushInterval = -1 // stream as it arrives, as the gateway does
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The ReverseProxy streams the client's request body upstream
			// on the Transport's write loop while it relays the answer:
			// when the upstream answers before that loop has read the
			// body's end, net/http's server would discard and close the
			// body as the answer's header goes out, failing the loop's
			// next read, which closes the upstream connection under the
			// answer ("use of closed network connection", seen on a
			// loaded machine). Full duplex leaves the body to the proxy.
			_ = http.NewResponseController(w).EnableFullDuplex()
			rp.ServeHTTP(w, r)
		})
	case "gateway", "traced", "dial":
		extra := ""
		var tr http.RoundTripper
		switch role {
		case "traced":
			extra = "tracing: {enabled: true, endpoint: \"" + traces + "\"}\n"
		case "dial":
			// Upstream connections never quiet long enough to be reused:
			// every request dials, as when requests to one upstream come
			// faster than the pool covers (MaxIdleConnsPerHost per
			// ReuseQuiet: 256 per 250 ms by default).
			tr = gateway.NewTransport(gateway.ProtocolAuto, gateway.TransportOptions{ReuseQuiet: time.Hour})
		}
		cfg, err := gateway.ParseConfig("bench.yaml", []byte(benchConfig(upstream)+extra), gateway.LoadOptions{})
		if err != nil {
			return err
		}
		srv, err := gateway.New(cfg, gateway.Options{Events: events.Discard, Logger: slog.New(slog.DiscardHandler), Transport: tr})
		if err != nil {
			return err
		}
		defer srv.Close()
		h = srv.Handler()
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ul, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(pl, h) }()
	go func() {
		_ = http.Serve(ul, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
			metrics.Read(s)
			_ = json.NewEncoder(w).Encode(proxyUsage{CPU: processCPU(), Mallocs: s[0].Value.Uint64()})
		}))
	}()
	if prefix := os.Getenv(proxyProfileEnv); prefix != "" {
		f, err := os.Create(prefix + "." + role + ".pprof")
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("http://%s http://%s\n", pl.Addr(), ul.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the benchmark ends
	return nil
}

// proxyProc is a proxy process started by startProxy.
type proxyProc struct {
	url   string // the proxy's base URL
	usage string // its usage endpoint
	hc    *http.Client
}

// startProxy starts the test binary as the proxy role on the upstream,
// stopped when the benchmark ends.
func startProxy(b *testing.B, role, upstream, traces string) *proxyProc {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), proxyRoleEnv+"="+role, proxyUpstreamEnv+"="+upstream, proxyTracesEnv+"="+traces)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	urls := strings.Fields(line)
	if err != nil || len(urls) != 2 {
		b.Fatalf("proxy %s did not start: %q %v", role, line, err)
	}
	return &proxyProc{url: urls[0], usage: urls[1], hc: &http.Client{}}
}

// used returns the proxy process's CPU time and allocations so far.
func (p *proxyProc) used(b *testing.B) proxyUsage {
	resp, err := p.hc.Get(p.usage)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var u proxyUsage
	if err := json.NewDecoder(resp.Body).Decode(&u); err != nil {
		b.Fatal(err)
	}
	return u
}
