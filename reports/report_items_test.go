package reports

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// TestHTMLExpectationsFirst: the verdicts come before the charts, the
// failing ones first, so a failed expectation is the first thing read.
func TestHTMLExpectationsFirst(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, fixture()))
	page := buf.String()
	failed := strings.Index(page, "fired at 36s, delivery to oncall failed")
	passed := strings.Index(page, "<td>&lt;= 30s</td>")
	chart := strings.Index(page, "<svg ")
	require.Positive(t, failed)
	require.Positive(t, passed)
	require.Less(t, failed, chart, "the failing expectation sits above the charts")
	require.Less(t, passed, chart, "every expectation sits above the charts")
	require.Less(t, failed, passed, "failing expectations first")

	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, fixture()))
	require.Less(t, strings.Index(md.String(), "| FAIL | alert"), strings.Index(md.String(), "| PASS | ttd"), "failing first in Markdown too")
}

// TestZeroShownAsZero: a measured 0 prints as 0 (a fault that took all
// load off its target has load ratio 0.00×); only a ratio with nothing to
// compare with prints "–".
func TestZeroShownAsZero(t *testing.T) {
	cell := func(r *score.Result, col string) string {
		tb := faultTable(r)
		for i, c := range tb.Cols {
			if c.Long == col {
				return tb.Rows[0][i]
			}
		}
		t.Fatalf("no column %q", col)
		return ""
	}
	r := fixture()
	r.Faults[0].OfferedLoad, r.Faults[0].LoadRatio, r.Faults[0].BaselineLoad = 0, 0, 10
	require.Equal(t, "0.00×", cell(r, "load ×"), "every attempt kept off the target")
	r.Faults[0].BaselineLoad = 0
	require.Equal(t, "–", cell(r, "load ×"), "no baseline load to compare with")

	r = fixture()
	r.Faults[0].CostMultiplier = 0
	require.Equal(t, "0.00×", cell(r, "cost ×"), "priced, with requests on both sides: a free fault")
	r.Measured = map[string]score.Measure{"cost_multiplier": {Why: "no prices"}}
	require.Equal(t, "–", cell(r, "cost ×"), "not priced")

	// Latency penalties: measured per kind, "–" for a kind without samples.
	l := score.Latency{
		BaselineTTFT: score.Percentiles{N: 10, P95: time.Second}, FaultTTFT: score.Percentiles{N: 10, P95: 2 * time.Second}, TTFTPenalty: 2,
		BaselineTotal: score.Percentiles{N: 5, P95: time.Second}, FaultTotal: score.Percentiles{N: 0}}
	require.Equal(t, "first token 2.00×, inter-token –, total –", penalties(l))

	var md, card bytes.Buffer
	r = fixture()
	r.Faults[0].LoadRatio, r.Faults[0].BaselineLoad = 0, 10
	require.NoError(t, WriteMarkdown(&md, r))
	require.Contains(t, md.String(), "| 0.00× |")
	require.NoError(t, WriteScorecard(&card, r, false))
	require.Contains(t, card.String(), "load 0.00×")
}

// TestChartsDrawTheSLO: the success chart draws the SLO's success rate,
// the TTFT chart the SLO's TTFT bound (p95 when declared, else max), and
// the TTFT chart's title says whether it holds streamed requests only.
func TestChartsDrawTheSLO(t *testing.T) {
	r := fixture()
	cs := charts(r)
	require.Contains(t, cs[1], `class="slo"`)
	require.Contains(t, cs[1], "SLO 99%")
	require.NotContains(t, cs[2], `class="slo"`, "no TTFT objective, no line")
	require.Contains(t, cs[2], "non-streamed included", "the fixture's requests are not streamed")

	r.SLO.TTFT = score.LatencyObjective{Max: 2 * time.Second}
	cs = charts(r)
	require.Contains(t, cs[2], `class="slo"`)
	require.Contains(t, cs[2], "SLO max TTFT 2s")
	requireNoOverlap(t, cs[2])

	r.SLO.TTFT.P95 = 1500 * time.Millisecond
	require.Contains(t, charts(r)[2], "SLO p95 TTFT 1.5s", "p95 is what the chart plots")

	r.Overall.Latency.BaselineTotal.N, r.Overall.Latency.FaultTotal.N = 0, 0
	r.Overall.Latency.BaselineTTFT.N = 10
	require.Contains(t, charts(r)[2], "(streamed requests)")
}
