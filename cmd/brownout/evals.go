package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/evals/client"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
	"github.com/brownout-dev/brownout/yamlfile"
)

// EvalsEndpointOptions are the flags that say where requests go.
type EvalsEndpointOptions struct {
	URL       string
	Format    string
	Endpoints []string // PROVIDER=[FORMAT@]URL
	KeyEnv    string   // "" means the format's conventional variable
	Gateway   bool     // --url is a brownout gateway
	Timeout   time.Duration
	Getenv    func(string) string
}

// EvalsRunOptions are the inputs of `brownout evals run`.
type EvalsRunOptions struct {
	IO          IOStreams
	Suite       string
	Target      string
	Out         string
	Routes      []string
	Concurrency int
	MinPassRate string
	Endpoint    EvalsEndpointOptions
	Output      OutputOptions
}

// EvalsQualifyOptions are the inputs of `brownout evals qualify`.
type EvalsQualifyOptions struct {
	IO          IOStreams
	Suite       string
	Primary     string
	Fallbacks   []string
	Threshold   string
	Out         string
	ReportsOut  string
	Routes      []string
	Concurrency int
	Endpoint    EvalsEndpointOptions
	Now         func() time.Time
}

// NewCmdEvals groups the eval subcommands.
func NewCmdEvals(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "evals",
		Short: "Run eval suites against targets and qualify fallbacks",
	}
	cmd.AddCommand(NewCmdEvalsRun(f, nil), NewCmdEvalsQualify(f, nil))
	return cmd
}

