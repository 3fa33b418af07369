package scenarios

import (
	"strings"
	"testing"
	"time"
)

func TestGoodEnd(t *testing.T) {
	slo := SLO{Correctness: true, TTFT: LatencyObjective{Max: time.Second}, Latency: LatencyObjective{Max: 5 * time.Second}}
	tests := []struct {
		name string
		slo  SLO
		f    endFacts
		want bool
	}{
		{"failed", slo, endFacts{ok: false, dur: time.Millisecond}, false},
		{"stream in time", slo, endFacts{ok: true, stream: true, ttft: time.Second}, true},
		{"stream late first token", slo, endFacts{ok: true, stream: true, ttft: time.Second + 1}, false},
		{"stream late total is fine", slo, endFacts{ok: true, stream: true, ttft: time.Millisecond, dur: time.Hour}, true},
		{"non-stream in time", slo, endFacts{ok: true, dur: 5 * time.Second}, true},
		{"non-stream late", slo, endFacts{ok: true, dur: 5*time.Second + 1}, false},
		{"corrupted", slo, endFacts{ok: true, corrupted: true}, false},
		{"corrupted without correctness", SLO{}, endFacts{ok: true, corrupted: true}, true},
		{"no latency parts", SLO{}, endFacts{ok: true, stream: true, ttft: time.Hour}, true},
	}
	for _, tt := range tests {
		if got := goodEnd(&tt.slo, tt.f); got != tt.want {
			t.Errorf("%s: goodEnd = %v, want %v", tt.name, got, tt.want)
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
