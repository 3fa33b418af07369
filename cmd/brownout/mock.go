package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// MockOptions are the inputs of `brownout mock`.
type MockOptions struct {
	IO     IOStreams
	Config string
	// ProxyTo makes the (single) provider a faulting proxy of a real upstream.
	ProxyTo string
	// Format, Listen and Name describe the proxy when no file is given.
	Format string
	Listen string
	Name   string
	// ControlToken protects the control API (--control-token, default
	// $BROWNOUT_MOCK_CONTROL_TOKEN).
	ControlToken string
	Logger       *slog.Logger
	// Ready, when set, is called with the started providers (tests).
	Ready func(g *mockprovider.Group)
}

// NewCmdMock hosts mock providers.
func NewCmdMock(f *Factory, runF func(*MockOptions) error) *cobra.Command {
	opts := &MockOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "mock [-c] providers.yaml",
		Short: "Run programmable mock LLM providers (OpenAI, Anthropic, Gemini wire formats)",
		Long: `Run the mock providers of a providers file, each on its own address, and
print one ready line with every address. Each provider serves its wire format
and a control API under /_mock/ (faults, reset, journal, stats).

With --proxy-to URL the provider forwards requests to a real upstream and
applies its faults to the upstream's answers; without a file, --format,
--listen and --name describe that proxy.

SIGINT and SIGTERM stop the providers cleanly.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if opts.Config != "" && opts.Config != args[0] {
					return usageError(errors.New("give the providers file once: as an argument or with -c"))
				}
				opts.Config = args[0]
			}
			if opts.Config == "" && opts.ProxyTo == "" {
				return usageError(errors.New("a providers file is required (-c providers.yaml), or --proxy-to URL"))
			}
			opts.Logger = f.Logger()
			if runF != nil {
				return runF(opts)
			}
			return mockRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Config, "config", "c", "", "providers file (YAML)")
	cmd.Flags().StringVar(&opts.ProxyTo, "proxy-to", "", "forward to this upstream URL and apply the faults to its answers")
	cmd.Flags().StringVar(&opts.Format, "format", "openai", "wire format of the proxy when no file is given: openai, anthropic or gemini")
	cmd.Flags().StringVar(&opts.Listen, "listen", "127.0.0.1:0", "address of the proxy when no file is given")
	cmd.Flags().StringVar(&opts.Name, "name", "proxy", "name of the proxy when no file is given")
	cmd.Flags().StringVar(&opts.ControlToken, "control-token", "",
		"require \"Authorization: Bearer TOKEN\" on the control API /_mock/ (default $BROWNOUT_MOCK_CONTROL_TOKEN)")
	return cmd
}

// mockSpecs returns the providers to run.
func mockSpecs(opts *MockOptions) ([]mockprovider.ProviderSpec, error) {
	if opts.Config == "" {
		s := mockprovider.ProviderSpec{Name: opts.Name, Format: llm.Format(opts.Format), Listen: opts.Listen, ProxyTo: opts.ProxyTo}
		if err := s.Validate(); err != nil {
			return nil, err
		}
		return []mockprovider.ProviderSpec{s}, nil
	}
	specs, err := mockprovider.LoadFile(opts.Config)
	if err != nil {
		return nil, err
	}
	if opts.ProxyTo != "" {
		if len(specs) != 1 {
			return nil, fmt.Errorf("--proxy-to needs a file with exactly one provider, %s has %d", opts.Config, len(specs))
		}
		specs[0].ProxyTo = opts.ProxyTo
		if err := specs[0].Validate(); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

func mockRun(ctx context.Context, opts *MockOptions) error {
	specs, err := mockSpecs(opts)
	if err != nil {
		return usageError(err)
	}
	if opts.ControlToken == "" {
		opts.ControlToken = os.Getenv("BROWNOUT_MOCK_CONTROL_TOKEN")
	}
	g, err := mockprovider.StartAll(specs, mockprovider.Options{ServerOptions: mockprovider.ServerOptions{ControlToken: opts.ControlToken}})
	if err != nil {
		return err
	}
	parts := make([]string, len(g.Providers))
	for i, p := range g.Providers {
		parts[i] = p.Name() + "=" + p.URL
	}
	if _, err := fmt.Fprintln(opts.IO.Out, "mock ready: "+strings.Join(parts, " ")); err != nil {
		g.Close()
		return err
	}
	for i, p := range g.Providers {
		opts.Logger.Info("mock provider listening", "provider", p.Name(), "format", specs[i].Format, "url", p.URL, "proxy_to", specs[i].ProxyTo)
		if p.Exposed() && opts.ControlToken == "" {
			opts.Logger.Warn("MOCK CONTROL API OPEN: this mock listens beyond loopback without --control-token; anyone who reaches it can inject faults and read its journal",
				"provider", p.Name(), "url", p.URL)
		}
	}
	if opts.Ready != nil {
		opts.Ready(g)
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = g.Shutdown(sctx)
	opts.Logger.Info("mock providers stopped")
	return err
}
