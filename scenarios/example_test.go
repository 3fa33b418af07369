package scenarios_test

import (
	"context"
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// Run a game day in virtual time and read its typed scores.
func ExampleRun() {
	s, err := scenarios.Load("testdata/short.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := scenarios.Run(context.Background(), s, scenarios.Options{Mode: score.ModeSim})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, detected := res.TTD("gpt4o-down")
	fmt.Println("pass:", res.Pass)
	fmt.Println("detected:", detected)
	fmt.Println("availability >= 99%:", res.Availability() >= 0.99)
	// Output:
	// pass: true
	// detected: true
	// availability >= 99%: true
}

// Score a hand-written event log: a fault starts at 10s and the breaker of
// the faulted target opens 2.5s later.
func ExampleScore() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	log := []events.Event{
		{Time: t0.Add(10 * time.Second), Kind: events.FaultStart, Name: "openai-429", Target: "openai:gpt-4o"},
		{Time: t0.Add(12500 * time.Millisecond), Kind: events.BreakerTransition, Target: "openai:gpt-4o", From: "closed", To: "open"},
		{Time: t0.Add(40 * time.Second), Kind: events.FaultEnd, Name: "openai-429", Target: "openai:gpt-4o"},
	}
	res := score.Score(score.Input{Events: log, Start: t0, End: t0.Add(time.Minute)})
	f, _ := res.Fault("openai-429", "openai/gpt-4o")
	ts, _ := res.Target("openai:gpt-4o")
	fmt.Println(f.TTD, f.DetectedBy, ts.Openings)
	// Output:
	// 2.5s breaker 1
}

// Name the gateways of a bake-off as `gameday compare --gateway` does: a
// running gateway by URL, brownout's own by its config file.
func ExampleParseContestant() {
	for _, arg := range []string{"other=http://127.0.0.1:8787", "brownout=gateway.yaml", "nameless"} {
		c, err := scenarios.ParseContestant(arg)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%s: %s\n", c.Name, c.Where())
	}
	// Output:
	// other: http://127.0.0.1:8787
	// brownout: brownout gateway gateway.yaml
	// error: "nameless": want NAME=URL or NAME=GATEWAY_CONFIG
}

// FormatDuration is how verdicts and every report print a measured
// duration: rounded to 100 ms.
func ExampleFormatDuration() {
	for _, d := range []time.Duration{829107756, 11390393840, 62700 * time.Millisecond} {
		fmt.Println(score.FormatDuration(d))
	}
	// Output:
	// 800ms
	// 11.4s
	// 1m2.7s
}
