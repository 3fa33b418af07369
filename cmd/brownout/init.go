package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/examples"
)

// InitOptions are the inputs of `brownout init`.
type InitOptions struct {
	IO  IOStreams
	Dir string
}

// NewCmdInit writes a starter: mock providers, a gateway and one game day.
func NewCmdInit(f *Factory, runF func(*InitOptions) error) *cobra.Command {
	opts := &InitOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a starter: mock providers, a gateway config and a game day that passes",
		Long: `Write providers.yaml (three mock providers), gateway.yaml (a failover
gateway in front of them) and gameday.yaml (a 40-second 429 burst on the
primary, with expectations it meets) into DIR (default: the current
directory). Existing files are never overwritten.

Every port in them is written as ${BROWNOUT_BASE_PORT+N}: a live run of the
starter listens on base+10080 (the gateway) and base+11101-11103 (the
mocks), 18080 and 19101-19103 with the default base (8000). Set
BROWNOUT_BASE_PORT, or pass --base-port, to move them all at once.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = "."
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return initRun(opts)
		},
	}
}

func initRun(opts *InitOptions) error {
	if err := examples.WriteStarter(opts.Dir); err != nil {
		if errors.Is(err, examples.ErrExists) {
			return usageError(err)
		}
		return err
	}
	for _, name := range examples.StarterFiles {
		fmt.Fprintf(opts.IO.Out, "wrote %s\n", filepath.Join(opts.Dir, name))
	}
	_, err := fmt.Fprintf(opts.IO.Out, "next: brownout gameday run %s\n", filepath.Join(opts.Dir, "gameday.yaml"))
	return err
}
