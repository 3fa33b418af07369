package score

import (
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
)

// TestDetectionBySignal: a TTFT step (20s–60s) followed by a token-rate
// step (60s–300s) on one target. Health demotes it for its first token at
// 25s and again at 60.6s (the previous step's signal, seen late), then for
// its time per output token at 103.7s. The token-rate step is not masked
// by a demotion that names another fault's signal, and its detection is the
// one that names its own: 43.7s, never the 600ms sla_first_token demotion.
func TestDetectionBySignal(t *testing.T) {
	health := func(b *logb, d time.Duration, from, to, reason string) {
		b.ev(d, events.Event{Kind: events.HealthChange, Target: "a:m", From: from, To: to, Reason: reason})
	}
	steps := func(b *logb) {
		b.ev(20*time.Second, events.Event{Kind: events.FaultStart, Name: "ttft", Target: "a:m", Reason: "ttft"})
		b.ev(60*time.Second, events.Event{Kind: events.FaultEnd, Name: "ttft", Target: "a:m"})
		b.ev(60*time.Second, events.Event{Kind: events.FaultStart, Name: "slow-tokens", Target: "a:m", Reason: "token_rate"})
		b.ev(300*time.Second, events.Event{Kind: events.FaultEnd, Name: "slow-tokens", Target: "a:m"})
	}
	tests := []struct {
		name string
		log  func(b *logb)
		// want for the token-rate step
		masked   bool
		detected bool
		ttd      time.Duration
		by       string
	}{
		{"demoted for the first token when the step starts: not masked, own signal later", func(b *logb) {
			health(b, 25*time.Second, "healthy", "unhealthy", "sla_first_token")
			health(b, 60600*time.Millisecond, "unhealthy", "unhealthy", "sla_first_token")
			health(b, 103700*time.Millisecond, "unhealthy", "unhealthy", "sla_time_per_output_token")
		}, false, true, 43700 * time.Millisecond, "health"},
		{"healthy when the step starts: the other step's late demotion is not credited", func(b *logb) {
			health(b, 25*time.Second, "healthy", "unhealthy", "sla_first_token")
			health(b, 55*time.Second, "unhealthy", "healthy", "window_elapsed")
			health(b, 60600*time.Millisecond, "healthy", "unhealthy", "sla_first_token")
			health(b, 103700*time.Millisecond, "unhealthy", "unhealthy", "sla_time_per_output_token")
		}, false, true, 43700 * time.Millisecond, "health"},
		{"only the other step's signal: not detected", func(b *logb) {
			health(b, 25*time.Second, "healthy", "unhealthy", "sla_first_token")
			health(b, 55*time.Second, "unhealthy", "healthy", "window_elapsed")
			health(b, 60600*time.Millisecond, "healthy", "unhealthy", "sla_first_token")
		}, false, false, 0, ""},
		{"demoted by its own signal already: masked, not re-detected", func(b *logb) {
			health(b, 58*time.Second, "healthy", "unhealthy", "sla_time_per_output_token")
		}, true, false, 0, ""},
		{"passive health names no signal: masked as before", func(b *logb) {
			health(b, 25*time.Second, "healthy", "unhealthy", "failures")
		}, true, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &logb{}
			steps(b)
			tt.log(b)
			b.req(30*time.Second, events.OutcomeServed, att{target: "a:m", class: "ok"})
			b.req(120*time.Second, events.OutcomeServed, att{target: "a:m", class: "ok", dur: 5 * time.Second})
			res := b.score(320 * time.Second)
			f, _ := res.Fault("slow-tokens", "a:m")
			if f.Masked != tt.masked || f.Detected != tt.detected || f.TTD != tt.ttd || f.DetectedBy != tt.by {
				t.Errorf("masked=%v detected=%v ttd=%v by %q; want masked=%v detected=%v ttd=%v by %q",
					f.Masked, f.Detected, f.TTD, f.DetectedBy, tt.masked, tt.detected, tt.ttd, tt.by)
			}
			// The TTFT step is detected at 25s by a demotion that can be
			// its own; a token-rate demotion during it is not its detection.
			first, _ := res.Fault("ttft", "a:m")
			if wantFirst := tt.name != "demoted by its own signal already: masked, not re-detected"; first.Detected != wantFirst ||
				(wantFirst && first.TTD != 5*time.Second) {
				t.Errorf("ttft step: detected=%v ttd=%v by %q, want detected=%v", first.Detected, first.TTD, first.DetectedBy, wantFirst)
			}
		})
	}
}
