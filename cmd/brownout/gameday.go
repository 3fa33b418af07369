package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/reports"
	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
	"github.com/brownout-dev/brownout/yamlfile"
)

// GamedayRunOptions are the inputs of `brownout gameday run`.
type GamedayRunOptions struct {
	IO      IOStreams
	File    string
	Mode    string
	Seed    uint64
	SeedSet bool
	// Seeds, when above 0, plays a seed sweep (sim only); Repeat plays the
	// live run that many times, one after another.
	Seeds  int
	Repeat int
	Out    string
	// Traces keeps the trace of one request of a live run (the one with the
	// most upstream attempts) and prints it after the progress lines.
	Traces bool
	// Context is the run's context; nil means one canceled by SIGINT/SIGTERM.
	Context context.Context
	Output  OutputOptions
}

// GamedayValidateOptions are the inputs of `brownout gameday validate`.
type GamedayValidateOptions struct {
	IO     IOStreams
	Files  []string
	Output OutputOptions
}

// NewCmdGameday groups the game-day subcommands.
func NewCmdGameday(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gameday",
		Short: "Run and validate game-day scenarios",
	}
	cmd.AddCommand(NewCmdGamedayRun(f, nil), NewCmdGamedayValidate(f, nil), NewCmdGamedayCompare(f, nil))
	return cmd
}

// NewCmdGamedayRun runs one scenario and prints its scorecard.
func NewCmdGamedayRun(f *Factory, runF func(*GamedayRunOptions) error) *cobra.Command {
	opts := &GamedayRunOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a game day (simulated or live) and score it",
		Long: `Run a game day and print its scorecard. With --out DIR it also writes
DIR/result.json, DIR/events.jsonl, the mocks' journals (DIR/journal.jsonl)
and the reports: report.html,
report.md and junit.xml.

With --seeds N (sim only) it plays N seeds (the scenario's and the N-1
after it) in parallel on every core and prints each score's median, p90
and worst and each expectation's pass rate; --out DIR then holds
DIR/sweep.json. With --repeat N (live only) it plays the live game day N
times, one after another, and reports the runs the same way: a verdict
holds when each expectation held in its expect.pass_rate share of the runs
(default: every run).

With --output json stdout holds the result as JSON and nothing else (the
shape of result.json, or of sweep.json for a sweep); progress and the
"wrote" line go to stderr. --quiet drops progress and the scorecard.

Exit status: 0 when every expectation holds, 1 when any fails (or the run was
aborted by a stop condition), 2 for input errors.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			opts.SeedSet = cmd.Flags().Changed("seed")
			if err := opts.Output.check(); err != nil {
				return err
			}
			if opts.Mode != string(score.ModeSim) && opts.Mode != string(score.ModeLive) {
				return usageError(fmt.Errorf("--mode: %q is not sim or live", opts.Mode))
			}
			if opts.Traces && opts.Mode != string(score.ModeLive) {
				return usageError(fmt.Errorf("--traces: traces come from the gateway of a live run (--mode live)"))
			}
			if opts.Seeds != 0 && (opts.Seeds < 1 || opts.Mode != string(score.ModeSim)) {
				return usageError(fmt.Errorf("--seeds: a sweep needs at least 1 seed and --mode sim"))
			}
			if opts.Repeat != 0 && (opts.Repeat < 1 || opts.Mode != string(score.ModeLive)) {
				return usageError(fmt.Errorf("--repeat: repeated runs need at least 1 run and --mode live (a simulation repeats with --seeds)"))
			}
			if opts.Context == nil {
				ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
				defer stop()
				opts.Context = ctx
			}
			if runF != nil {
				return runF(opts)
			}
			return gamedayRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Mode, "mode", "sim", "sim (virtual time, deterministic) or live (real HTTP on loopback)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 0, "override the scenario's seed")
	cmd.Flags().StringVar(&opts.Out, "out", "", "directory for result.json and events.jsonl")
	cmd.Flags().IntVar(&opts.Seeds, "seeds", 0, "play a seed sweep of N seeds (sim) and report each score's distribution")
	cmd.Flags().IntVar(&opts.Repeat, "repeat", 0, "play the live game day N times and report each score's distribution")
	cmd.Flags().BoolVar(&opts.Traces, "traces", false, "live: collect the gateway's traces and show one request's attempts (result.json trace_sample)")
	opts.Output.addFlags(cmd)
	return cmd
}

func gamedayRun(opts *GamedayRunOptions) error {
	s, err := scenarios.Load(opts.File)
	if err != nil {
		return usageError(err)
	}
	if opts.Out != "" {
		if err := checkOutDir(opts.Out); err != nil {
			return usageError(err)
		}
	}
	if opts.Seeds > 0 || opts.Repeat > 0 {
		return gamedaySweep(opts, s)
	}
	ro := runOptions(opts.IO, opts.Output, score.Mode(opts.Mode), opts.Seed, opts.SeedSet)
	ro.Traces = opts.Traces
	res, err := scenarios.Run(opts.Context, s, ro)
	if err != nil {
		return runError(err)
	}
	if err := opts.Output.emit(opts.IO, res, func(w io.Writer) error {
		return reports.WriteScorecard(w, res, reports.ColorEnabled(w))
	}); err != nil {
		return err
	}
	if opts.Out != "" {
		// Written even for an aborted run: a partial result is still a result.
		what := fmt.Sprintf("result.json, events.jsonl, %s, %s, %s, %s", score.JournalFile, reports.HTMLFile, reports.MarkdownFile, reports.JUnitFile)
		if err := writeOut(opts.Output.text(opts.IO), opts.Out, what, res.WriteDir, func(dir string) error { return reports.WriteFiles(dir, res) }); err != nil {
			return err
		}
	}
	if !res.Pass {
		return failedError()
	}
	return nil
}

func gamedaySweep(opts *GamedayRunOptions, s *scenarios.Scenario) error {
	if opts.SeedSet {
		s.Seed = opts.Seed
	}
	var sw *scenarios.Sweep
	var err error
	if opts.Repeat > 0 {
		ro := runOptions(opts.IO, opts.Output, score.ModeLive, opts.Seed, opts.SeedSet)
		ro.Traces = opts.Traces
		sw, err = scenarios.RunRepeat(opts.Context, s, opts.Repeat, ro)
	} else {
		sw, err = scenarios.RunSweep(opts.Context, s, opts.Seeds)
	}
	if err != nil {
		if errors.Is(err, scenarios.ErrInvalid) {
			return usageError(err)
		}
		return err
	}
	if err := opts.Output.emit(opts.IO, sw, func(w io.Writer) error {
		return reports.WriteSweep(w, sw, reports.ColorEnabled(w))
	}); err != nil {
		return err
	}
	if opts.Out != "" {
		if err := writeOut(opts.Output.text(opts.IO), opts.Out, "sweep.json", sw.WriteDir); err != nil {
			return err
		}
	}
	if !sw.Pass {
		return failedError()
	}
	return nil
}

// NewCmdGamedayValidate checks scenario files and reports every problem.
func NewCmdGamedayValidate(f *Factory, runF func(*GamedayValidateOptions) error) *cobra.Command {
	opts := &GamedayValidateOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check game-day files; report every problem with file:line:col",
		Long: `Check game-day files and the files they name (providers, gateway config,
prompts), and report every problem at once, each with file:line:col and
the field.

With --output json stdout holds one JSON document: {"files": [{"file",
"valid", "errors": [{"file", "line", "col", "field", "message"}],
"warnings": [...]}]}.

Exit status: 0 when every file is valid, 2 when any is not.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if err := opts.Output.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return gamedayValidate(opts)
		},
	}
	opts.Output.addFlags(cmd)
	return cmd
}

