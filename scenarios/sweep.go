package scenarios

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// The sweep's types are score's (score.Summarize makes one).
type (
	Sweep        = score.Sweep
	SweepScore   = score.SweepScore
	SweepVerdict = score.SweepVerdict
)

// RunSweep plays s in the simulator with n seeds, the scenario's seed and
// the n-1 that follow it, in parallel on every core, and summarizes them.
func RunSweep(ctx context.Context, s *Scenario, n int) (*Sweep, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: --seeds must be at least 1 (got %d)", ErrInvalid, n)
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = s.Seed + uint64(i)
	}
	results := make([]*score.Result, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := range next {
				res, err := runSim(ctx, s, seeds[i])
				if res != nil {
					// Keep the scores, not the log.
					res.DropLog()
					res.Series = score.Series{}
				}
				results[i], errs[i] = res, err
			}
		})
	}
	for i := range seeds {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return s.summarize(seeds, results), nil
}

// RunRepeat plays s live n times, one run after another (one live run at a
// time: they share the machine's ports and time), with the scenario's seed
// and the n-1 that follow it, and summarizes them as a sweep does: each
// score's distribution over the runs, each expectation's pass rate, and the
// verdict by the stated rule, expect.pass_rate (default: every run). One
// slow window in one live run then moves a percentile, not the ranking. A
// canceled ctx stops after the run in progress (itself cut short, marked
// aborted); the runs played are summarized.
func RunRepeat(ctx context.Context, s *Scenario, n int, opts Options) (*Sweep, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: --repeat must be at least 1 (got %d)", ErrInvalid, n)
	}
	opts.Mode = ModeLive
	var seeds []uint64
	var results []*score.Result
	for i := range n {
		seed := s.Seed + uint64(i)
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "run %d of %d (seed %d)\n", i+1, n, seed)
		}
		opts.Seed = &seed
		res, err := Run(ctx, s, opts)
		if err != nil {
			return nil, err
		}
		res.DropLog()
		res.Series = score.Series{}
		seeds, results = append(seeds, seed), append(results, res)
		if ctx.Err() != nil || res.Aborted {
			break
		}
	}
	sw := s.summarize(seeds, results)
	sw.Mode = ModeLive
	if len(results) < n {
		sw.Pass = false // an aborted repeat decides nothing
	}
	return sw, nil
}

// summarize makes the sweep of results, one per seed.
func (s *Scenario) summarize(seeds []uint64, results []*score.Result) *Sweep {
	return score.Summarize(s.Name, s.file, seeds, results, &s.Expect)
}
