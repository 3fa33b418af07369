package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/internal/golden"
	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// comparison is a bake-off of the fixture against a copy of it that
// hammered the primary (an amplification of 1.83), failed an expectation
// and had no request ids (bad served not measured).
func comparison() *scenarios.Comparison {
	a, b := fixture(), fixture()
	b.Overall.Retry.Amplification, b.Overall.Retry.PeakAmplification = 1.83, 4
	b.Faults[0].LoadRatio = 3.4
	b.Expectations = append([]score.Verdict(nil), b.Expectations...)
	b.Expectations[0].Pass, b.Expectations[0].Got = false, "not measured: no ids"
	b.Pass = false
	b.Measured = map[string]score.Measure{"bad_served": {Why: "no ids"}}
	return &scenarios.Comparison{Scenario: a.Scenario, Seed: a.Seed, Contestants: []scenarios.ContestantResult{
		{Contestant: scenarios.Contestant{Name: "brownout", Config: "gateway.yaml"}, Result: a},
		{Contestant: scenarios.Contestant{Name: "naive", URL: "http://127.0.0.1:18090"}, Result: b},
	}}
}

func TestCompareGolden(t *testing.T) {
	c := comparison()
	var md, term bytes.Buffer
	require.NoError(t, WriteCompareMarkdown(&md, c))
	golden.Check(t, "testdata/compare.md.golden", md.Bytes())
	require.NoError(t, WriteCompare(&term, c, false))
	golden.Check(t, "testdata/compare.txt.golden", term.Bytes())
}

func TestCompareHTML(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteCompareHTML(&buf, comparison()))
	h := buf.String()
	assert.Equal(t, 3, strings.Count(h, "<svg"), "good requests, p95 TTFT and degraded answers, overlaid")
	// Each chart has a line per contestant, in its own colour; the
	// fixture's requests are not streamed, so the TTFT chart has none.
	assert.Equal(t, 2, strings.Count(h, `class="c0"><title>brownout`))
	assert.Equal(t, 2, strings.Count(h, `class="c1"><title>naive`))
	assert.Contains(t, h, "Good requests, the SLI")
	assert.Contains(t, h, "svg .c1{stroke:#e08a1e}")
	assert.Contains(t, h, `<td class="fail">FAIL not measured: no ids</td>`)
	for _, ext := range []string{"<script", "<link", "src="} {
		assert.NotContains(t, h, ext, "self-contained")
	}
}
