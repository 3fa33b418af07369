package scenarios

import (
	"github.com/brownout-dev/brownout/scenarios/score"
	"runtime"
	"testing"
)

// simInput plays file in the simulator once and returns the Input that
// runSim scores.
func simInput(tb testing.TB, file string) score.Input { return playSim(tb, file).input() }

// BenchmarkScore scores the log of an hour at 100 requests/s with a
// 10-minute 429 storm (testdata/hour.yaml), played once outside the loop.
func BenchmarkScore(b *testing.B) {
	in := simInput(b, "testdata/hour.yaml")
	reqs := 0
	b.ReportAllocs()
	runtime.GC() // the simulator's garbage is not Score's
	cpu0 := cpuTime()
	for b.Loop() {
		reqs = score.Score(in).Overall.Availability.Requests
	}
	// On a shared machine wall time lies; CPU time (all threads, GC
	// included) says what one core does.
	ns := float64((cpuTime() - cpu0).Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns/float64(in.Packed.Len()+len(in.Events)), "cpu-ns/event")
	b.ReportMetric(ns/float64(reqs), "cpu-ns/req")
}
