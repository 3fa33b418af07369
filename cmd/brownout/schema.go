package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/brownout-dev/brownout/schemas"
)

// SchemaOptions are the inputs of `brownout schema`.
type SchemaOptions struct {
	IO   IOStreams
	Name string
}

// NewCmdSchema prints the JSON Schema of one of brownout's YAML files.
func NewCmdSchema(f *Factory, runF func(*SchemaOptions) error) *cobra.Command {
	opts := &SchemaOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "schema NAME",
		Short: "Print the JSON Schema of a brownout YAML file, for editors",
		Long: "Print the JSON Schema (draft 2020-12) of a brownout YAML file: " +
			strings.Join(schemas.Names(), ", ") + ".\n\n" +
			"Save it and point your editor at it, e.g. with a first line\n" +
			"  # yaml-language-server: $schema=gateway.schema.json",
		Example:   "  brownout schema gateway > gateway.schema.json",
		Args:      cobra.ExactArgs(1),
		ValidArgs: schemas.Names(),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return schemaRun(opts)
		},
	}
}

func schemaRun(opts *SchemaOptions) error {
	b, err := schemas.Get(opts.Name)
	if err != nil {
		return usageError(err)
	}
	_, err = opts.IO.Out.Write(b)
	return err
}
