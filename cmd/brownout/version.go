package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
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
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	s := "brownout " + v + " " + bi.GoVersion
	for _, st := range bi.Settings {
		if st.Key == "vcs.revision" && len(st.Value) >= 12 {
			s += " " + st.Value[:12]
		}
	}
	return s
}
