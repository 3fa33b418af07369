package policy_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

// A request whose primary is rate limited: one retry after Retry-After,
// then a fail-over to the next priority.
func Example() {
	cfg := policy.Config{Routes: []policy.Route{{
		Name: "chat",
		Targets: []policy.Target{
			{Provider: "openai", Model: "gpt-4o"},
			{Provider: "anthropic", Model: "claude-sonnet", Priority: 1},
		},
	}}}
	var log events.Log
	eng, err := policy.New(cfg, policy.Options{Rand: rand.New(rand.NewPCG(1, 2)), Events: &log})
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	att := eng.Begin(now, policy.Request{ID: "r1", Route: "chat"})
	for {
		d := att.Next(now)
		switch d.Kind {
		case policy.Send:
			fmt.Println("send", d.Target.Key(), "try", d.Try)
			now = now.Add(100 * time.Millisecond)
			if d.Target.Provider == "openai" {
				att.Observe(now, policy.Outcome{Class: policy.Classify(429, llm.ErrRateLimit), Status: 429, RetryAfter: time.Second})
			} else {
				att.Observe(now, policy.Outcome{Class: policy.OK, Status: 200, OutputTokens: 42})
			}
			continue
		case policy.Wait:
			fmt.Println("wait", d.Until.Sub(now))
			now = d.Until
			continue
		case policy.Fail:
			fmt.Println("fail", d.Err)
		case policy.Done:
			fmt.Println("done by", d.Target.Key())
		}
		break
	}
	for _, ev := range log.Events() {
		switch ev.Kind {
		case events.AttemptEnd:
			fmt.Println(ev.Kind, ev.Target, ev.Class)
		case events.RequestEnd:
			fmt.Println(ev.Kind, ev.Target, ev.Outcome)
		}
	}
	// Output:
	// send openai:gpt-4o try 1
	// wait 1s
	// send openai:gpt-4o try 2
	// send anthropic:claude-sonnet try 3
	// done by anthropic:claude-sonnet
	// attempt.end openai:gpt-4o rate_limited
	// attempt.end openai:gpt-4o rate_limited
	// attempt.end anthropic:claude-sonnet ok
	// request.end anthropic:claude-sonnet served
}

// The watchdog of one stream: feed it tokens, sleep until its deadline,
// ask for a verdict.
func ExampleWatchdog() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := policy.NewWatchdog(start, policy.Timeouts{
		FirstToken: yamlfile.Duration(2 * time.Second),
		Idle:       yamlfile.Duration(time.Second),
	})
	fmt.Println("first deadline", w.Deadline().Sub(start))
	w.Token(start.Add(800*time.Millisecond), 1)
	w.Token(start.Add(1200*time.Millisecond), 5)
	fmt.Println("next deadline", w.Deadline().Sub(start))
	c, fired := w.Check(w.Deadline())
	fmt.Println(c, fired)
	// Output:
	// first deadline 2s
	// next deadline 2.2s
	// stall true
}

func ExampleClassify() {
	fmt.Println(policy.Classify(429, ""))
	fmt.Println(policy.Classify(400, llm.ErrContextLength))
	fmt.Println(policy.Classify(529, llm.ErrOverloaded))
	fmt.Println(policy.Classify(401, llm.ErrAuthentication))
	// Output:
	// rate_limited
	// context_length
	// overloaded
	// auth
}

// Validate reports every problem with its dotted path, for the gateway to
// turn into file:line:col.
func ExampleConfig_Validate() {
	cfg := policy.Config{Routes: []policy.Route{{
		Name: "chat",
		Targets: []policy.Target{{
			Provider: "openai", Model: "gpt-4o",
			Retry: policy.Retry{Base: yamlfile.Duration(5 * time.Second), Cap: yamlfile.Duration(time.Second)},
		}, {Provider: "anthropic"}},
	}}}
	fmt.Println(cfg.Validate())
	// Output:
	// routes.0.targets.0.retry.base: base 5s is above cap 1s
	// routes.0.targets.1.model: required
}

// The simulator's loop: advance virtual time to the engine's next timer.
func ExampleEngine_NextTick() {
	cfg := policy.Config{Routes: []policy.Route{{Name: "chat", Targets: []policy.Target{{Provider: "openai", Model: "gpt-4o"}}}}}
	log := &events.Log{}
	eng, _ := policy.New(cfg, policy.Options{Events: log})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 3 {
		_ = eng.ProbeResult(t0, "openai:gpt-4o", false)
	}
	next := eng.NextTick()
	fmt.Println("next tick in", next.Sub(t0))
	eng.Tick(next)
	for _, ev := range log.Events() {
		fmt.Println(ev.Time.Sub(t0), ev.Kind, ev.Target, ev.From, "->", ev.To, ev.Reason)
	}
	// Output:
	// next tick in 30s
	// 0s breaker.transition openai:gpt-4o closed -> open probe_failures
	// 30s breaker.transition openai:gpt-4o open -> half_open open_for_elapsed
}

// A client that hangs up while the request waits out a Retry-After.
func ExampleAttempt_Cancel() {
	cfg := policy.Config{Routes: []policy.Route{{Name: "chat", Targets: []policy.Target{
		{Provider: "openai", Model: "gpt-4o", Retry: policy.Retry{Attempts: 2}},
	}}}}
	var log events.Log
	eng, err := policy.New(cfg, policy.Options{Rand: rand.New(rand.NewPCG(1, 2)), Events: &log})
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	att := eng.Begin(now, policy.Request{ID: "r1", Route: "chat"})
	att.Next(now) // send
	att.Observe(now, policy.Outcome{Class: policy.RateLimited, Status: 429, RetryAfter: 2 * time.Second})
	fmt.Println(att.Next(now).Kind) // wait
	att.Cancel(now.Add(time.Second))
	for _, e := range log.Events() {
		fmt.Println(e.Kind, e.Class, e.Outcome, e.Status)
	}
	fmt.Println(eng.State().Targets[0].Breaker)
	// Output:
	// wait
	// request.start   0
	// attempt.start   0
	// attempt.end rate_limited  429
	// request.end client_canceled failed 499
	// closed
}
