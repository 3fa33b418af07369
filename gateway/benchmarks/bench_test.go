// Package benchmarks_test holds the gateway's benchmarks, run against
// real HTTP on loopback: the gateway beside a direct call to the mock
// provider and beside a bare ReverseProxy (BenchmarkFloor), tracing's
// cost, a fleet's, and the memory of held streams. They live apart from
// the gateway's tests because those check the official SDKs through the
// gateway: a benchmark build does not compile the SDKs (about five minutes
// of CPU on a cold cache, which the README test's run of BenchmarkFloor
// paid every time).
package benchmarks_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// The benchmarks put the gateway side by side with a direct call to the
// same mock provider on loopback, in one run:
//
//	BenchmarkDirect/complete   vs BenchmarkGateway/complete    (one client, sequential)
//	BenchmarkDirect/stream     vs BenchmarkGateway/stream      (20-token stream)
//	BenchmarkDirect/parallel   vs BenchmarkGateway/parallel    (throughput, many clients)
//	BenchmarkStreams                                           (1,000 concurrent streams, memory per stream)
//
// Each sequential benchmark reports p50-µs and p99-µs of the request (and
// ttft-p50-µs/ttft-p99-µs of the first token for streams); subtract the
// direct figures from the gateway's for the added latency.
// BenchmarkCompare (compare_bench_test.go, whose comment describes the
// issue's targets and how they are measured) reports the differences
// directly. BROWNOUT_HEAP_PROFILE and BROWNOUT_GOROUTINE_PROFILE name files
// that receive a heap or goroutine profile while the streams are held.

type benchEnv struct {
	mock    *mockprovider.Provider
	gw      *httptest.Server
	srv     *gateway.Server
	client  *http.Client
	direct  string // upstream URL
	through string // gateway URL
}

func newBenchEnv(b *testing.B) *benchEnv { return newBenchEnvTB(b) }

func newBenchEnvTB(b testing.TB) *benchEnv {
	b.Helper()
	mock := mockprovider.StartTest(b, mockprovider.ProviderSpec{Name: "alpha", Format: llm.FormatOpenAI, Seed: 1,
		Models: []mockprovider.ModelSpec{{Name: "gpt-4o", OutputTokens: mockprovider.Length{Min: 20, Max: 20}}}})
	srv, gw := startBenchGateway(b, mock.URL, "")
	tr := &http.Transport{MaxIdleConnsPerHost: 1024, DisableCompression: true}
	return &benchEnv{mock: mock, gw: gw, srv: srv, client: &http.Client{Transport: tr},
		direct: mock.URL + "/v1/chat/completions", through: gw.URL + "/v1/chat/completions"}
}

// startBenchGateway starts a gateway on benchConfig for the mock at
// mockURL; extra is appended to its configuration.
func startBenchGateway(b testing.TB, mockURL, extra string) (*gateway.Server, *httptest.Server) {
	return startBenchGatewayOn(b, mockURL, extra, nil)
}

