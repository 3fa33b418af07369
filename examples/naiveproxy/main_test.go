package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/reports"
	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// TestBakeOff plays the example bake-off live: brownout's gateway (from
// its config) against this naive proxy, the same 429 storm on the primary
// for both, each scored as a black box. Both keep every user served and
// meet the game day's expectations; only the naive proxy keeps calling
// the throttled primary (three times per request) and never stops trying
// it first.
func TestBakeOff(t *testing.T) {
	if testing.Short() {
		t.Skip("a live bake-off takes 100s of real time")
	}
	c := bakeOff(t, "../gamedays/bakeoff-429-storm.yaml")
	for _, cr := range c.Contestants {
		assert.True(t, cr.Result.BlackBox, cr.Name)
		assert.Empty(t, cr.Result.Failed(), cr.Name)
		assert.True(t, cr.Result.Measured["cost_multiplier"].Measured, cr.Name)
		f, ok := cr.Result.Fault("primary-429", "openai/gpt-4o")
		require.True(t, ok, cr.Name)
		assert.Greater(t, f.Availability.DegradedRate, 0.9, "%s answers from gpt-4o-mini during the storm", cr.Name)
	}
	assert.True(t, c.Pass)

	brownout, _ := c.Contestants[0].Result.Fault("primary-429", "")
	naive, _ := c.Contestants[1].Result.Fault("primary-429", "")
	assert.Less(t, brownout.LoadRatio, 1.0, "brownout stops calling the throttled primary")
	assert.Greater(t, naive.LoadRatio, 2.0, "the naive proxy calls it three times per request")
	assert.NotNil(t, brownout.ShiftFirst, "brownout stops trying the primary first")
	assert.Nil(t, naive.ShiftFirst, "the naive proxy never does")
	assert.NotNil(t, naive.ShiftServed, "but its users are served by the fallback")

	out := t.TempDir()
	require.NoError(t, c.WriteDir(out))
	require.NoError(t, reports.WriteCompareFiles(out, c))
	html, err := os.ReadFile(filepath.Join(out, reports.CompareHTMLFile))
	require.NoError(t, err)
	assert.Contains(t, string(html), "<svg")
	for _, f := range []string{"compare.json", reports.CompareMarkdownFile, "brownout/result.json", "naive/" + score.JournalFile, "naive/" + reports.HTMLFile} {
		assert.FileExists(t, filepath.Join(out, f))
	}
}

// TestBakeOffStructured plays the wrong-answers bake-off live: every
// request asks for JSON and the primary answers 503 for 15 s. The naive
// proxy, told to drop response_format on fallback, keeps every user
// "served" with a 200 OK, but its fallback answers in prose: the scores
// count those answers as bad served and not good, and its verdict fails;
// brownout keeps response_format on the fallback and passes.
func TestBakeOffStructured(t *testing.T) {
	if testing.Short() {
		t.Skip("a live bake-off takes 90s of real time")
	}
	c := bakeOff(t, "../gamedays/bakeoff-structured-fallback.yaml", "response_format")
	brownout, naive := c.Contestants[0].Result, c.Contestants[1].Result
	assert.Empty(t, brownout.Failed(), "brownout keeps response_format on the fallback")
	assert.Zero(t, brownout.Overall.BadServed)
	assert.Greater(t, naive.Overall.Availability.Success, 0.99, "the naive proxy's users are all served")
	assert.Greater(t, naive.Overall.BadServed, 50, "and over 50 of them get prose for JSON")
	assert.Less(t, naive.Overall.Availability.GoodRate, 0.9)
	var failed []string
	for _, v := range naive.Failed() {
		failed = append(failed, v.Name)
	}
	assert.ElementsMatch(t, []string{"good", "bad_served"}, failed)
	assert.False(t, c.Pass)
}

// bakeOff plays game day file live: brownout's gateway (from the
// bake-off config) against this proxy, started with drop as
// -drop-on-fallback, on the example's mock (gpt-4o, then gpt-4o-mini).
func bakeOff(t *testing.T, file string, drop ...string) *scenarios.Comparison {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := newProxy([]upstream{{"http://127.0.0.1:19301/v1", "gpt-4o"}, {"http://127.0.0.1:19301/v1", "gpt-4o-mini"}}, 2, "")
	p.drop = drop
	go func() { _ = serve(ln, p) }()
	t.Cleanup(func() { ln.Close() })

	s, err := scenarios.Load(file)
	require.NoError(t, err)
	c, err := scenarios.Compare(context.Background(), s, []scenarios.Contestant{
		{Name: "brownout", Config: "../gamedays/env/gateway-bakeoff.yaml"},
		{Name: "naive", URL: "http://" + ln.Addr().String()},
	}, scenarios.Options{})
	require.NoError(t, err)
	require.Len(t, c.Contestants, 2)
	return c
}
