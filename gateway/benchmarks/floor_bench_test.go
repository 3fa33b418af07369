package benchmarks_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
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
// Each round plays the same 128 requests five ways, c clients at a time:
// directly to the mock, through the ReverseProxy, through the gateway,
// through a second gateway that traces every request (OTLP/HTTP to an
// in-process collector that discards the spans), and through a third
// whose upstream connections are never reused (each request dials: the
// smuggling guard's cost when requests to one upstream come faster than
// its pool of quiet connections covers). Rounds are ReuseQuiet apart, so
// the gateways reuse their quiet connections as the ReverseProxy reuses
// its own. The process's CPU time (getrusage) of the direct run is what
// the client and the mock cost; subtracted from the others it leaves the
// CPU per request of each proxy: floor-cpu-µs/req, gateway-cpu-µs/req,
// traced-cpu-µs/req (the collector's share included), dial-cpu-µs/req,
// and their ratios to the floor (x-floor, the aim: at most 1.1;
// x-floor-traced, x-floor-dial). Allocations per streamed token are
// counted the same way (runtime.MemStats.Mallocs).
func BenchmarkFloor(b *testing.B) {
	for _, c := range []int{1, 16} {
		b.Run(fmt.Sprintf("stream-c%d", c), func(b *testing.B) { benchFloor(b, true, c) })
	}
	b.Run("complete-c16", func(b *testing.B) { benchFloor(b, false, 16) })
}

func benchFloor(b *testing.B, stream bool, clients int) {
	// 128 requests per path and round, however many clients: fewer leave
	// the c=1 figures to the noise of the subtraction.
	const tokens = 20
	perClient := 128 / clients
	e := newBenchEnv(b)
	up, err := url.Parse(e.mock.URL)
	if err != nil {
		b.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(up)
	rp.FlushInterval = -1 // stream as it arrives, as the gateway does
	floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The ReverseProxy streams the client's request body upstream on
		// the Transport's write loop while it relays the answer: when the
		// upstream answers before that loop has read the body's end (it
		// knows the length), net/http's server would discard and close
		// the body as the answer's header goes out, failing the loop's
		// next read, which closes the upstream connection under the
		// answer ("use of closed network connection", seen on a loaded
		// machine). Full duplex leaves the body to the proxy.
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	}))
	b.Cleanup(floor.Close)
	direct, through := benchBody(stream, "gpt-4o"), benchBody(stream, "chat")
	floorURL := floor.URL + "/v1/chat/completions"
	collector := discardCollector(b)
	_, on := startBenchGateway(b, e.mock.URL, "tracing: {enabled: true, endpoint: \""+collector+"\"}\n")
	tracedURL := on.URL + "/v1/chat/completions"
	// A gateway whose upstream connections are never quiet long enough to
	// be reused: every request dials, as when requests to one upstream
	// come faster than the pool covers (MaxIdleConnsPerHost per
	// ReuseQuiet: 256 per 250 ms by default).
	_, dialGW := startBenchGatewayOn(b, e.mock.URL, "", gateway.NewTransport(gateway.ProtocolAuto, gateway.TransportOptions{ReuseQuiet: time.Hour}))
	dialURL := dialGW.URL + "/v1/chat/completions"

	run := func(url string, body []byte) (cpu time.Duration, mallocs uint64) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		m0, c0 := ms.Mallocs, processCPU()
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for range perClient {
					e.call(b, url, body, stream)
				}
			})
		}
		wg.Wait()
		c1 := processCPU()
		runtime.ReadMemStats(&ms)
		return c1 - c0, ms.Mallocs - m0
	}
	// Warm every path (connections, pools) before measuring.
	run(e.direct, direct)
	run(floorURL, direct)
	run(e.through, through)
	run(tracedURL, through)
	run(dialURL, through)

	var dCPU, fCPU, gCPU, tCPU, xCPU time.Duration
	var dM, fM, gM, tM, xM uint64
	rounds := 0
	for b.Loop() {
		// Rounds are ReuseQuiet apart, as requests are to an upstream the
		// pool covers: the gateways' connections of the last round are
		// quiet, and reused (a sleep costs no CPU).
		time.Sleep(gateway.DefaultReuseQuiet + 20*time.Millisecond)
		c, m := run(e.direct, direct)
		dCPU, dM = dCPU+c, dM+m
		c, m = run(floorURL, direct)
		fCPU, fM = fCPU+c, fM+m
		c, m = run(e.through, through)
		gCPU, gM = gCPU+c, gM+m
		c, m = run(tracedURL, through)
		tCPU, tM = tCPU+c, tM+m
		c, m = run(dialURL, through)
		xCPU, xM = xCPU+c, xM+m
		rounds++
	}
	reqs := float64(rounds * clients * perClient)
	per := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / reqs }
	floorCPU, gwCPU, trCPU, dialCPU := per(fCPU-dCPU), per(gCPU-dCPU), per(tCPU-dCPU), per(xCPU-dCPU)
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
		b.ReportMetric((float64(fM)-float64(dM))/toks, "floor-allocs/token")
		b.ReportMetric((float64(gM)-float64(dM))/toks, "gateway-allocs/token")
		b.ReportMetric((float64(tM)-float64(dM))/toks, "traced-allocs/token")
		b.ReportMetric((float64(xM)-float64(dM))/toks, "dial-allocs/token")
	}
}
