package benchmarks_test

// # Performance
//
// The targets (2-core machine, mock provider on loopback) are
// measured side by side, direct and through the gateway, in one process:
//
//	go test -run '^$' -bench 'Compare' -benchmem -count 6 ./gateway/benchmarks
//
// BenchmarkCompare/complete and /stream alternate one direct call and one
// call through the gateway (one client, sequential), so both see the same
// machine load, and report the added latency: added-p50-µs and
// added-p99-µs (target ≤100 µs and ≤1 ms), and for the 20-token stream
// added-ttft-p50-µs (first token, target ≤200 µs). BenchmarkCompare/parallel
// runs 16 clients directly and then through the gateway and reports the
// gateway's throughput as a share of direct, by wall clock (share-%, target
// ≥35%) and by process CPU time per request (cpu-share-%: less sensitive to
// other load on the machine). BenchmarkCompare/streams holds 1,000 streams
// open directly and then through the gateway and reports the gateway's
// memory per stream, heap and goroutine stacks (gateway-B/stream, target
// < 64 KiB), as the difference of runtime.MemStats (HeapInuse+StackInuse)
// deltas: the client and the upstream cost the same in both. The older
// BenchmarkDirect, BenchmarkGateway and BenchmarkStreams report the two
// sides separately.

import (
	"sync"
	"testing"
	"time"
)

func BenchmarkCompare(b *testing.B) {
	b.Run("complete", func(b *testing.B) { benchAdded(b, false) })
	b.Run("stream", func(b *testing.B) { benchAdded(b, true) })
	b.Run("parallel", benchShare)
	b.Run("streams", func(b *testing.B) { benchStreamMemory(b, false) })
	b.Run("streams-h2c-upstream", func(b *testing.B) { benchStreamMemory(b, true) })
}

// benchAdded alternates direct and gateway calls and reports the added
// latency at p50 and p99.
func benchAdded(b *testing.B, stream bool) {
	e := newBenchEnv(b)
	direct, through := benchBody(stream, "gpt-4o"), benchBody(stream, "chat")
	for range 50 {
		e.call(b, e.direct, direct, stream)
		e.call(b, e.through, through, stream)
	}
	var dl, gl, dt, gt []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d, f := e.call(b, e.direct, direct, stream)
		dl, dt = append(dl, d), append(dt, f)
		d, f = e.call(b, e.through, through, stream)
		gl, gt = append(gl, d), append(gt, f)
	}
	b.StopTimer()
	b.ReportMetric(percentile(dl, .5), "direct-p50-µs")
	b.ReportMetric(percentile(gl, .5), "gateway-p50-µs")
	b.ReportMetric(percentile(gl, .5)-percentile(dl, .5), "added-p50-µs")
	b.ReportMetric(percentile(gl, .99)-percentile(dl, .99), "added-p99-µs")
	if stream {
		b.ReportMetric(percentile(gt, .5)-percentile(dt, .5), "added-ttft-p50-µs")
		b.ReportMetric(percentile(gt, .99)-percentile(dt, .99), "added-ttft-p99-µs")
	}
}

// benchShare runs 16 clients directly, then through the gateway, and
// reports the gateway's throughput as a share of direct.
func benchShare(b *testing.B) {
	const clients, perClient = 16, 25
	e := newBenchEnv(b)
	direct, through := benchBody(false, "gpt-4o"), benchBody(false, "chat")
	run := func(url string, body []byte) (wall, cpu time.Duration) {
		c0 := processCPU()
		start := time.Now()
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for range perClient {
					e.call(b, url, body, false)
				}
			})
		}
		wg.Wait()
		return time.Since(start), processCPU() - c0
	}
	run(e.direct, direct) // warm up the pools
	run(e.through, through)
	var dw, dc, gw, gc time.Duration
	b.ResetTimer()
	for b.Loop() {
		w, c := run(e.direct, direct)
		dw, dc = dw+w, dc+c
		w, c = run(e.through, through)
		gw, gc = gw+w, gc+c
	}
	n := float64(b.N * clients * perClient)
	b.ReportMetric(n/dw.Seconds(), "direct-req/s")
	b.ReportMetric(n/gw.Seconds(), "gateway-req/s")
	b.ReportMetric(100*dw.Seconds()/gw.Seconds(), "share-%")
	if dc > 0 && gc > 0 {
		b.ReportMetric(100*dc.Seconds()/gc.Seconds(), "cpu-share-%")
	}
}

// benchStreamMemory holds 1,000 streams open directly and then through the
// gateway and reports the difference per stream. With h2c the gateway
// reaches the upstream over HTTP/2, as it reaches real providers over TLS.
func benchStreamMemory(b *testing.B, h2c bool) {
	const n = 1000
	holdStreams(b, n, false, h2c) // warm up: the heap grows to its working size
	holdStreams(b, n, true, h2c)
	var d, g, ds, gs float64
	for b.Loop() {
		d, ds = holdStreams(b, n, false, h2c)
		g, gs = holdStreams(b, n, true, h2c)
	}
	b.ReportMetric(d, "direct-B/stream")
	b.ReportMetric(g, "through-B/stream")
	b.ReportMetric(g-d, "gateway-B/stream")
	b.ReportMetric(gs-ds, "gateway-stack-B/stream")
}
