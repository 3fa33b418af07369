package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// TestRenderExampleLibrary runs every game day of examples/gamedays in
// simulated mode and renders every report format from its result, after a
// round trip through result.json (reports read stored results): every
// scorecard fits 100 columns, no chart's texts overlap, report.md has a
// timeline, and each TTD reads the same in tables and verdicts.
func TestRenderExampleLibrary(t *testing.T) {
	files, err := filepath.Glob("../examples/gamedays/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			t.Parallel()
			s, err := scenarios.Load(f)
			require.NoError(t, err)
			res, err := scenarios.Run(context.Background(), s, scenarios.Options{Mode: score.ModeSim})
			require.NoError(t, err)
			data, err := json.Marshal(res)
			require.NoError(t, err)
			var stored score.Result
			require.NoError(t, json.Unmarshal(data, &stored))

			var page, md, junit, card bytes.Buffer
			require.NoError(t, WriteHTML(&page, &stored))
			require.NoError(t, WriteMarkdown(&md, &stored))
			require.NoError(t, WriteJUnit(&junit, &stored))
			require.NoError(t, WriteScorecard(&card, &stored, false))
			require.GreaterOrEqual(t, strings.Count(page.String(), "<svg "), 4, "time charts")
			require.Contains(t, md.String(), "# Game day: "+stored.Scenario)
			require.Equal(t, len(stored.Expectations), strings.Count(junit.String(), "<testcase "))
			require.Contains(t, card.String(), stored.Scenario)

			// The scorecard fits a 100-column terminal, in colour too.
			var colour bytes.Buffer
			require.NoError(t, WriteScorecard(&colour, &stored, true))
			for _, out := range []string{card.String(), colour.String()} {
				for _, line := range strings.Split(out, "\n") {
					require.LessOrEqual(t, width(line), ScorecardWidth, "%q", line)
				}
			}
			// No two chart texts overlap; report.md has a timeline.
			for _, svg := range charts(&stored) {
				requireNoOverlap(t, svg)
			}
			if len(stored.Series.Timeline) > 0 {
				require.Contains(t, md.String(), "\n## Timeline\n")
			}
			// A TTD reads the same in the tables and in the verdicts.
			for _, f := range stored.Faults {
				if !f.Detected {
					continue
				}
				require.Contains(t, md.String(), "| "+detect(f)+" |")
				require.Contains(t, card.String(), "TTD "+detect(f))
				for _, v := range stored.Expectations {
					if v.Name == "ttd" && v.Step == f.Step && v.Target == f.Target {
						require.True(t, strings.HasPrefix(v.Got, fmtDur(f.TTD)+" "), "verdict %q, TTD %s", v.Got, fmtDur(f.TTD))
					}
				}
			}
		})
	}
}
