package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update-usage", false, "rewrite usage golden files")

func TestUsageReport(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"by tier during the outage", []string{"--from", "2026-01-06T10:00:00Z", "--to", "2026-01-06 11:00", "--by", "tier"}, "usage-by-tier.golden"},
		{"by target, whole file", []string{"--by", "target"}, "usage-by-target.golden"},
		{"by route as json", []string{"--by", "route", "--json", "--from", "2026-01-06"}, "usage-by-route.json.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"usage", "report", "--file", "testdata/usage-tuesday.jsonl"}, tt.args...)
			code, out, errOut := runCLI(t, args...)
			require.Equal(t, 0, code, errOut)
			golden := filepath.Join("testdata", tt.golden)
			if *updateGolden {
				require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), out)
		})
	}
}

func TestUsageReportErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"usage", "report"}, "--file is required"},
		{[]string{"usage", "report", "--file", "testdata/usage-tuesday.jsonl", "--by", "provider"}, `--by: "provider"`},
		{[]string{"usage", "report", "--file", "testdata/usage-tuesday.jsonl", "--from", "last tuesday"}, `--from: "last tuesday" is not a time`},
		{[]string{"usage", "report", "--file", "testdata/usage-tuesday.jsonl", "--from", "2026-01-07", "--to", "2026-01-06"}, "--to must be after --from"},
		{[]string{"usage", "report", "--file", "testdata/missing.jsonl"}, "missing.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.args...)
			assert.Equal(t, exitUsageErr, code)
			assert.Contains(t, errOut, tt.want)
		})
	}
}
