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
