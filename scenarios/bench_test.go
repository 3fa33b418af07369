package scenarios

import (
	"context"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSim runs the flagship game day (6 simulated minutes at 20
// requests/s) and reports simulated user requests per wall-clock second.
func BenchmarkSim(b *testing.B) {
	benchSim(b, "../examples/gamedays/primary-429-storm.yaml")
}

// BenchmarkSimHour runs an hour at 100 requests/s with a 10-minute 429 storm.
func BenchmarkSimHour(b *testing.B) {
	benchSim(b, "testdata/hour.yaml")
}

// BenchmarkSimLean measures the simulator's own overhead: 10 minutes at
// 200 requests/s with 4-token answers and 8-token prompts.
func BenchmarkSimLean(b *testing.B) {
	benchSim(b, "testdata/lean.yaml")
}

func benchSim(b *testing.B, file string) {
	s, err := Load(file)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	reqs := 0
	start := time.Now()
	cpu0 := cpuTime()
	for b.Loop() {
		res, err := Run(context.Background(), s, Options{})
		if err != nil {
			b.Fatal(err)
		}
		reqs += res.Overall.Availability.Requests
	}
	b.ReportMetric(float64(reqs)/time.Since(start).Seconds(), "sim-req/s")
	// On a shared machine wall time lies; CPU time (user+system, all
	// threads, GC included) says what one core does.
	b.ReportMetric(float64(reqs)/(cpuTime()-cpu0).Seconds(), "sim-req/cpu-s")
}

// BenchmarkSimHourPromRules is BenchmarkSimHour with the example
// Prometheus rules (9) scraped and evaluated every 15s of virtual time
// (on), and the same scenario with them left out (off).
func BenchmarkSimHourPromRules(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run(map[bool]string{true: "on", false: "off"}[on], func(b *testing.B) {
			s, err := Load("testdata/hour-promrules.yaml")
			if err != nil {
				b.Fatal(err)
			}
			if !on {
				s.env.promRules = nil
			}
			b.ReportAllocs()
			cpu0, n := cpuTime(), 0
			for b.Loop() {
				res, err := Run(context.Background(), s, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if on != (res.PromAlerts != nil) {
					b.Fatal("rules on/off not as asked")
				}
				n++
			}
			// Wall time lies on a shared machine: CPU time per run (all
			// threads, GC included) is the comparison.
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(n), "cpu-s/op")
		})
	}
}
