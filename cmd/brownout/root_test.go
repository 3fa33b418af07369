package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestVersionFromBuildInfo(t *testing.T) {
	info := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.1"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}}}, true
	}
	require.Equal(t, "brownout v0.3.1 go1.26.8", versionString(info))
	devel := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	require.Equal(t, "brownout (devel) 0123456789ab+dirty go1.26.8", versionString(devel))
	require.Equal(t, "brownout (unknown version)", versionString(func() (*debug.BuildInfo, bool) { return nil, false }))
}

func TestVersionCommand(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	require.Equal(t, 0, code)
	require.Contains(t, out, "brownout ")
}

func TestBadGlobalFlagsAreUsageErrors(t *testing.T) {
	code, _, errOut := runCLI(t, "--log-format", "xml", "version")
	require.Equal(t, exitUsageErr, code)
	require.Contains(t, errOut, "--log-format")
	code, _, errOut = runCLI(t, "--log-level", "loud", "version")
	require.Equal(t, exitUsageErr, code)
	require.Contains(t, errOut, "--log-level")
	code, _, _ = runCLI(t, "no-such-command")
	require.Equal(t, exitUsageErr, code)
}

func TestJSONLogFormat(t *testing.T) {
	var buf bytes.Buffer
	l, err := newLogger(&buf, "debug", "json")
	require.NoError(t, err)
	l.Debug("hello", "k", 1)
	require.Contains(t, buf.String(), `"msg":"hello"`)
}