// startBenchGatewayOn is startBenchGateway with the gateway's upstream
// transport tr (nil: its own).
func startBenchGatewayOn(b testing.TB, mockURL, extra string, tr http.RoundTripper) (*gateway.Server, *httptest.Server) {
	b.Helper()
	cfg, err := gateway.ParseConfig("bench.yaml", []byte(benchConfig(mockURL)+extra), gateway.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := gateway.New(cfg, gateway.Options{Events: events.Discard, Logger: slog.New(slog.DiscardHandler), Transport: tr})
	if err != nil {
		b.Fatal(err)
	}
	gw := httptest.NewServer(srv.Handler())
	b.Cleanup(func() {
		gw.Close()
		_ = srv.Close()
	})
	return srv, gw
}

// benchConfig is the benchmarks' gateway configuration on the mock at url.
func benchConfig(url string) string {
	return fmt.Sprintf(`version: 1
providers:
  - {name: alpha, kind: openai, base_url: "%s/v1", api_key: sk-bench}
routes:
  - name: chat
    targets:
      - {provider: alpha, model: gpt-4o, price: {input_per_mtok: 2.5, output_per_mtok: 10}}
cache: {max_entries: -1}
`, url)
}

func benchBody(stream bool, model string) []byte {
	return fmt.Appendf(nil, `{"model":%q,"stream":%v,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Summarise the incident report in two sentences."}]}`, model, stream)
}

// call makes one request and returns its latency and the time to the
// first streamed content chunk.
func (e *benchEnv) call(b testing.TB, url string, body []byte, stream bool) (total, ttft time.Duration) {
	start := time.Now()
	resp, err := e.client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		msg, _ := io.ReadAll(resp.Body)
		b.Fatalf("status %d: %s", resp.StatusCode, msg)
	}
	if !stream {
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		return time.Since(start), 0
	}
	sc := bufio.NewScanner(resp.Body)
	done := false
	for sc.Scan() {
		line := sc.Bytes()
		if ttft == 0 && bytes.Contains(line, []byte(`"content":"`)) {
			ttft = time.Since(start)
		}
		if bytes.Equal(line, []byte("data: [DONE]")) {
			done = true
		}
	}
	if !done {
		b.Fatal("stream without [DONE]")
	}
	return time.Since(start), ttft
}

func percentile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q * float64(len(s)-1))
	return float64(s[i]) / float64(time.Microsecond)
}

func benchSequential(b *testing.B, direct bool, stream bool) {
	e := newBenchEnv(b)
	url, model := e.through, "chat"
	if direct {
		url, model = e.direct, "gpt-4o"
	}
	body := benchBody(stream, model)
	for range 50 { // warm up connections and pools
		e.call(b, url, body, stream)
	}
	var lat, ttfts []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d, f := e.call(b, url, body, stream)
		lat = append(lat, d)
		if stream {
			ttfts = append(ttfts, f)
		}
	}
	b.StopTimer()
	b.ReportMetric(percentile(lat, .5), "p50-µs")
	b.ReportMetric(percentile(lat, .99), "p99-µs")
	if stream {
		b.ReportMetric(percentile(ttfts, .5), "ttft-p50-µs")
		b.ReportMetric(percentile(ttfts, .99), "ttft-p99-µs")
	}
}

