package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/reports"
	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// ReportDiffOptions are the inputs of `brownout report diff`.
type ReportDiffOptions struct {
	IO               IOStreams
	Old, New         string
	FailOnRegression bool
	// Force compares runs of different scenarios or modes.
	Force      bool
	Tolerances reports.Tolerances
}

// ReportTrendOptions are the inputs of `brownout report trend`.
type ReportTrendOptions struct {
	IO   IOStreams
	Dir  string
	HTML string
}

// ReportRenderOptions are the inputs of `brownout report render`.
type ReportRenderOptions struct {
	IO     IOStreams
	Result string
	Out    string
}

// NewCmdReport groups the report commands.
func NewCmdReport(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "report", Short: "Render, compare and trend game-day results"}
	cmd.AddCommand(NewCmdReportDiff(f, nil), NewCmdReportTrend(f, nil), NewCmdReportRender(f, nil), NewCmdReportFidelity(f, nil))
	return cmd
}

// NewCmdReportDiff compares two result.json files.
func NewCmdReportDiff(f *Factory, runF func(*ReportDiffOptions) error) *cobra.Command {
	opts := &ReportDiffOptions{IO: f.IO, Tolerances: reports.DefaultTolerances}
	cmd := &cobra.Command{
		Use:   "diff OLD.json NEW.json",
		Short: "Compare two game-day results (or two seed sweeps) score by score and flag regressions",
		Long: `Compare two result.json files score by score, or two sweep.json files
(gameday run --seeds N) by the median, p90 and worst of each score and the
pass rate of each expectation. Runs of different scenarios or modes (sim vs
live) are refused unless --force.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Old, opts.New = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return reportDiffRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.FailOnRegression, "fail-on-regression", false, "exit 1 when a score regressed beyond its tolerance")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "compare runs of different scenarios or modes")
	cmd.Flags().DurationVar(&opts.Tolerances.Duration, "tolerance-time", opts.Tolerances.Duration, "allowed worsening of TTD, TTM and TTR")
	cmd.Flags().Float64Var(&opts.Tolerances.Availability, "tolerance-availability", opts.Tolerances.Availability, "allowed drop of a success rate (fraction)")
	cmd.Flags().Float64Var(&opts.Tolerances.Ratio, "tolerance-ratio", opts.Tolerances.Ratio, "allowed relative worsening of amplification, cost and latency (fraction)")
	cmd.Flags().IntVar(&opts.Tolerances.Count, "tolerance-count", opts.Tolerances.Count, "allowed increase of flaps and bad served")
	return cmd
}

func readResult(path string) (*score.Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError(err)
	}
	var r score.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, usageError(fmt.Errorf("%s: %w", path, err))
	}
	if r.Schema > score.SchemaVersion {
		return nil, usageError(fmt.Errorf("%s: result schema %d is newer than this brownout reads (%d)", path, r.Schema, score.SchemaVersion))
	}
	return &r, nil
}

// readSweep reads path as a seed sweep; ok is false when it is a single
// run's result.
func readSweep(path string) (*scenarios.Sweep, bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, usageError(err)
	}
	var sw scenarios.Sweep
	if err := json.Unmarshal(data, &sw); err != nil {
		return nil, false, usageError(fmt.Errorf("%s: %w", path, err))
	}
	return &sw, len(sw.Seeds) > 0, nil
}

func reportDiffRun(opts *ReportDiffOptions) error {
	oldSw, oldIsSweep, err := readSweep(opts.Old)
	if err != nil {
		return err
	}
	newSw, newIsSweep, err := readSweep(opts.New)
	if err != nil {
		return err
	}
	var d *reports.RunDiff
	switch {
	case oldIsSweep != newIsSweep:
		return usageError(fmt.Errorf("compare a sweep with a sweep and a run with a run (%s and %s)", opts.Old, opts.New))
	case oldIsSweep:
		if err := reports.Comparable(oldSw.Scenario, oldSw.Mode, newSw.Scenario, newSw.Mode); err != nil && !opts.Force {
			return usageError(err)
		}
		d = reports.DiffSweeps(oldSw, newSw, opts.Tolerances)
	default:
		old, err := readResult(opts.Old)
		if err != nil {
			return err
		}
		cur, err := readResult(opts.New)
		if err != nil {
			return err
		}
		if err := reports.Comparable(old.Scenario, old.Mode, cur.Scenario, cur.Mode); err != nil && !opts.Force {
			return usageError(err)
		}
		d = reports.Diff(old, cur, opts.Tolerances)
	}
	if err := reports.WriteDiff(opts.IO.Out, d, reports.ColorEnabled(opts.IO.Out)); err != nil {
		return err
	}
	if opts.FailOnRegression && len(d.Regressions()) > 0 {
		return failedError()
	}
	return nil
}

// NewCmdReportTrend shows scores across many runs.
func NewCmdReportTrend(f *Factory, runF func(*ReportTrendOptions) error) *cobra.Command {
	opts := &ReportTrendOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "trend DIR",
		Short: "Show TTD, TTM, flaps, availability and cost per scenario across the runs stored under DIR",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if runF != nil {
				return runF(opts)
			}
			return reportTrendRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.HTML, "html", "", "also write the trend with charts to this HTML file")
	return cmd
}

func reportTrendRun(opts *ReportTrendOptions) error {
	runs, err := reports.LoadRuns(opts.Dir)
	if err != nil {
		return usageError(err)
	}
	tr := reports.Trend(runs)
	if err := reports.WriteTrend(opts.IO.Out, tr); err != nil {
		return err
	}
	if opts.HTML == "" {
		return nil
	}
	out, err := os.Create(opts.HTML)
	if err != nil {
		return err
	}
	if err := reports.WriteTrendHTML(out, tr); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// NewCmdReportRender renders the reports of a stored result again.
func NewCmdReportRender(f *Factory, runF func(*ReportRenderOptions) error) *cobra.Command {
	opts := &ReportRenderOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "render RESULT.json",
		Short: "Write report.html, report.md and junit.xml for a stored result and print its scorecard",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Result = args[0]
			if runF != nil {
				return runF(opts)
			}
			return reportRenderRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", ".", "directory for the report files")
	return cmd
}

func reportRenderRun(opts *ReportRenderOptions) error {
	r, err := readResult(opts.Result)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return err
	}
	if err := reports.WriteFiles(opts.Out, r); err != nil {
		return err
	}
	return reports.WriteScorecard(opts.IO.Out, r, reports.ColorEnabled(opts.IO.Out))
}