func addEndpointFlags(cmd *cobra.Command, o *EvalsEndpointOptions) {
	o.Getenv = os.Getenv
	cmd.Flags().StringVar(&o.URL, "url", "", "base URL of a gateway or provider (e.g. http://127.0.0.1:8080, https://api.openai.com/v1)")
	cmd.Flags().StringVar(&o.Format, "format", "openai", "wire format of --url: openai, anthropic, gemini or openai_responses")
	cmd.Flags().StringArrayVar(&o.Endpoints, "endpoint", nil, "per-provider endpoint PROVIDER=[FORMAT@]URL (repeatable); overrides --url for that provider")
	cmd.Flags().BoolVar(&o.Gateway, "gateway", false, "--url is a brownout gateway: send the route as the model and pin the target with X-Brownout-Hint (the route must allow hints)")
	cmd.Flags().StringVar(&o.KeyEnv, "api-key-env", "", "environment variable holding the API key (default: OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY by format)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 60*time.Second, "timeout of one request")
}

// NewCmdEvalsRun runs a suite against one target.
func NewCmdEvalsRun(f *Factory, runF func(*EvalsRunOptions) error) *cobra.Command {
	opts := &EvalsRunOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "run SUITE --target PROVIDER/MODEL --url URL",
		Short: "Send a suite's prompts to a target and print pass rates per check",
		Long: `Send every case of a suite to one target, check the answers and print the
pass rates per route and per check. With --out FILE it also writes the JSON report.
With --output json stdout holds that JSON report and nothing else; the
verdict line goes to stderr. --quiet drops the text.

Exit status: 0 when every case passes (or, with --min-pass-rate, when the
pass rate reaches it), 1 when a case fails (or no case got an answer), 2 for
usage or input errors (flags, an invalid suite file).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Suite = args[0]
			if opts.Target == "" {
				return usageError(errors.New("--target is required"))
			}
			if err := opts.Output.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return evalsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Target, "target", "", "target to evaluate, provider/model")
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the JSON report to this file")
	cmd.Flags().StringArrayVar(&opts.Routes, "route", nil, "only run cases of this route (repeatable)")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", 4, "cases in flight at once")
	cmd.Flags().StringVar(&opts.MinPassRate, "min-pass-rate", "", "tolerate failing cases while the pass rate is at least this (e.g. 95%); default: every case must pass")
	opts.Output.addFlags(cmd)
	addEndpointFlags(cmd, &opts.Endpoint)
	return cmd
}

// NewCmdEvalsQualify qualifies fallbacks of a primary against a suite.
func NewCmdEvalsQualify(f *Factory, runF func(*EvalsQualifyOptions) error) *cobra.Command {
	opts := &EvalsQualifyOptions{IO: f.IO, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "qualify --suite SUITE --primary P/M --fallback P/M... --threshold 95% --url URL",
		Short: "Run a suite against a primary and its fallbacks and write a qualification file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.Suite == "":
				return usageError(errors.New("--suite is required"))
			case opts.Primary == "":
				return usageError(errors.New("--primary is required"))
			case len(opts.Fallbacks) == 0:
				return usageError(errors.New("--fallback is required (repeatable)"))
			}
			if runF != nil {
				return runF(opts)
			}
			return evalsQualify(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Suite, "suite", "", "suite file")
	cmd.Flags().StringVar(&opts.Primary, "primary", "", "primary target, provider/model")
	cmd.Flags().StringArrayVar(&opts.Fallbacks, "fallback", nil, "fallback target, provider/model (repeatable)")
	cmd.Flags().StringVar(&opts.Threshold, "threshold", "95%", "pass rate a fallback needs per route")
	cmd.Flags().StringVar(&opts.Out, "out", "qualification.json", "qualification file to write")
	cmd.Flags().StringVar(&opts.ReportsOut, "reports", "", "also write every target's JSON report to this file")
	cmd.Flags().StringArrayVar(&opts.Routes, "route", nil, "only qualify this route (repeatable)")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", 4, "cases in flight at once")
	addEndpointFlags(cmd, &opts.Endpoint)
	return cmd
}

// sender builds the router from the endpoint flags. Keys come from the
// environment only.
func (o *EvalsEndpointOptions) sender() (evals.Sender, error) {
	hc := &http.Client{Timeout: o.Timeout}
	key := func(f llm.Format) string {
		name := o.KeyEnv
		if row, err := codecs.Lookup(f); name == "" && err == nil {
			name = row.KeyEnv
		}
		return o.Getenv(name)
	}
	r := &client.Router{ByProvider: map[string]*client.Client{}}
	if o.URL != "" {
		ep := client.Endpoint{URL: o.URL, Format: llm.Format(o.Format), Gateway: o.Gateway}
		if _, err := codecs.Lookup(ep.Format); err != nil {
			return nil, fmt.Errorf("--format: %w", err)
		}
		ep.APIKey = key(ep.Format)
		c, err := client.New(ep, hc)
		if err != nil {
			return nil, fmt.Errorf("--url: %w", err)
		}
		r.Default = c
	}
	for _, spec := range o.Endpoints {
		p, ep, err := client.ParseEndpoint(spec, llm.Format(o.Format))
		if err != nil {
			return nil, fmt.Errorf("--endpoint: %w", err)
		}
		ep.APIKey = key(ep.Format)
		c, err := client.New(ep, hc)
		if err != nil {
			return nil, fmt.Errorf("--endpoint %s: %w", p, err)
		}
		r.ByProvider[p] = c
	}
	if o.Gateway && o.URL == "" {
		return nil, errors.New("--gateway needs --url")
	}
	if r.Default == nil && len(r.ByProvider) == 0 {
		return nil, errors.New("--url or --endpoint is required")
	}
	return r, nil
}

func evalsRun(ctx context.Context, opts *EvalsRunOptions) error {
	t, err := evals.ParseTarget(opts.Target)
	if err != nil {
		return usageError(fmt.Errorf("--target: %w", err))
	}
	minRate := -1.0 // unset: every case must pass
	if opts.MinPassRate != "" {
		p, err := parseRate("--min-pass-rate", opts.MinPassRate)
		if err != nil {
			return err
		}
		minRate = p
	}
	send, err := opts.Endpoint.sender()
	if err != nil {
		return usageError(err)
	}
	s, err := evals.LoadSuite(opts.Suite)
	if err != nil {
		return usageError(err)
	}
	rep, err := evals.Run(ctx, s, t, send, evals.RunOptions{Concurrency: opts.Concurrency, Routes: opts.Routes})
	if err != nil {
		return err
	}
	if err := opts.Output.emit(opts.IO, rep, rep.WriteText); err != nil {
		return err
	}
	if opts.Out != "" {
		if err := writeJSON(opts.Out, rep); err != nil {
			return err
		}
	}
	verdict := opts.Output.text(opts.IO)
	if rep.Total > 0 && rep.Errors == rep.Total {
		fmt.Fprintf(verdict, "no case got an answer from %s\n", rep.Target)
		return failedError()
	}
	if minRate < 0 && rep.Passed < rep.Total {
		fmt.Fprintf(verdict, "%d of %d cases failed\n", rep.Total-rep.Passed, rep.Total)
		return failedError()
	}
	if minRate >= 0 && rep.PassRate+1e-9 < minRate {
		fmt.Fprintf(verdict, "pass rate %.1f%% is below %.1f%%\n", 100*rep.PassRate, 100*minRate)
		return failedError()
	}
	return nil
}

func evalsQualify(ctx context.Context, opts *EvalsQualifyOptions) error {
	primary, err := evals.ParseTarget(opts.Primary)
	if err != nil {
		return usageError(fmt.Errorf("--primary: %w", err))
	}
	var pairs []evals.Pair
	for _, fb := range opts.Fallbacks {
		t, err := evals.ParseTarget(fb)
		if err != nil {
			return usageError(fmt.Errorf("--fallback: %w", err))
		}
		pairs = append(pairs, evals.Pair{Primary: primary, Fallback: t})
	}
	th, err := parseRate("--threshold", opts.Threshold)
	if err != nil {
		return err
	}
	send, err := opts.Endpoint.sender()
	if err != nil {
		return usageError(err)
	}
	s, err := evals.LoadSuite(opts.Suite)
	if err != nil {
		return usageError(err)
	}
	q, reports, err := evals.Qualify(ctx, s, pairs, send, evals.QualifyOptions{
		RunOptions: evals.RunOptions{Concurrency: opts.Concurrency, Routes: opts.Routes},
		Threshold:  th,
		Now:        opts.Now(),
	})
	if err != nil {
		return err
	}
	if err := q.WriteText(opts.IO.Out); err != nil {
		return err
	}
	if err := q.WriteFile(opts.Out); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "wrote %s\n", opts.Out)
	if opts.ReportsOut != "" {
		if err := writeJSON(opts.ReportsOut, reports); err != nil {
			return err
		}
	}
	if len(q.Unqualified()) > 0 {
		return failedError()
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// parseRate reads a pass rate flag ("95%" or 0.95) in [0, 1].
func parseRate(flag, s string) (float64, error) {
	p, err := yamlfile.ParsePercent(strings.TrimSpace(s))
	if err != nil {
		return 0, usageError(fmt.Errorf("%s: %w", flag, err))
	}
	if p.F() < 0 || p.F() > 1 {
		return 0, usageError(fmt.Errorf("%s: %s is not between 0%% and 100%%", flag, s))
	}
	return p.F(), nil
}
