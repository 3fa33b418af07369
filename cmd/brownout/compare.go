package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/reports"
	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// GamedayCompareOptions are the inputs of `brownout gameday compare`.
type GamedayCompareOptions struct {
	IO   IOStreams
	File string
	// Gateways are NAME=URL or NAME=GATEWAY_CONFIG; HeadersFiles NAME=FILE.
	Gateways     []string
	HeadersFiles []string
	Seed         uint64
	SeedSet      bool
	// Repeat plays that many rounds (each gateway once per round).
	Repeat  int
	Out     string
	Context context.Context
	Output  OutputOptions
}

// NewCmdGamedayCompare plays one scenario against several gateways.
func NewCmdGamedayCompare(f *Factory, runF func(*GamedayCompareOptions) error) *cobra.Command {
	opts := &GamedayCompareOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "compare FILE --gateway NAME=URL|NAME=CONFIG ...",
		Short: "Bake-off: play one game day live against several gateways, scores side by side",
		Long: `Play a game day live against each gateway in turn, with the same seed,
traffic and faults, and print the scores side by side. A gateway is a
running one (NAME=http://host:port, driven as a black box: the mocks
listen on the ports the providers file names) or brownout's own
(NAME=gateway.yaml, started in-process). Every gateway is scored as a
black box, from its users' answers and the mocks' journals, so all are
measured alike.

--headers-file NAME=FILE adds request headers for one gateway: a YAML map
of header to value, values with ${ENV} references (secrets: never
written out). With --out DIR it writes DIR/compare.html (charts
overlaid), DIR/compare.md, DIR/compare.json and each gateway's results
and reports in DIR/NAME.

With --repeat N it plays N rounds, each gateway once per round with
seeds SEED, SEED+1, ..., the order rotated each round, and judges each
gateway over its rounds: each score's median and worst, each
expectation's pass rate against expect.pass_rate (default: every round).
One slow window in one live run then moves a percentile, not the ranking.

With --output json stdout holds the comparison as JSON and nothing else
(the shape of compare.json); --quiet drops progress and the table.

Exit status: 0 when every gateway met every expectation, 1 when any
failed, 2 for input errors.`,
		Example: `  # brownout's gateway (by config) against a naive retrying proxy
  go run ./examples/naiveproxy -upstream http://127.0.0.1:19301/v1=gpt-4o -upstream http://127.0.0.1:19301/v1=gpt-4o-mini &
  brownout gameday compare examples/gamedays/bakeoff-429-storm.yaml \
      --gateway brownout=examples/gamedays/env/gateway-bakeoff.yaml --gateway naive=http://127.0.0.1:18090 --out out/bakeoff
  # a gateway configured by header: its key from the environment
  brownout gameday compare game.yaml --gateway other=http://127.0.0.1:8787 --headers-file other=other-headers.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			opts.SeedSet = cmd.Flags().Changed("seed")
			if err := opts.Output.check(); err != nil {
				return err
			}
			if opts.Repeat < 1 {
				return usageError(fmt.Errorf("--repeat: %d rounds; give at least 1", opts.Repeat))
			}
			if len(opts.Gateways) == 0 {
				return usageError(errors.New("--gateway: name at least one gateway (NAME=URL or NAME=CONFIG)"))
			}
			if opts.Context == nil {
				ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
				defer stop()
				opts.Context = ctx
			}
			if runF != nil {
				return runF(opts)
			}
			return gamedayCompare(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Gateways, "gateway", nil, "a contestant: NAME=URL (a running gateway) or NAME=CONFIG (brownout's gateway config); repeat")
	cmd.Flags().StringArrayVar(&opts.HeadersFiles, "headers-file", nil, "NAME=FILE: request headers (YAML map, ${ENV} values) for one gateway; repeat")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 0, "override the scenario's seed")
	cmd.Flags().IntVar(&opts.Repeat, "repeat", 1, "play N rounds and judge each gateway over them (median, worst, pass rate)")
	cmd.Flags().StringVar(&opts.Out, "out", "", "directory for compare.html, compare.md, compare.json and each gateway's results")
	opts.Output.addFlags(cmd)
	return cmd
}

func gamedayCompare(opts *GamedayCompareOptions) error {
	s, err := scenarios.Load(opts.File)
	if err != nil {
		return usageError(err)
	}
	var cs []scenarios.Contestant
	for _, g := range opts.Gateways {
		c, err := scenarios.ParseContestant(g)
		if err != nil {
			return usageError(fmt.Errorf("--gateway %w", err))
		}
		cs = append(cs, c)
	}
	for _, h := range opts.HeadersFiles {
		name, file, ok := strings.Cut(h, "=")
		i := -1
		for k := range cs {
			if cs[k].Name == name {
				i = k
			}
		}
		if !ok || i < 0 {
			return usageError(fmt.Errorf("--headers-file %q: want NAME=FILE, NAME one of the --gateway names", h))
		}
		hs, err := scenarios.LoadHeaders(file)
		if err != nil {
			return usageError(fmt.Errorf("--headers-file: %w", err))
		}
		cs[i].Headers = hs
	}
	if opts.Out != "" {
		if err := checkOutDir(opts.Out); err != nil {
			return usageError(err)
		}
	}
	ro := runOptions(opts.IO, opts.Output, score.ModeLive, opts.Seed, opts.SeedSet)
	ro.Repeat = opts.Repeat
	c, err := scenarios.Compare(opts.Context, s, cs, ro)
	if err != nil {
		return runError(err)
	}
	if err := opts.Output.emit(opts.IO, c, func(w io.Writer) error {
		return reports.WriteCompare(w, c, reports.ColorEnabled(w))
	}); err != nil {
		return err
	}
	if opts.Out != "" {
		what := fmt.Sprintf("%s, %s, compare.json and each gateway's results in %s/NAME", reports.CompareHTMLFile, reports.CompareMarkdownFile, opts.Out)
		if err := writeOut(opts.Output.text(opts.IO), opts.Out, what, c.WriteDir, func(dir string) error { return reports.WriteCompareFiles(dir, c) }); err != nil {
			return err
		}
	}
	if !c.Pass {
		return failedError()
	}
	return nil
}
