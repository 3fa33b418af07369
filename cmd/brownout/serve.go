package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/gateway"
)

// ServeOptions are the inputs of `brownout serve`.
type ServeOptions struct {
	IO     IOStreams
	Config string
	Check  bool
	Listen string
	Logger *slog.Logger
	// LookupEnv resolves ${NAME} in the file (os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Ready, when set, receives the address once the gateway listens (tests).
	Ready func(addr string)
}

// NewCmdServe runs the gateway.
func NewCmdServe(f *Factory, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{IO: f.IO, LookupEnv: os.LookupEnv}
	cmd := &cobra.Command{
		Use:   "serve -c gateway.yaml",
		Short: "Run the failover gateway (or validate its configuration with --check)",
		Long: `Run the OpenAI- and Anthropic-compatible failover gateway.

The configuration is reloaded on SIGHUP and when the file changes; an invalid
file is rejected and the running configuration keeps serving. On SIGINT and
SIGTERM /readyz turns 503 while the gateway keeps serving for
shutdown.lame_duck (default 5s); then the listener closes, requests and
streams in flight get shutdown.drain (default 30s) to finish, and streams
still open end with an in-band error event.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Config == "" {
				return usageError(errors.New("-c/--config is required"))
			}
			opts.Logger = f.Logger()
			if runF != nil {
				return runF(opts)
			}
			return serveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Config, "config", "c", "", "gateway configuration file (YAML)")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "run every check serve does (the file, ${NAME} variables, listen address, usage file) and exit")
	cmd.Flags().StringVar(&opts.Listen, "listen", "", "address to listen on (overrides listen: in the file)")
	return cmd
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	cfg, err := gateway.LoadConfig(opts.Config, gateway.LoadOptions{LookupEnv: opts.LookupEnv})
	if err != nil {
		return usageError(err)
	}
	if err := cfg.Preflight(opts.Listen); err != nil {
		return usageError(err)
	}
	if opts.Check {
		for _, u := range cfg.Unqualified() { // qualification.require: warn
			fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", u)
		}
		_, err := fmt.Fprintf(opts.IO.Out, "%s: ok (%d providers, %d routes)\n", opts.Config, len(cfg.Providers), len(cfg.Routes))
		return err
	}
	srv, err := gateway.New(cfg, gateway.Options{Logger: opts.Logger, ConfigPath: opts.Config, LookupEnv: opts.LookupEnv})
	if err != nil {
		return usageError(err)
	}
	defer srv.Close()
	// net/http writes a few lines of its own through the log package (an
	// upstream's unsolicited answer on an idle connection): structured too.
	log.SetOutput(slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn).Writer())
	log.SetFlags(0)
	defer func() {
		log.SetOutput(os.Stderr)
		log.SetFlags(log.LstdFlags)
	}()
	addr := opts.Listen
	if addr == "" {
		addr = cfg.ListenAddr()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	opts.Logger.Info("gateway listening", "addr", ln.Addr().String(), "routes", len(cfg.Routes))
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String())
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go srv.Watch(ctx, hup)
	err = srv.Serve(ctx, ln)
	opts.Logger.Info("gateway stopped")
	return err
}
