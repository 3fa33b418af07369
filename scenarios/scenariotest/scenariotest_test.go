package scenariotest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/scenariotest"
)

// fakeTB records a failure instead of failing.
type fakeTB struct {
	ctx    context.Context
	failed bool
	msg    string
}

func (f *fakeTB) Helper()                  {}
func (f *fakeTB) Context() context.Context { return f.ctx }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
}

func TestRunPasses(t *testing.T) {
	res := scenariotest.Run(t, "../testdata/short.yaml", scenarios.Options{})
	require.True(t, res.Pass)
	f, ok := res.Fault("gpt4o-down", "openai/gpt-4o")
	require.True(t, ok)
	require.True(t, f.Detected)
}

func TestRequireExpectationsFailsWithScorecard(t *testing.T) {
	ft := &fakeTB{ctx: t.Context()}
	res := scenariotest.Run(ft, "../testdata/failing.yaml", scenarios.Options{})
	require.NotNil(t, res)
	require.False(t, res.Pass)
	require.True(t, ft.failed)
	require.Contains(t, ft.msg, "failed its expectations")
	require.Contains(t, ft.msg, "Expectations")
	require.True(t, strings.Contains(ft.msg, "FAIL") && strings.Contains(ft.msg, "ttd"), ft.msg)
}

func TestRunReportsLoadErrors(t *testing.T) {
	ft := &fakeTB{ctx: t.Context()}
	require.Nil(t, scenariotest.Run(ft, "../testdata/invalid.yaml", scenarios.Options{}))
	require.True(t, ft.failed)
	require.Contains(t, ft.msg, "invalid.yaml:")
}