// validation is the JSON form of `gameday validate`.
type validation struct {
	Files []fileValidation `json:"files"`
}

type fileValidation struct {
	File     string          `json:"file"`
	Valid    bool            `json:"valid"`
	Errors   yamlfile.Errors `json:"errors,omitempty"`
	Warnings yamlfile.Errors `json:"warnings,omitempty"`
}

func gamedayValidate(opts *GamedayValidateOptions) error {
	bad := 0
	var v validation
	for _, f := range opts.Files {
		s, err := scenarios.Load(f)
		fv := fileValidation{File: f, Valid: err == nil, Errors: yamlfile.AsErrors(f, err)}
		if err != nil {
			bad++
		} else {
			fv.Warnings = s.Warnings()
		}
		v.Files = append(v.Files, fv)
	}
	if opts.Output.Quiet && !opts.Output.JSON() {
		// Quiet drops the "ok" lines, never the problems.
		for _, fv := range v.Files {
			if !fv.Valid {
				fmt.Fprintln(opts.IO.ErrOut, fv.Errors)
			}
		}
	}
	err := opts.Output.emit(opts.IO, v, func(w io.Writer) error {
		for _, fv := range v.Files {
			if !fv.Valid {
				fmt.Fprintln(w, fv.Errors)
				continue
			}
			fmt.Fprintf(w, "%s: ok\n", fv.File)
			for _, w8 := range fv.Warnings {
				fmt.Fprintf(w, "warning: %s\n", w8)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if bad > 0 {
		return usageError(fmt.Errorf("%d of %d files invalid", bad, len(opts.Files)))
	}
	return nil
}

// runOptions are a run's options: its mode, progress on stderr, and the
// seed when the flag set one.
func runOptions(io IOStreams, out OutputOptions, mode score.Mode, seed uint64, seedSet bool) scenarios.Options {
	ro := scenarios.Options{Mode: mode, Progress: out.progress(io)}
	if seedSet {
		ro.Seed = &seed
	}
	return ro
}

// runError is the exit of a run that returned err: 2 for input errors.
func runError(err error) error {
	if errors.Is(err, scenarios.ErrInvalid) {
		return usageError(err)
	}
	return err
}

// writeOut writes a run's files into dir, its data then its reports, and
// says what it wrote.
func writeOut(w io.Writer, dir, what string, writers ...func(dir string) error) error {
	for _, write := range writers {
		if err := write(dir); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nwrote %s: %s\n", dir, what)
	return nil
}
