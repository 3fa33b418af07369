package scenarios

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/brownout-dev/brownout/internal/buildinfo"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// Mode is how a game day is played: simulated (ModeSim) or live
// (ModeLive); the façade's names for score's, which a result records.
type Mode = score.Mode

// Run modes.
const (
	ModeSim  = score.ModeSim  // discrete-event simulation in virtual time
	ModeLive = score.ModeLive // real HTTP on loopback, real time
)

// Options tune a run.
type Options struct {
	// Mode is ModeSim (default) or ModeLive.
	Mode score.Mode
	// Seed overrides the scenario's seed when non-nil.
	Seed *uint64
	// Progress receives live progress lines (live mode); nil for none.
	Progress io.Writer
	// Traces collects the in-process gateway's OpenTelemetry spans (live
	// mode, not black box) and keeps one request's trace, the one with the
	// most upstream attempts, in Result.TraceSample (and on Progress).
	Traces bool
	// Repeat plays a bake-off (Compare) this many rounds, each contestant
	// once per round with the round's seed; 0 or 1 is one round.
	Repeat int
}

// Run plays the scenario and scores it. A canceled ctx stops the run early;
// the partial result is returned, marked Aborted, with a nil error.
func Run(ctx context.Context, s *Scenario, opts Options) (*score.Result, error) {
	seed := s.Seed
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	switch opts.Mode {
	case "", score.ModeSim:
		return runSim(ctx, s, seed)
	case score.ModeLive:
		return runLive(ctx, s, seed, opts)
	}
	return nil, fmt.Errorf("%w: unknown mode %q (sim or live)", ErrInvalid, opts.Mode)
}

func runSim(ctx context.Context, s *Scenario, seed uint64) (*score.Result, error) {
	m, err := newSim(ctx, s, seed)
	if err != nil {
		return nil, err
	}
	m.run()
	if m.err != nil {
		return nil, m.err
	}
	in := m.input()
	sc := m.score.Score(in)
	if m.prom != nil {
		if m.prom.err != nil {
			return nil, m.prom.err
		}
		sc.PromAlerts = m.prom.score(sc)
	}
	res := finish(s, sc, in, score.ModeSim, seed, m.aborted)
	res.JournalFrom(m.journalOf())
	res.Start = Epoch
	res.Elapsed = time.Duration(m.end)
	return res, nil
}

// input is what a finished simulation gives the scorer.
func (m *sim) input() score.Input {
	in := m.s.scoreInput()
	in.Packed, in.End = &m.log, Epoch.Add(time.Duration(m.end))
	if m.attempts > 0 {
		// Scoring takes attempts from the log, and reads of the journals
		// only their targets and corrupted answers.
		in.Journal, in.JournalTargets = m.scoredJournal()
	} else {
		in.Journal = m.journal()
	}
	for _, t := range m.tgtList {
		if t.evals.N > 0 {
			in.Tallies = append(in.Tallies, t.evals)
		}
	}
	return in
}

// scoreInput is the scorer's input known before a simulated run.
func (s *Scenario) scoreInput() score.Input {
	return score.Input{Start: Epoch, SLO: s.SLO.slo(),
		Primary: s.env.primary, Prices: s.env.scorePrices()}
}

// finish completes the result res of Score(in) and judges its
// expectations.
func finish(s *Scenario, res *score.Result, in score.Input, mode score.Mode, seed uint64, aborted string) *score.Result {
	res.Scenario = s.Name
	res.File = s.file
	res.Source = s.source
	res.Mode = mode
	res.Seed = seed
	res.Versions = map[string]string{"brownout": brownoutVersion()}
	res.Duration = s.Duration.D()
	res.Aborted = aborted != ""
	res.AbortReason = aborted
	res.Fleet = s.fleetScore(&in)
	res.Expectations = s.Expect.Judge(res)
	res.Pass = !res.Aborted
	for _, v := range res.Expectations {
		if !v.Pass {
			res.Pass = false
		}
	}
	return res
}

func brownoutVersion() string { return buildinfo.Version() }
