package policy

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/stretchr/testify/require"
)

// TestConcurrentUse drives one engine from many goroutines (run with -race)
// and checks the books balance: every request ends once, and attempts match
// attempt.start events.
func TestConcurrentUse(t *testing.T) {
	var cfg Config
	for i := range 4 {
		cfg.Routes = append(cfg.Routes, Route{Name: fmt.Sprintf("r%d", i), Targets: []Target{
			tgt("shared:big"), tgt(fmt.Sprintf("p%d:m", i), prio(1)),
		}})
	}
	var log events.Log
	e := newEngine(t, cfg, &log)
	const workers, perWorker = 8, 150
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for w := range workers {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 9))
			now := t0
			n := 0
			for i := range perWorker {
				a := e.Begin(now, Request{ID: fmt.Sprintf("w%d-%d", w, i), Route: fmt.Sprintf("r%d", rnd.IntN(4))})
				for {
					d := a.Next(now)
					if d.Kind == Send {
						n++
						now = now.Add(time.Duration(rnd.IntN(200)) * time.Millisecond)
						a.Observe(now, Outcome{Class: Classes[rnd.IntN(len(Classes))], Status: 500})
						continue
					}
					if d.Kind == Wait {
						now = d.Until
						continue
					}
					break
				}
				if i%50 == 0 {
					e.Tick(now)
					_ = e.State()
				}
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	evs := log.Events()
	require.Len(t, kinds(evs, events.RequestEnd), workers*perWorker)
	require.Len(t, kinds(evs, events.AttemptStart), total)
	require.Len(t, kinds(evs, events.AttemptEnd), total)
}

func TestStrictFallbacks(t *testing.T) {
	const a, b, c = "a:m1", "b:m2", "c:m3"
	candidate := func(t *Target) { t.FallbackCandidate = true }
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprint("strict=", strict), func(t *testing.T) {
			cfg := oneRoute(tgt(a), tgt(b, prio(1)), tgt(c, prio(2), candidate))
			cfg.Routes[0].StrictFallbacks = strict
			cfg.Routes[0].AllowHints = true
			e := newEngine(t, cfg, nil)
			_, trail, _ := drive(e, t0, Request{}, byTarget(map[string]Outcome{a: {Class: Auth, Status: 401}}))
			if strict {
				require.Equal(t, []string{a, c, "done"}, keys(trail), "only qualified fallbacks take a failed request")
			} else {
				require.Equal(t, []string{a, b, "done"}, keys(trail))
			}
			// a non-candidate is still a first choice (here by hint)
			require.Equal(t, b, e.Begin(t0, Request{Route: "chat", Hint: b}).Next(t0).Target.Key())
		})
	}
}
