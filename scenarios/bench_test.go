package scenarios

import (
	"context"
	"testing"
	"time"
)

// BenchmarkSim runs the flagship game day (6 simulated minutes at 20
// requests/s) and reports simulated user requests per wall-clock second.
func BenchmarkSim(b *testing.B) {
	s, err := Load("../examples/gamedays/primary-429-storm.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	reqs := 0
	start := time.Now()
	for b.Loop() {
		res, err := Run(context.Background(), s, Options{})
		if err != nil {
			b.Fatal(err)
		}
		reqs += res.Overall.Availability.Requests
	}
	b.ReportMetric(float64(reqs)/time.Since(start).Seconds(), "sim-req/s")
}
