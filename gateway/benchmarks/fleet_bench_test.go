package benchmarks_test

// # Fleet performance
//
// What sharing the state through Redis costs a request, side by side with
// the in-memory state in one run:
//
//	go test -run '^$' -bench 'Fleet' -benchtime 2000x ./gateway/benchmarks
//
// BenchmarkFleet/complete alternates one call to a gateway with state in
// memory and one to a gateway on a redis-server (loopback), both behind
// the same client key with shared limits, on the success path: it reports
// memory-p50-µs, redis-p50-µs and added-p50-µs (aim ≤ 20 µs), and
// store-calls/req, the round trips to the store per request
// (brownout_state_store_calls_total; the background syncs of budgets and
// client limits, amortized, included). BenchmarkFleet/idempotent does the
// same with a new Idempotency-Key on every request: the claim and the
// completion are two round trips of their own.

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/internal/redistest"
)

func BenchmarkFleet(b *testing.B) {
	b.Run("complete", func(b *testing.B) { benchFleet(b, false) })
	b.Run("idempotent", func(b *testing.B) { benchFleet(b, true) })
}

func benchFleet(b *testing.B, idempotent bool) {
	e := newBenchEnv(b) // the mock provider and the memory gateway's client
	srv := redistest.Start(b)
	base := benchConfig(e.mock.URL) + `clients:
  - {id: bench, key: ck-bench-0123456789abcdef, requests_per_minute: 100000000, tokens_per_minute: 1000000000, budget: 1000000}
`
	start := func(extra string) (string, *gateway.Server) {
		cfg, err := gateway.ParseConfig("bench.yaml", []byte(base+extra), gateway.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		s, err := gateway.New(cfg, gateway.Options{Events: events.Discard, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		b.Cleanup(func() {
			hs.Close()
			_ = s.Close()
		})
		return hs.URL, s
	}
	memURL, _ := start("")
	redisURL, _ := start(fmt.Sprintf("state: {backend: redis, url: %q}\n", srv.URL()))
	body := benchBody(false, "chat")
	n := 0
	call := func(url string) time.Duration {
		n++
		req, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer ck-bench-0123456789abcdef")
		if idempotent {
			req.Header.Set("Idempotency-Key", "k"+strconv.Itoa(n))
		}
		t := time.Now()
		resp, err := e.client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d: %s", resp.StatusCode, buf.String())
		}
		return time.Since(t)
	}
	for range 50 {
		call(memURL)
		call(redisURL)
	}
	calls0 := storeCalls(b, redisURL)
	var ml, rl []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ml = append(ml, call(memURL))
		rl = append(rl, call(redisURL))
	}
	b.StopTimer()
	calls := storeCalls(b, redisURL) - calls0
	b.ReportMetric(percentile(ml, .5), "memory-p50-µs")
	b.ReportMetric(percentile(rl, .5), "redis-p50-µs")
	b.ReportMetric(percentile(rl, .5)-percentile(ml, .5), "added-p50-µs")
	b.ReportMetric(percentile(rl, .99)-percentile(ml, .99), "added-p99-µs")
	b.ReportMetric(calls/float64(len(rl)), "store-calls/req")
}

// storeCalls reads brownout_state_store_calls_total from a gateway.
func storeCalls(b *testing.B, url string) float64 {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "brownout_state_store_calls_total "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatal(err)
			}
			return f
		}
	}
	b.Fatal("no brownout_state_store_calls_total")
	return 0
}
