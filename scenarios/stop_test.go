package scenarios

import (
	"github.com/brownout-dev/brownout/scenarios/score"
	"strings"
	"testing"
	"time"
)

func TestGoodEnd(t *testing.T) {
	slo := score.SLO{Correctness: true, TTFT: score.LatencyObjective{Max: time.Second}, Latency: score.LatencyObjective{Max: 5 * time.Second}}
	tests := []struct {
		name string
		slo  score.SLO
		f    score.EndFacts
		want bool
	}{
		{"failed", slo, score.EndFacts{OK: false, Dur: time.Millisecond}, false},
		{"stream in time", slo, score.EndFacts{OK: true, Stream: true, TTFT: time.Second}, true},
		{"stream late first token", slo, score.EndFacts{OK: true, Stream: true, TTFT: time.Second + 1}, false},
		{"stream late total is fine", slo, score.EndFacts{OK: true, Stream: true, TTFT: time.Millisecond, Dur: time.Hour}, true},
		{"non-stream in time", slo, score.EndFacts{OK: true, Dur: 5 * time.Second}, true},
		{"non-stream late", slo, score.EndFacts{OK: true, Dur: 5*time.Second + 1}, false},
		{"corrupted", slo, score.EndFacts{OK: true, Corrupted: true}, false},
		{"corrupted without correctness", score.SLO{}, score.EndFacts{OK: true, Corrupted: true}, true},
		{"no latency parts", score.SLO{}, score.EndFacts{OK: true, Stream: true, TTFT: time.Hour}, true},
	}
	for _, tt := range tests {
		if got := score.GoodEnd(&tt.slo, tt.f); got != tt.want {
			t.Errorf("%s: GoodEnd = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestStopWindowTakesBackCorrupted: a request counted good whose answer is
// later found corrupted (the live engine reads the journals after the
// request ended) counts against the good-request rate.
func TestStopWindowTakesBackCorrupted(t *testing.T) {
	sw := &StopWhen{SuccessRateBelow: 0.5, For: 10_000_000_000}
	var w stopWindow
	for i := range 100 {
		w.recordID(time.Duration(i)*100*time.Millisecond, "req-"+string(rune('a'+i%26))+string(rune('0'+i/26)), true)
	}
	if _, stop := w.breached(sw, 10*time.Second, nil); stop {
		t.Fatal("all good: breached")
	}
	bad := func(id string) bool { return !strings.HasPrefix(id, "req-a") } // 96 of 100
	why, stop := w.breached(sw, 10*time.Second, bad)
	if !stop || !strings.Contains(why, "good-request rate 4%") {
		t.Fatalf("breached = %v %q", stop, why)
	}
}

// TestSimStopWhenGoodRate: every answer succeeds but none is in time;
// stop_when acts on the good-request rate and aborts the run.
func TestSimStopWhenGoodRate(t *testing.T) {
	res := runFile(t, "testdata/stop-latency.yaml")
	if res.Availability() < 0.99 {
		t.Fatalf("availability %.3f: the scenario must keep every request successful", res.Availability())
	}
	if !res.Aborted || !strings.HasPrefix(res.AbortReason, "stop_when: good-request rate") {
		t.Fatalf("aborted=%v reason=%q", res.Aborted, res.AbortReason)
	}
	if res.Elapsed >= time.Minute {
		t.Errorf("stopped after %v of virtual time, want within the first full window", res.Elapsed)
	}
}
