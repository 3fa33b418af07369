package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/reports"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// ReportFidelityOptions are the inputs of `brownout report fidelity`.
type ReportFidelityOptions struct {
	IO IOStreams
	// Pairs are the result files, a simulated run then a live run of the
	// same game day, per pair.
	Pairs              []string
	Tolerances         reports.FidelityTolerances
	FailOnDisagreement bool
}

// NewCmdReportFidelity compares simulated and live runs of the same game
// days.
func NewCmdReportFidelity(f *Factory, runF func(*ReportFidelityOptions) error) *cobra.Command {
	opts := &ReportFidelityOptions{IO: f.IO, Tolerances: reports.DefaultFidelityTolerances}
	cmd := &cobra.Command{
		Use:   "fidelity SIM.json|SWEEP.json LIVE.json [...]",
		Short: "Compare simulated and live runs of the same game days: TTD, TTM, TTR, availability and amplification side by side",
		Long: `Compare a simulated and a live run of each game day (pairs of result.json
files, the simulated one first) and print Markdown tables: availability,
retry amplification and verdict per game day, TTD, TTM and TTR per fault
step and target. A pair further apart than the tolerances is marked ✗:
TTD 1s; TTM and TTR 1s or 10% of the longer, whichever is more (they end
when a windowed measure crosses a bound); availability 1 point;
amplification 0.1 attempts per request.

In place of a simulated run, a seed sweep (gameday run --seeds N, its
sweep.json) gives the range the simulated seeds span: one live run is one
draw of what the scenario leaves to chance, and agrees when it lands in that
range (widened by the tolerances).`,
		Example: `  brownout gameday run examples/gamedays/quick-429-burst.yaml --out out/q-sim
  brownout gameday run examples/gamedays/quick-429-burst.yaml --mode live --out out/q-live
  brownout report fidelity out/q-sim/result.json out/q-live/result.json
  brownout gameday run examples/gamedays/quick-429-burst.yaml --seeds 16 --out out/q-sweep
  brownout report fidelity out/q-sweep/sweep.json out/q-live/result.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || len(args)%2 != 0 {
				return usageError(fmt.Errorf("want pairs of result files (SIM.json LIVE.json), got %d file(s)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Pairs = args
			if runF != nil {
				return runF(opts)
			}
			return reportFidelityRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.FailOnDisagreement, "fail-on-disagreement", false, "exit 1 when a score differs beyond its tolerance")
	cmd.Flags().DurationVar(&opts.Tolerances.Duration, "tolerance-time", opts.Tolerances.Duration, "allowed difference of TTD, TTM and TTR")
	cmd.Flags().Float64Var(&opts.Tolerances.Relative, "tolerance-relative", opts.Tolerances.Relative, "allowed difference of TTM and TTR as a fraction of the longer, when more than --tolerance-time")
	cmd.Flags().Float64Var(&opts.Tolerances.Availability, "tolerance-availability", opts.Tolerances.Availability, "allowed difference of the success rate (fraction)")
	cmd.Flags().Float64Var(&opts.Tolerances.Amplification, "tolerance-amplification", opts.Tolerances.Amplification, "allowed difference of attempts per request")
	return cmd
}

func reportFidelityRun(opts *ReportFidelityOptions) error {
	var fs []*reports.Fidelity
	agree := true
	for i := 0; i < len(opts.Pairs); i += 2 {
		sw, isSweep, err := readSweep(opts.Pairs[i])
		if err != nil {
			return err
		}
		live, err := readResult(opts.Pairs[i+1])
		if err != nil {
			return err
		}
		var f *reports.Fidelity
		if isSweep {
			f, err = reports.CompareFidelitySweep(sw, live, opts.Tolerances)
		} else {
			var sim *score.Result
			if sim, err = readResult(opts.Pairs[i]); err != nil {
				return err
			}
			f, err = reports.CompareFidelity(sim, live, opts.Tolerances)
		}
		if err != nil {
			return usageError(fmt.Errorf("%s and %s: %w", opts.Pairs[i], opts.Pairs[i+1], err))
		}
		agree = agree && f.Agrees()
		fs = append(fs, f)
	}
	if err := reports.WriteFidelity(opts.IO.Out, fs); err != nil {
		return err
	}
	if opts.FailOnDisagreement && !agree {
		return failedError()
	}
	return nil
}
