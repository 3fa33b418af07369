package faults_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/yamlfile"
)

func TestLatencyYAML(t *testing.T) {
	tests := []struct {
		src  string
		dist string
	}{
		{`300ms`, faults.DistFixed},
		{`{fixed: 300ms}`, faults.DistFixed},
		{`{min: 100ms, max: 900ms}`, faults.DistUniform},
		{`{mean: 400ms, stddev: 100ms}`, faults.DistNormal},
		{`{median: 400ms, p99: 2s}`, faults.DistLognormal},
	}
	for _, tt := range tests {
		var l faults.Latency
		if _, err := yamlfile.Decode("l.yaml", []byte(tt.src), &l); err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		if l.Dist != tt.dist || l.Validate() != nil {
			t.Errorf("%s: dist %q, validate %v", tt.src, l.Dist, l.Validate())
		}
	}
	var l faults.Latency
	if _, err := yamlfile.Decode("l.yaml", []byte("{median: 1s, p99: 2s, bogus: 1}"), &l); err == nil {
		t.Fatal("unknown field accepted")
	}
}

func TestLatencySample(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	quantiles := func(l faults.Latency) (p50, p99 time.Duration) {
		xs := make([]time.Duration, 20000)
		for i := range xs {
			xs[i] = l.Sample(r)
		}
		sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
		return xs[len(xs)/2], xs[len(xs)*99/100]
	}
	p50, p99 := quantiles(faults.Latency{Median: yamlfile.Duration(400 * time.Millisecond), P99: yamlfile.Duration(2 * time.Second)})
	if p50 < 370*time.Millisecond || p50 > 430*time.Millisecond || p99 < 1700*time.Millisecond || p99 > 2300*time.Millisecond {
		t.Errorf("lognormal: p50 %v p99 %v", p50, p99)
	}
	p50, _ = quantiles(faults.Latency{Min: yamlfile.Duration(100 * time.Millisecond), Max: yamlfile.Duration(300 * time.Millisecond)})
	if p50 < 190*time.Millisecond || p50 > 210*time.Millisecond {
		t.Errorf("uniform: p50 %v", p50)
	}
	l := faults.Latency{Mean: yamlfile.Duration(10 * time.Millisecond), Stddev: yamlfile.Duration(100 * time.Millisecond)}
	for range 1000 {
		if l.Sample(r) < 0 {
			t.Fatal("normal sample below zero")
		}
	}
}

// TestSamplerIsSample: a prepared Sampler draws what Latency.Sample draws,
// draw for draw, for every distribution.
func TestSamplerIsSample(t *testing.T) {
	ms := func(v int) yamlfile.Duration { return yamlfile.Duration(time.Duration(v) * time.Millisecond) }
	for _, l := range []faults.Latency{
		{},
		faults.Fixed(300 * time.Millisecond),
		{Min: ms(100), Max: ms(900)},
		{Mean: ms(400), Stddev: ms(300), Min: ms(50)},
		{Median: ms(400), P99: ms(2000), Max: ms(1500)},
		{Median: ms(400)},
	} {
		t.Run(fmt.Sprintf("%+v", l), func(t *testing.T) {
			r1, r2 := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
			s := l.Sampler()
			if s.IsZero() != l.IsZero() {
				t.Fatalf("IsZero %v, want %v", s.IsZero(), l.IsZero())
			}
			for i := range 200 {
				if a, b := s.Sample(r1), l.Sample(r2); a != b {
					t.Fatalf("draw %d: sampler %v, latency %v", i, a, b)
				}
			}
		})
	}
}
