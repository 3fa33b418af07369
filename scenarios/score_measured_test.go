package scenarios

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// TestCostPricesAgree: with a known gateway config, the cost the gateway
// metered (its events, its config's prices) and the cost of the same run
// from the mocks' journals at the providers file's prices (as a black box
// is scored) agree, overall and per target, in every game day of the
// library: within 1% overall (2% per target), equal where no attempt was
// abandoned before its first token (a first-token timeout: the gateway
// meters its prompt sometimes, a black box never).
func TestCostPricesAgree(t *testing.T) {
	files, _ := filepath.Glob("../examples/gamedays/*.yaml")
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			s, err := Load(f)
			require.NoError(t, err)
			res := runFile(t, f)
			require.True(t, res.Measured["cost_multiplier"].Measured)
			require.Greater(t, res.Overall.Cost.Total, 0.0)
			in := score.Input{Journal: res.Journal(), Start: Epoch, End: Epoch.Add(res.Elapsed), SLO: res.SLO,
				Prices: s.env.mockPrices, BlackBox: true}
			bb := score.Score(in)
			require.True(t, bb.Measured["cost_multiplier"].Measured, "%+v", bb.Measured["cost_multiplier"])
			assert.InEpsilon(t, res.Overall.Cost.Total, bb.Overall.Cost.Total, 0.01)
			for k, c := range res.Overall.Cost.ByTarget {
				assert.InEpsilon(t, c, bb.Overall.Cost.ByTarget[k], 0.02, k)
			}
			assert.False(t, math.IsNaN(bb.Overall.Cost.Multiplier))
		})
	}
}

// TestWarnPricesDisagree: a gateway config and a providers file that price
// a target differently are warned about (cost would depend on who measures).
func TestWarnPricesDisagree(t *testing.T) {
	dir := t.TempDir()
	prov, err := os.ReadFile("../examples/gamedays/env/providers.yaml")
	require.NoError(t, err)
	prov = bytes.Replace(prov, []byte("price: {input_per_mtok: 3, output_per_mtok: 15"), []byte("price: {input_per_mtok: 3, output_per_mtok: 16"), 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "providers.yaml"), prov, 0o644))
	gw, err := filepath.Abs("../examples/gamedays/env/gateway.yaml")
	require.NoError(t, err)
	src := "version: 1\nname: w\nduration: 5m\nproviders: {file: providers.yaml}\ngateway: {config: " + gw + "}\ntraffic: [{route: chat, rate: 1/s}]\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(src), 0o644))
	s, err := Load(filepath.Join(dir, "s.yaml"))
	require.NoError(t, err)
	ws := s.Warnings()
	require.Len(t, ws, 1)
	assert.Contains(t, ws[0].Error(), "the gateway config prices anthropic:claude-sonnet-4 at")
}
