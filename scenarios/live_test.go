package scenarios

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

// TestFidelity runs a short game day in both modes: the simulation must
// predict the live run (TTD within 1s, availability within 1 percentage
// point, retry amplification within 10%).
func TestFidelity(t *testing.T) {
	if testing.Short() || raceEnabled {
		// The race detector slows the live engine's real-time HTTP path
		// several-fold, so live timings no longer say what the gateway does.
		t.Skip("live run takes 12s of real time; timings need a build without -race")
	}
	s, err := Load("testdata/fidelity.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sim, err := Run(context.Background(), s, Options{Mode: ModeSim})
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	live, err := Run(context.Background(), s, Options{Mode: ModeLive, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sim:\n%s\nlive:\n%s", sim.Scorecard(), live.Scorecard())
	if live.Mode != ModeLive || live.Aborted {
		t.Fatalf("live mode=%s aborted=%v", live.Mode, live.Aborted)
	}
	if !strings.Contains(progress.String(), "requests") {
		t.Errorf("no progress lines: %q", progress.String())
	}
	fs, ok1 := sim.Fault("gpt4o-503", "")
	fl, ok2 := live.Fault("gpt4o-503", "")
	if !ok1 || !ok2 || !fs.Detected || !fl.Detected {
		t.Fatalf("fault not detected in both modes: sim %+v live %+v", fs, fl)
	}
	if d := (fs.TTD - fl.TTD).Abs(); d > time.Second {
		t.Errorf("TTD sim %v live %v differ by %v > 1s", fs.TTD, fl.TTD, d)
	}
	if d := math.Abs(sim.Availability() - live.Availability()); d > 0.01 {
		t.Errorf("availability sim %.4f live %.4f differ by more than 1pp", sim.Availability(), live.Availability())
	}
	if d := math.Abs(sim.RetryAmplification()-live.RetryAmplification()) / live.RetryAmplification(); d > 0.10 {
		t.Errorf("retry amplification sim %.3f live %.3f differ by %.1f%% > 10%%", sim.RetryAmplification(), live.RetryAmplification(), d*100)
	}
	if live.Overall.Availability.Requests < 150 {
		t.Errorf("live run made only %d requests", live.Overall.Availability.Requests)
	}
}

// TestLiveCanceled: Ctrl-C stops a live run cleanly and still returns a
// partial result marked aborted.
func TestLiveCanceled(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	s, err := Load("testdata/fidelity.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := Run(ctx, s, Options{Mode: ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Aborted || res.Pass || res.AbortReason != "canceled" {
		t.Fatalf("aborted=%v pass=%v reason=%q", res.Aborted, res.Pass, res.AbortReason)
	}
	if res.Elapsed >= s.Duration.D() || res.Overall.Availability.Requests == 0 {
		t.Errorf("elapsed %v of %v, %d requests: want a partial run with traffic", res.Elapsed, s.Duration, res.Overall.Availability.Requests)
	}
}
