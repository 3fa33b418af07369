package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/gateway/usage"
)

// UsageReportOptions are the inputs of `brownout usage report`.
type UsageReportOptions struct {
	IO   IOStreams
	File string
	From string
	To   string
	By   string
	JSON bool
}

// NewCmdUsage groups the usage subcommands.
func NewCmdUsage(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "usage", Short: "Report metered usage and cost from the gateway's usage records"}
	cmd.AddCommand(NewCmdUsageReport(f, nil))
	return cmd
}

// NewCmdUsageReport summarises usage records over a time range.
func NewCmdUsageReport(f *Factory, runF func(*UsageReportOptions) error) *cobra.Command {
	opts := &UsageReportOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "report --file usage.jsonl [--from T] [--to T] [--by target|route|tier]",
		Short: "Tokens and cost per target, route, tier or client over a time range",
		Example: `  # what did the fallback cost us during last Tuesday's outage?
  brownout usage report --file usage.jsonl --from 2026-01-06T09:40:00Z --to 2026-01-06T11:15:00Z --by tier`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.File == "" {
				return usageError(errors.New("--file is required"))
			}
			if runF != nil {
				return runF(opts)
			}
			return usageReportRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.File, "file", "", "usage records (JSONL, usage.file in the gateway config)")
	cmd.Flags().StringVar(&opts.From, "from", "", "start of the range, inclusive (RFC 3339, \"2006-01-02 15:04\" UTC, or a date)")
	cmd.Flags().StringVar(&opts.To, "to", "", "end of the range, exclusive (same formats)")
	cmd.Flags().StringVar(&opts.By, "by", "target", "group by target, route, tier or client")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "write JSON instead of a table")
	return cmd
}

// parseTime reads a range bound: RFC 3339, "2006-01-02 15:04[:05]" or a
// date, the last two in UTC.
func parseTime(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--%s: %q is not a time (use RFC 3339, \"2006-01-02 15:04\" or \"2006-01-02\")", flag, s)
}

func usageReportRun(opts *UsageReportOptions) error {
	from, err := parseTime("from", opts.From)
	if err != nil {
		return usageError(err)
	}
	to, err := parseTime("to", opts.To)
	if err != nil {
		return usageError(err)
	}
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		return usageError(errors.New("--to must be after --from"))
	}
	by := usage.By(opts.By)
	switch by {
	case usage.ByTarget, usage.ByRoute, usage.ByTier, usage.ByClient:
	default:
		return usageError(fmt.Errorf("--by: %q is not target, route, tier or client", opts.By))
	}
	f, err := os.Open(opts.File)
	if err != nil {
		return usageError(err)
	}
	defer f.Close()
	recs, err := usage.Read(f)
	if err != nil {
		return usageError(fmt.Errorf("%s: %w", opts.File, err))
	}
	rows, err := usage.Report(recs, usage.Query{From: from, To: to, By: by})
	if err != nil {
		return usageError(err)
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	return usage.WriteTable(opts.IO.Out, by, rows)
}
