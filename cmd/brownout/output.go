package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// OutputOptions are the --output and --quiet flags of the commands whose
// result is data (gameday run, compare and validate, evals run).
type OutputOptions struct {
	// Format is text (a scorecard for people) or json (the result as one
	// JSON document on stdout and nothing else there).
	Format string
	// Quiet prints no progress and no text: only errors (stderr), the JSON
	// document when Format is json, and the exit status.
	Quiet bool
}

func (o *OutputOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Format, "output", "o", "text", "text (a scorecard) or json (the result as JSON on stdout, nothing else there)")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", false, "no progress and no scorecard: only errors, the JSON with --output json, and the exit status")
}

func (o *OutputOptions) check() error {
	if o.Format != "text" && o.Format != "json" {
		return usageError(fmt.Errorf("--output: %q is not text or json", o.Format))
	}
	return nil
}

// JSON reports whether the result goes to stdout as JSON.
func (o OutputOptions) JSON() bool { return o.Format == "json" }

// text is where the human-readable output goes: stdout for --output text,
// stderr for --output json (stdout holds the JSON alone), nowhere with
// --quiet.
func (o OutputOptions) text(s IOStreams) io.Writer {
	switch {
	case o.Quiet:
		return io.Discard
	case o.JSON():
		return s.ErrOut
	}
	return s.Out
}

// progress is where a run's progress lines go: stderr, or nowhere with
// --quiet.
func (o OutputOptions) progress(s IOStreams) io.Writer {
	if o.Quiet {
		return nil
	}
	return s.ErrOut
}

// emit writes v to stdout as indented JSON (the shape of the files --out
// writes) when --output json, and otherwise calls text with the writer for
// people.
func (o OutputOptions) emit(s IOStreams, v any, text func(w io.Writer) error) error {
	if o.JSON() {
		return encodeJSON(s.Out, v)
	}
	if o.Quiet {
		return nil
	}
	return text(s.Out)
}

func encodeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
