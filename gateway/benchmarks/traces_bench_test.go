package benchmarks_test

import (
	"testing"
	"time"
)

// BenchmarkTracing puts two gateways in front of the same mock provider,
// one with tracing off and one exporting every span over OTLP/HTTP (the
// SDK's batching processor) to a collector on loopback, and alternates
// calls between them, so both see the same machine load:
//
//	go test -run '^$' -bench 'Tracing' -benchmem -count 6 ./gateway/benchmarks
//
// It reports off-p50-µs and on-p50-µs of the request and their
// difference, added-p50-µs (for the 20-token stream also the first
// token's, added-ttft-p50-µs). The cost of tracing off against a gateway
// without tracing at all is BenchmarkCompare's added-p50-µs before and
// after.
func BenchmarkTracing(b *testing.B) {
	b.Run("complete", func(b *testing.B) { benchTracing(b, false) })
	b.Run("stream", func(b *testing.B) { benchTracing(b, true) })
}

func benchTracing(b *testing.B, stream bool) {
	collector := discardCollector(b)
	e := newBenchEnv(b) // tracing off
	_, on := startBenchGateway(b, e.mock.URL, "tracing: {enabled: true, endpoint: \""+collector+"\"}\n")
	off, traced := e.through, on.URL+"/v1/chat/completions"
	body := benchBody(stream, "chat")
	for range 50 {
		e.call(b, off, body, stream)
		e.call(b, traced, body, stream)
	}
	var ol, tl, ot, tt []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d, f := e.call(b, off, body, stream)
		ol, ot = append(ol, d), append(ot, f)
		d, f = e.call(b, traced, body, stream)
		tl, tt = append(tl, d), append(tt, f)
	}
	b.StopTimer()
	b.ReportMetric(percentile(ol, .5), "off-p50-µs")
	b.ReportMetric(percentile(tl, .5), "on-p50-µs")
	b.ReportMetric(percentile(tl, .5)-percentile(ol, .5), "added-p50-µs")
	if stream {
		b.ReportMetric(percentile(tt, .5)-percentile(ot, .5), "added-ttft-p50-µs")
	}
}
