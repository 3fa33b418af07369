package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/yamlfile"
)

// Exit codes (DESIGN.md): 0 success, 1 the game day failed its expectations,
// 2 usage or input error.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsageErr = 2
)

// IOStreams are the injected input and outputs of every command.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Factory carries what commands share: streams and the logger built from the
// global flags.
type Factory struct {
	IO     IOStreams
	logger *slog.Logger
}

// Logger returns the logger configured by --log-level and --log-format.
func (f *Factory) Logger() *slog.Logger {
	if f.logger == nil {
		return slog.New(slog.NewTextHandler(f.IO.ErrOut, nil))
	}
	return f.logger
}

// exitError carries a specific exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// usageError marks bad flags or input (exit 2).
func usageError(err error) error { return &exitError{code: exitUsageErr, err: err} }

// failedError marks a run whose expectations failed (exit 1); the output was
// already written, so nothing more is printed.
func failedError() error { return &exitError{code: exitFailed} }

type rootOptions struct {
	LogLevel  string
	LogFormat string
	// BasePort, when set, is the base of every ${BROWNOUT_BASE_PORT+N}
	// port in the files a command reads (and in the processes it starts):
	// it overrides $BROWNOUT_BASE_PORT.
	BasePort int
}

// NewCmdRoot builds the command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	opts := &rootOptions{}
	cmd := &cobra.Command{
		Use:           "brownout",
		Short:         "LLM failover gateway, programmable mock providers and game-day runner",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			l, err := newLogger(f.IO.ErrOut, opts.LogLevel, opts.LogFormat)
			if err != nil {
				return usageError(err)
			}
			f.logger = l
			if cmd.Flags().Changed("base-port") {
				if opts.BasePort < 1 || opts.BasePort > 65535 {
					return usageError(fmt.Errorf("--base-port: %d is not a port number (1-65535)", opts.BasePort))
				}
				if err := os.Setenv(yamlfile.BasePortEnv, strconv.Itoa(opts.BasePort)); err != nil {
					return err
				}
			}
			return nil
		},
	}
	// --version prints cobra's "brownout version …". A version template
	// would link text/template's execution, whose reflect MethodByName
	// makes the linker keep every exported method of every type.
	cmd.Version = strings.TrimPrefix(versionString(debug.ReadBuildInfo), "brownout ")
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	cmd.PersistentFlags().StringVar(&opts.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	cmd.PersistentFlags().StringVar(&opts.LogFormat, "log-format", "text", "log format: text or json")
	cmd.PersistentFlags().IntVar(&opts.BasePort, "base-port", 0,
		"base of every ${BROWNOUT_BASE_PORT+N} port in the files read (default $BROWNOUT_BASE_PORT, else 8000)")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(err) })

	cmd.AddCommand(NewCmdVersion(f, nil))
	addCommands(cmd, f)
	finishTree(cmd)
	return cmd
}

// addCommands registers the subcommands that each package's wiring provides.
// One line per command.
func addCommands(root *cobra.Command, f *Factory) {
	root.AddCommand(NewCmdEvals(f))
	root.AddCommand(NewCmdReport(f))
	root.AddCommand(NewCmdGameday(f))
	root.AddCommand(NewCmdServe(f, nil))
	root.AddCommand(NewCmdUsage(f))
	root.AddCommand(NewCmdSchema(f, nil))
	root.AddCommand(NewCmdMock(f, nil))
	root.AddCommand(NewCmdInit(f, nil))
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	hopts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, hopts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, hopts)), nil
	default:
		return nil, fmt.Errorf("--log-format: %q is not text or json", format)
	}
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, io IOStreams) int {
	f := &Factory{IO: io}
	root := NewCmdRoot(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(io.ErrOut, "error:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(io.ErrOut, "error:", err)
	// Cobra's own argument errors (unknown command, wrong arg count) are usage errors.
	if strings.Contains(err.Error(), "unknown command") || strings.Contains(err.Error(), "arg(s)") {
		return exitUsageErr
	}
	return exitFailed
}
