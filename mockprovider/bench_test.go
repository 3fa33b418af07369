package mockprovider_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
)

// BenchmarkPlan measures planning one request (Plan then Finish).
// "filler" is the typical game-day answer (examples/gamedays/env: lognormal
// TTFT, 90 tokens/s with 20% jitter, 40 to 160 filler tokens, no fault);
// "faults" is a longer answer (median 200 tokens) with a 429 and a stall
// fault drawn for some requests. "filler-reuse" is "filler" planned by a
// Planner into one reused plan. "filler-sim" is "filler" as the game-day
// simulator plans it: a Planner, a prompt cache, a 200-token prompt shared
// by the requests.
func BenchmarkPlan(b *testing.B) {
	filler := spec("openai", llm.FormatOpenAI, "gpt-4o")
	filler.Models[0].TTFT = faults.Latency{Median: yamlfile.Duration(350 * time.Millisecond), P99: yamlfile.Duration(1200 * time.Millisecond)}
	filler.Models[0].TokensPerSecond = 90
	filler.Models[0].Jitter = 0.2
	filler.Models[0].OutputTokens = mockprovider.Length{Min: 40, Max: 160}
	withFaults := realistic()
	withFaults.Models[0].OutputTokens = mockprovider.Length{Median: 200, P99: 800}
	sim := filler
	sim.PromptCache = &mockprovider.CacheSpec{TTL: yamlfile.Duration(5 * time.Minute), MinTokens: 128}
	for _, bc := range []struct {
		name       string
		spec       mockprovider.ProviderSpec
		reuse, sim bool
	}{{"filler", filler, false, false}, {"filler-reuse", filler, true, false}, {"filler-sim", sim, true, true},
		{"faults", withFaults, false, false}} {
		b.Run(bc.name, func(b *testing.B) {
			m := newModel(b, bc.spec)
			pl, err := mockprovider.NewPlanner(bc.spec, nil)
			if err != nil {
				b.Fatal(err)
			}
			req := userReq("gpt-4o", "Explain retry budgets in two paragraphs.")
			if bc.sim {
				req = userReq("gpt-4o", strings.Repeat("Explain retry budgets in two paragraphs. ", 20))
			}
			var reused mockprovider.Plan
			now := t0
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if bc.reuse {
					pl.PlanInto(&reused, now, req, mockprovider.Meta{RequestID: "r"})
					pl.Finish(now, &reused)
				} else {
					p := m.Plan(now, req, mockprovider.Meta{RequestID: "r"})
					m.Finish(now, p)
				}
				now = now.Add(time.Millisecond)
			}
			// On a shared machine wall time lies; CPU time (all threads,
			// GC included) says what one core does.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's CPU time (user and system, all threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, DisableCompression: true}}
}

// BenchmarkNonStreaming measures non-streamed requests per second through
// HTTP on loopback with zero latency settings (client and server on the
// same machine).
func BenchmarkNonStreaming(b *testing.B) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.Models[0].OutputTokens = mockprovider.Length{Fixed: 20}
	s.JournalSize = 10_000
	p := mockprovider.StartTest(b, s)
	c := benchClient()
	body := []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"What is the capital of France?"}]}`)
	url := p.URL + "/v1/chat/completions"
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := c.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkStreamingTokens measures streamed tokens per second through HTTP
// on loopback with zero latency settings: each request streams 2000 tokens
// that the client reads event by event.
func BenchmarkStreamingTokens(b *testing.B) {
	const tokens = 2000
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.Models[0].OutputTokens = mockprovider.Length{Fixed: tokens}
	s.JournalSize = 10_000
	p := mockprovider.StartTest(b, s)
	c := benchClient()
	body := []byte(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"Tell me a long story."}]}`)
	url := p.URL + "/v1/chat/completions"
	b.ReportAllocs()
	b.SetParallelism(2)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := c.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			events := 0
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if bytes.HasPrefix(sc.Bytes(), []byte("data: ")) {
					events++
				}
			}
			resp.Body.Close()
			// role chunk + tokens + finish + [DONE]
			if events != tokens+3 {
				b.Errorf("%d events", events)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)*tokens/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkFaultsApply measures selecting and applying a stack of faults.
func BenchmarkFaultsApply(b *testing.B) {
	var set faults.Set
	d := faults.Fixed(time.Second)
	p50 := yamlfile.Percent(0.5)
	for _, s := range []faults.Spec{
		{Kind: faults.KindTTFT, Delay: &d},
		{Kind: faults.KindStall, For: yamlfile.Duration(time.Second), Selector: faults.Selector{Probability: &p50}},
		{Kind: faults.KindCut, After: intp(100), Selector: faults.Selector{Model: "gpt-*"}},
	} {
		if _, err := set.Add(t0, s); err != nil {
			b.Fatal(err)
		}
	}
	m := newModel(b, spec("openai", llm.FormatOpenAI, "gpt-4o"))
	base := m.Plan(t0, userReq("gpt-4o", "hi"), mockprovider.Meta{})
	e := &faults.Env{Provider: "openai", Model: "gpt-4o", Format: llm.FormatOpenAI, Request: userReq("gpt-4o", "hi"), Rand: nil}
	e.Rand = newRand()
	b.ReportAllocs()
	for b.Loop() {
		p := *base
		p.TokenTimes = append([]time.Duration(nil), base.TokenTimes...)
		set.Apply(t0, &p, e)
	}
}

// BenchmarkJournalEntries measures reading a long journal (the simulator
// converts every attempt for scoring): an op reads 100,000 entries.
func BenchmarkJournalEntries(b *testing.B) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.JournalSize = 200_000
	m := newModel(b, s)
	req := userReq("gpt-4o", "Explain retry budgets in two paragraphs.")
	now := t0
	for i := range 100_000 {
		p := m.Plan(now, req, mockprovider.Meta{RequestID: "r"})
		if i%10 != 0 {
			m.Finish(now.Add(time.Second), p)
		}
		now = now.Add(time.Millisecond)
	}
	b.ReportAllocs()
	tokens := 0
	for b.Loop() {
		for e := range m.JournalEntries() {
			tokens += e.TokensSent
		}
	}
	if tokens == 0 {
		b.Fatal("no tokens")
	}
}
