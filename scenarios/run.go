package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/brownout-dev/brownout/events"
)

// Options tune a run.
type Options struct {
	// Mode is ModeSim (default) or ModeLive.
	Mode Mode
	// Seed overrides the scenario's seed when non-nil.
	Seed *uint64
	// Progress receives live progress lines (live mode); nil for none.
	Progress io.Writer
	// Traces collects the in-process gateway's OpenTelemetry spans (live
	// mode, not black box) and keeps one request's trace, the one with the
	// most upstream attempts, in Result.TraceSample (and on Progress).
	Traces bool
}

// Run plays the scenario and scores it. A canceled ctx stops the run early;
// the partial result is returned, marked Aborted, with a nil error.
func Run(ctx context.Context, s *Scenario, opts Options) (*Result, error) {
	seed := s.Seed
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	switch opts.Mode {
	case "", ModeSim:
		return runSim(ctx, s, seed)
	case ModeLive:
		return runLive(ctx, s, seed, opts)
	}
	return nil, fmt.Errorf("%w: unknown mode %q (sim or live)", ErrInvalid, opts.Mode)
}

func runSim(ctx context.Context, s *Scenario, seed uint64) (*Result, error) {
	m, err := newSim(ctx, s, seed)
	if err != nil {
		return nil, err
	}
	m.run()
	if m.err != nil {
		return nil, m.err
	}
	in := m.input()
	res := finish(s, m.score.score(in), in, ModeSim, seed, m.aborted)
	res.journalOf = m.journalOf()
	res.Start = Epoch
	res.Elapsed = time.Duration(m.end)
	return res, nil
}

// input is what a finished simulation gives the scorer.
func (m *sim) input() Input {
	in := m.s.scoreInput()
	in.Packed, in.End = &m.log, Epoch.Add(time.Duration(m.end))
	if m.attempts > 0 {
		// Scoring takes attempts from the log, and reads of the journals
		// only their targets and corrupted answers.
		in.Journal, in.journalTargets = m.scoredJournal()
	} else {
		in.Journal = m.journal()
	}
	for _, t := range m.tgtList {
		if t.evals.n > 0 {
			in.evalTally = append(in.evalTally, t.evals)
		}
	}
	return in
}

// scoreInput is the scorer's input known before a simulated run.
func (s *Scenario) scoreInput() Input {
	return Input{Start: Epoch, SLO: s.SLO.slo(),
		Primary: s.env.primary, Prices: s.env.prices}
}

// finish completes the result res of Score(in) and judges its
// expectations.
func finish(s *Scenario, res *Result, in Input, mode Mode, seed uint64, aborted string) *Result {
	res.Scenario = s.Name
	res.File = s.file
	res.Source = s.source
	res.Mode = mode
	res.Seed = seed
	res.Versions = map[string]string{"brownout": brownoutVersion()}
	res.Duration = s.Duration.D()
	res.Aborted = aborted != ""
	res.AbortReason = aborted
	res.log, res.packed = in.Events, in.Packed
	res.journal = in.Journal
	if in.journalTargets != nil {
		res.journal = nil // made on demand (Journal)
	}
	res.Fleet = s.fleetScore(&in)
	res.Expectations = s.judge(res)
	res.Pass = !res.Aborted
	for _, v := range res.Expectations {
		if !v.Pass {
			res.Pass = false
		}
	}
	return res
}

func brownoutVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Version == "" {
		return "(devel)"
	}
	return bi.Main.Version
}

// Log returns the run's event log.
func (r *Result) Log() []events.Event {
	if r.log == nil && r.packed != nil {
		r.log = r.packed.Events()
	}
	return r.log
}

// Journal returns the mocks' journals: their entries in the order of the
// scenario's providers.
func (r *Result) Journal() []JournalEntry {
	if r.journal == nil && r.journalOf != nil {
		r.journal = r.journalOf()
	}
	return r.journal
}

// WriteDir writes result.json and events.jsonl into dir (created if needed).
// Both are pure functions of the result, so a simulated run with the same
// file and seed writes byte-identical files.
func (r *Result) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return err
	}
	write := func() error { return events.WriteJSONL(f, r.log) }
	if r.log == nil && r.packed != nil {
		write = func() error { return r.packed.WriteJSONL(f) }
	}
	if err := write(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
