package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/internal/buildinfo"
)

// VersionOptions are the inputs of `brownout version`.
type VersionOptions struct {
	IO   IOStreams
	Info func() (*debug.BuildInfo, bool)
}

// NewCmdVersion prints the version from the binary's build information.
func NewCmdVersion(f *Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: f.IO, Info: debug.ReadBuildInfo}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *VersionOptions) error {
	_, err := fmt.Fprintln(opts.IO.Out, versionString(opts.Info))
	return err
}

func versionString(info func() (*debug.BuildInfo, bool)) string {
	bi, ok := info()
	if !ok {
		return "brownout (unknown version)"
	}
	return "brownout " + buildinfo.Of(bi, ok) + " " + bi.GoVersion
}
