package scenarios

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/scenarios/score"
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
	sim, err := Run(context.Background(), s, Options{Mode: score.ModeSim})
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	live, err := Run(context.Background(), s, Options{Mode: score.ModeLive, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sim: %+v\nlive: %+v", sim.Overall, live.Overall)
	if live.Mode != score.ModeLive || live.Aborted {
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
	res, err := Run(ctx, s, Options{Mode: score.ModeLive})
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

// TestLiveBlackBox drives a gateway the scenario does not start, at a URL:
// the mocks listen on the ports the providers file names, the gateway's
// events are not seen, and detection is the traffic shift in the journals.
func TestLiveBlackBox(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("live run takes 10s of real time; timings need a build without -race")
	}
	cfg, err := gateway.LoadConfig("../examples/gamedays/env/gateway.yaml", gateway.LoadOptions{LookupEnv: lookupPlaceholder})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := gateway.New(cfg, gateway.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done; _ = srv.Close() })

	src := `version: 1
name: black-box
seed: 5
duration: 10s
providers: {file: ../examples/gamedays/env/providers.yaml}
gateway: {url: "http://` + ln.Addr().String() + `", primary: openai/gpt-4o}
traffic:
  - {route: chat, rate: 20/s, stream: 50%, prompt_tokens: 100}
timeline:
  - {name: gpt4o-503, at: 3s, for: 5s, target: openai/gpt-4o, fault: {kind: http_error, status: 503}}
expect:
  ttd: {max: 5s}
  availability: {min: 95%}
`
	s, err := Parse("blackbox.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), s, Options{Mode: score.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res.Failed())
	if !res.BlackBox {
		t.Fatal("not scored as a black box")
	}
	f, _ := res.Fault("gpt4o-503", "")
	if !f.Detected || f.DetectedBy != "traffic_shift" {
		t.Fatalf("detected=%v by=%q, want traffic_shift", f.Detected, f.DetectedBy)
	}
	requirePass(t, res)
}

// TestLiveEndLetsRequestsFinish: at a scenario's end the requests in flight
// finish within their client timeout, as in the simulator, instead of being
// canceled (and counted failed) after a short drain.
func TestLiveEndLetsRequestsFinish(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a live run of about 9s of real time; timings need a build without -race")
	}
	s, err := Load("testdata/drain/long-streams.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sim, err := Run(context.Background(), s, Options{Mode: score.ModeSim})
	if err != nil {
		t.Fatal(err)
	}
	live, err := Run(context.Background(), s, Options{Mode: score.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*score.Result{sim, live} {
		a := r.Overall.Availability
		if a.Requests == 0 || a.Failed != 0 {
			t.Errorf("%s: %d requests, %d failed; want every long stream served", r.Mode, a.Requests, a.Failed)
		}
	}
	if sim.Overall.Availability.Requests != live.Overall.Availability.Requests {
		t.Errorf("requests: sim %d, live %d", sim.Overall.Availability.Requests, live.Overall.Availability.Requests)
	}
}
