package scenarios

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/scenarios/score"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TestSweepDeterministic: a sweep played in parallel is the same bytes
// every time, each seed scored as its own run is.
func TestSweepDeterministic(t *testing.T) {
	s, err := Load("testdata/short.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out [2][]byte
	for i := range out {
		sw, err := RunSweep(context.Background(), s, 4)
		if err != nil {
			t.Fatal(err)
		}
		out[i], _ = json.Marshal(sw)
		if len(sw.Seeds) != 4 || sw.Seeds[0] != s.Seed || sw.Seeds[3] != s.Seed+3 {
			t.Fatalf("seeds %v", sw.Seeds)
		}
	}
	if string(out[0]) != string(out[1]) {
		t.Error("two sweeps of the same seeds differ")
	}
	// The worst availability of the sweep is the lowest of the runs.
	var sw Sweep
	_ = json.Unmarshal(out[0], &sw)
	worst := 1.0
	for i := range 4 {
		seed := s.Seed + uint64(i)
		res, err := Run(context.Background(), s, Options{Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		worst = min(worst, res.Overall.Availability.Success)
	}
	for _, sc := range sw.Scores {
		if sc.Name == "availability" && sc.Step == "" && (sc.Worst == nil || *sc.Worst != worst || sc.N != 4) {
			t.Errorf("availability %+v, want worst %v over 4 seeds", sc, worst)
		}
	}
}

// TestSweepSummary: median, p90 and worst rank missing values (not
// detected) last; pass rates count verdicts and meet the required rate.
func TestSweepSummary(t *testing.T) {
	rate := yamlfile.Percent(0.75)
	s := &Scenario{Name: "x", Expect: score.Expect{PassRate: &rate}}
	var results []*score.Result
	for i, ttd := range []time.Duration{4, 2, 0, 1, 3, 5, 6, 7, 8, 9} { // seconds; 0: not detected
		f := score.FaultScore{Step: "s", Target: "a:m", Detected: ttd > 0, TTD: ttd * time.Second, DetectedBy: "breaker", Recovered: true}
		results = append(results, &score.Result{Faults: []score.FaultScore{f},
			Expectations: []score.Verdict{{Name: "ttd", Step: "s", Target: "a:m", Want: "<= 8s", Pass: ttd > 0 && ttd <= 8}}})
		_ = i
	}
	sw := s.summarize(make([]uint64, len(results)), results)
	var ttd SweepScore
	for _, sc := range sw.Scores {
		if sc.Name == "ttd" {
			ttd = sc
		}
	}
	sec := func(v float64) *float64 { v *= 1e9; return &v }
	want := SweepScore{Name: "ttd", Step: "s", Target: "a:m", Unit: "duration", HigherIsWorse: true, N: 10, Missing: 1,
		Median: sec(5), P90: sec(9), Worst: nil, Best: sec(1), DetectedBy: map[string]int{"breaker": 9}}
	if d := cmp.Diff(want, ttd); d != "" {
		t.Errorf("ttd (-want +got):\n%s", d)
	}
	if len(sw.Expectations) != 1 || sw.Expectations[0].Passed != 8 || sw.Expectations[0].Rate != 0.8 || !sw.Pass {
		t.Errorf("expectations %+v pass=%v, want 8 of 10 passing a 75%% requirement", sw.Expectations, sw.Pass)
	}
	rate = 0.9
	if sw := s.summarize(make([]uint64, len(results)), results); sw.Pass {
		t.Error("80% passed a 90% requirement")
	}
}

// BenchmarkSeedSweep plays 32 seeds of the flagship game day in parallel
// and reports the sweep's wall time against 32 times one seed's (measured
// here, one seed alone) and the speedup against the cores used.
func BenchmarkSeedSweep(b *testing.B) {
	s, err := Load("../examples/gamedays/primary-429-storm.yaml")
	if err != nil {
		b.Fatal(err)
	}
	const n = 32
	start := time.Now()
	for range 3 {
		if _, err := Run(context.Background(), s, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	one := time.Since(start) / 3
	b.ReportAllocs()
	start = time.Now()
	for b.Loop() {
		if _, err := RunSweep(context.Background(), s, n); err != nil {
			b.Fatal(err)
		}
	}
	sweep := time.Since(start) / time.Duration(b.N)
	speedup := float64(n*one) / float64(sweep)
	b.ReportMetric(sweep.Seconds(), "sweep-s")
	b.ReportMetric((n * one).Seconds(), "32×one-s")
	b.ReportMetric(speedup, "speedup")
	b.ReportMetric(speedup/float64(runtime.GOMAXPROCS(0)), "speedup/core")
}