func benchParallel(b *testing.B, direct bool) {
	e := newBenchEnv(b)
	url, model := e.through, "chat"
	if direct {
		url, model = e.direct, "gpt-4o"
	}
	body := benchBody(false, model)
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.call(b, url, body, false)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

func BenchmarkDirect(b *testing.B) {
	b.Run("complete", func(b *testing.B) { benchSequential(b, true, false) })
	b.Run("stream", func(b *testing.B) { benchSequential(b, true, true) })
	b.Run("parallel", func(b *testing.B) { benchParallel(b, true) })
}

func BenchmarkGateway(b *testing.B) {
	b.Run("complete", func(b *testing.B) { benchSequential(b, false, false) })
	b.Run("stream", func(b *testing.B) { benchSequential(b, false, true) })
	b.Run("parallel", func(b *testing.B) { benchParallel(b, false) })
}

// holdUpstream is an OpenAI-format upstream whose streams send one chunk and
// then wait until released: streams that stay open, for memory accounting.
type holdUpstream struct {
	release chan struct{}
}

func (h *holdUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	_, _ = io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}`+"\n\n")
	w.(http.Flusher).Flush()
	select {
	case <-h.release:
	case <-r.Context().Done():
		return
	}
	_, _ = io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
}

// BenchmarkStreams holds 1,000 concurrent streams open, direct and through
// the gateway, and reports the memory (heap and stacks) per stream; the
// difference is the gateway's cost of a stream. The gateway's limit of
// concurrent streams (limits.max_concurrent_streams, 512 by default) is
// raised to the 1,000; a stream refused fails the benchmark.
func BenchmarkStreams(b *testing.B) {
	const n = 1000
	for _, c := range []struct {
		name         string
		through, h2c bool
	}{{"direct", false, false}, {"gateway", true, false}, {"gateway-h2c-upstream", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			var perStream, stack float64
			for b.Loop() {
				perStream, stack = holdStreams(b, n, c.through, c.h2c)
			}
			b.ReportMetric(perStream, "B/stream")
			b.ReportMetric(stack, "stack-B/stream")
		})
	}
}

// holdStreams opens n streams and returns the memory in use per stream
// (heap and stacks) and the stacks' share.
// With h2c the gateway reaches the upstream over HTTP/2 (cleartext), as it
// reaches real providers over HTTP/2 with TLS: streams share connections.
func holdStreams(b *testing.B, n int, through, h2c bool) (perStream, stack float64) {
	up := &holdUpstream{release: make(chan struct{})}
	ups := httptest.NewUnstartedServer(up)
	protocol := ""
	if h2c {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		ups.Config.Protocols = &p
		protocol = ", protocol: h2c"
	}
	ups.Start()
	defer ups.Close()
	url := ups.URL + "/v1/chat/completions"
	var cleanup func()
	if through {
		cfg, err := gateway.ParseConfig("bench.yaml", []byte(fmt.Sprintf(`version: 1
providers:
  - {name: alpha, kind: openai, base_url: "%s/v1"%s}
routes:
  - name: chat
    targets: [{provider: alpha, model: gpt-4o, timeouts: {idle: 5m}}]
cache: {max_entries: -1}
limits: {max_concurrent_streams: %d}
`, ups.URL, protocol, n)), gateway.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		srv, err := gateway.New(cfg, gateway.Options{Events: events.Discard, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		gws := httptest.NewServer(srv.Handler())
		url = gws.URL + "/v1/chat/completions"
		cleanup = func() { gws.Close(); _ = srv.Close() }
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0, DisableCompression: true}}
	body := benchBody(true, "chat")
	if !through {
		body = benchBody(true, "gpt-4o")
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	defer func() { // also when a refused stream fails the benchmark (FailNow)
		close(up.release)
		wg.Wait()
		client.CloseIdleConnections()
		if cleanup != nil {
			cleanup()
		}
	}()
	opened := make(chan struct{}, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err == nil && resp.StatusCode != http.StatusOK {
				// Refused (a limit of the gateway's): the stream is not held.
				msg, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				err = fmt.Errorf("stream refused: %d %s", resp.StatusCode, msg)
			}
			if err != nil {
				b.Error(err)
				opened <- struct{}{}
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			_, _ = br.ReadString('\n') // the first chunk arrived: the upstream holds the stream
			opened <- struct{}{}
			_, _ = io.Copy(io.Discard, br)
		}()
	}
	for range n {
		<-opened
	}
	if b.Failed() {
		b.FailNow()
	}
	runtime.GC()
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	if p := os.Getenv("BROWNOUT_HEAP_PROFILE"); p != "" && through {
		if f, err := os.Create(p); err == nil {
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	if p := os.Getenv("BROWNOUT_GOROUTINE_PROFILE"); p != "" && through {
		if f, err := os.Create(p); err == nil {
			_ = pprof.Lookup("goroutine").WriteTo(f, 1)
			f.Close()
		}
	}
	used := float64(during.HeapInuse+during.StackInuse) - float64(before.HeapInuse+before.StackInuse)
	return used / float64(n), (float64(during.StackInuse) - float64(before.StackInuse)) / float64(n)
}

var _ = strings.Contains

// discardCollector starts an OTLP/HTTP collector that reads and discards
// every export, with the OTEL_* endpoint variables cleared for the
// benchmark, and returns its URL.
func discardCollector(b *testing.B) string {
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	b.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(collector.Close)
	return collector.URL
}
