package benchmarks_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/gateway"
)

// BenchmarkFloor puts the gateway beside the floor of any proxy: a bare
// net/http/httputil.ReverseProxy on the same upstream (the mock provider,
// 20-token streams), interleaved with it in every round so both see the
// same machine load:
//
//	go test -run '^$' -bench Floor -benchtime 5x -count 3 ./gateway/benchmarks
//
// Each proxy runs in a process of its own (startProxy), as it would in
// production; the client and the mock stay in the benchmark's process.
// Each round plays the same 128 requests four ways, c clients at a time:
// through the ReverseProxy, through the gateway, through a second gateway
// that traces every request (OTLP/HTTP to a collector in the benchmark's
// process that discards the spans), and through a third whose upstream
// connections are never reused (each request dials: the smuggling guard's
// cost when requests to one upstream come faster than its pool of quiet
// connections covers). Rounds are ReuseQuiet apart, so the gateways reuse
// their quiet connections as the ReverseProxy reuses its own. The CPU time
// (getrusage) each proxy process used in its runs, per request:
// floor-cpu-µs/req, gateway-cpu-µs/req, traced-cpu-µs/req (the collector's
// share not included), dial-cpu-µs/req, and their ratios to the floor
// (x-floor, the aim: at most 1.1; x-floor-traced, x-floor-dial).
// Allocations per streamed token are counted the same way, in each proxy
// process (runtime/metrics /gc/heap/allocs:objects).
func BenchmarkFloor(b *testing.B) {
	for _, c := range []int{1, 16} {
		b.Run(fmt.Sprintf("stream-c%d", c), func(b *testing.B) { benchFloor(b, true, c) })
	}
	b.Run("complete-c16", func(b *testing.B) { benchFloor(b, false, 16) })
}

func benchFloor(b *testing.B, stream bool, clients int) {
	// 128 requests per path and round, however many clients.
	const tokens = 20
	perClient := 128 / clients
	e := newBenchEnv(b)
	direct, through := benchBody(stream, "gpt-4o"), benchBody(stream, "chat")
	type path struct {
		p      *proxyProc
		url    string
		body   []byte
		cpu    time.Duration
		allocs uint64
	}
	collector := discardCollector(b)
	paths := make([]*path, 0, 4)
	for _, role := range []string{"floor", "gateway", "traced", "dial"} {
		p := startProxy(b, role, e.mock.URL, collector)
		body := through
		if role == "floor" {
			body = direct
		}
		paths = append(paths, &path{p: p, url: p.url + "/v1/chat/completions", body: body})
	}
	run := func(p *path) (time.Duration, uint64) {
		u0 := p.p.used(b)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for range perClient {
					e.call(b, p.url, p.body, stream)
				}
			})
		}
		wg.Wait()
		u1 := p.p.used(b)
		return u1.CPU - u0.CPU, u1.Mallocs - u0.Mallocs
	}
	// Warm every path (connections, pools) before measuring.
	for _, p := range paths {
		run(p)
	}

	rounds := 0
	for b.Loop() {
		// Rounds are ReuseQuiet apart, as requests are to an upstream the
		// pool covers: the gateways' connections of the last round are
		// quiet, and reused (a sleep costs no CPU).
		time.Sleep(gateway.DefaultReuseQuiet + 20*time.Millisecond)
		for _, p := range paths {
			c, m := run(p)
			p.cpu, p.allocs = p.cpu+c, p.allocs+m
		}
		rounds++
	}
	reqs := float64(rounds * clients * perClient)
	per := func(p *path) float64 { return float64(p.cpu) / float64(time.Microsecond) / reqs }
	floorCPU, gwCPU, trCPU, dialCPU := per(paths[0]), per(paths[1]), per(paths[2]), per(paths[3])
	b.ReportMetric(floorCPU, "floor-cpu-µs/req")
	b.ReportMetric(gwCPU, "gateway-cpu-µs/req")
	b.ReportMetric(trCPU, "traced-cpu-µs/req")
	b.ReportMetric(dialCPU, "dial-cpu-µs/req")
	if floorCPU > 0 {
		b.ReportMetric(gwCPU/floorCPU, "x-floor")
		b.ReportMetric(trCPU/floorCPU, "x-floor-traced")
		b.ReportMetric(dialCPU/floorCPU, "x-floor-dial")
	}
	if stream {
		toks := reqs * tokens
		b.ReportMetric(float64(paths[0].allocs)/toks, "floor-allocs/token")
		b.ReportMetric(float64(paths[1].allocs)/toks, "gateway-allocs/token")
		b.ReportMetric(float64(paths[2].allocs)/toks, "traced-allocs/token")
		b.ReportMetric(float64(paths[3].allocs)/toks, "dial-allocs/token")
	}
}
