package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/schemas"
)

func TestSchemaCommand(t *testing.T) {
	for _, name := range schemas.Names() {
		t.Run(name, func(t *testing.T) {
			code, out, _ := runCLI(t, "schema", name)
			require.Equal(t, exitOK, code)
			want, err := schemas.Get(name)
			require.NoError(t, err)
			require.Equal(t, string(want), out)
		})
	}
	t.Run("unknown", func(t *testing.T) {
		code, out, errOut := runCLI(t, "schema", "gamedays")
		require.Equal(t, exitUsageErr, code)
		require.Empty(t, out)
		require.Contains(t, errOut, `unknown schema "gamedays" (one of gateway, providers, scenario, suite)`)
	})
	t.Run("no name", func(t *testing.T) {
		code, _, _ := runCLI(t, "schema")
		require.Equal(t, exitUsageErr, code)
	})
}
