package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
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

	// A fault step with no request in its window has no success rate.
	r = fixture()
	require.Equal(t, "100%", cell(r, "success"))
	r.Faults[0].Availability, r.Faults[0].Retry = score.Availability{}, score.Retry{}
	require.Equal(t, "–", cell(r, "success"), "no request: not 0%")
	require.Equal(t, "–", cell(r, "amplification"))

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
// the TTFT chart plots streamed requests only (a non-streamed answer has no
// first token apart from its whole).
func TestChartsDrawTheSLO(t *testing.T) {
	r := fixture()
	cs := charts(r)
	require.Contains(t, cs[1], `class="slo"`)
	require.Contains(t, cs[1], "SLO 99%")
	require.NotContains(t, cs[2], `class="slo"`, "no TTFT objective, no line")
	require.Contains(t, cs[2], "(streamed requests)")
	require.NotContains(t, cs[2], `class="ttft"`, "the fixture's requests are not streamed: no first token to plot")

	r.SLO.TTFT = score.LatencyObjective{Max: 2 * time.Second}
	cs = charts(r)
	require.Contains(t, cs[1], `class="good"`, "the good-request rate, the SLI, beside the success rate")
	requireNoOverlap(t, cs[1])
	require.Contains(t, cs[2], `class="slo"`)
	require.Contains(t, cs[2], "SLO max TTFT 2s")
	requireNoOverlap(t, cs[2])

	r.SLO.TTFT.P95 = 1500 * time.Millisecond
	require.Contains(t, charts(r)[2], "SLO p95 TTFT 1.5s", "p95 is what the chart plots")

}

// TestTimelineNeverSilentlyCut: when result.json kept fewer notable events
// than the run had, every format says so, up to when, and points to
// events.jsonl; report.html holds every stored row, paged, never cut.
func TestTimelineNeverSilentlyCut(t *testing.T) {
	r := fixture()
	require.Empty(t, timelineNote(r), "the fixture kept every event")
	r.Events.ByKind["health.change"] += 3000
	// A long stored timeline: 450 distinct transitions.
	for i := range 450 {
		to := []string{"healthy", "unhealthy"}[i%2]
		r.Series.Timeline = append(r.Series.Timeline, events.Event{Time: r.Start.Add(100*time.Second + time.Duration(i)*10*time.Millisecond),
			Kind: events.HealthChange, Target: "openai:gpt-4o", To: to})
	}
	note := timelineNote(r)
	require.Contains(t, note, "up to 1m44.5s of the run's 2m0s")
	require.Contains(t, note, "events.jsonl has them all")

	var page, md, card bytes.Buffer
	require.NoError(t, WriteHTML(&page, r))
	require.NoError(t, WriteMarkdown(&md, r))
	require.NoError(t, WriteScorecard(&card, r, false))
	require.Contains(t, page.String(), "Not the whole run")
	require.Contains(t, page.String(), template.HTMLEscapeString(note))
	require.Equal(t, len(groupTimeline(r.Start, r.Series.Timeline)), strings.Count(page.String(), "<tr data-kind="), "every stored row, none cut")
	require.Contains(t, page.String(), `id="pager"`)
	require.Regexp(t, `health\.change \(\d+ of \d+\)`, page.String(), "kind counts say how many the run had")
	require.Contains(t, md.String(), note)
	require.Regexp(t, `\d+ more rows, from 1m\d`, md.String(), "Markdown says where its rows stop")
	require.Regexp(t, `health\.change \d+ of \d+`, md.String(), "Markdown's kind counts say how many the run had")
	require.Contains(t, card.String(), "events.jsonl")
	for _, line := range strings.Split(card.String(), "\n") {
		require.LessOrEqual(t, width(line), ScorecardWidth, "%q", line)
	}

	// A result that kept no timeline at all still says what it lost.
	r.Series.Timeline = nil
	md.Reset()
	require.NoError(t, WriteMarkdown(&md, r))
	require.Contains(t, md.String(), "events.jsonl has them all")
}

// TestTimelinePagesInChromium runs the report's script: a timeline longer
// than a page shows its first page, says which rows it shows of how many,
// and hides the others behind the pager rather than dropping them.
func TestTimelinePagesInChromium(t *testing.T) {
	bin := chromium(t)
	r := fixture()
	for i := range 450 {
		to := []string{"healthy", "unhealthy"}[i%2]
		r.Series.Timeline = append(r.Series.Timeline, events.Event{Time: r.Start.Add(100*time.Second + time.Duration(i)*10*time.Millisecond),
			Kind: events.HealthChange, Target: "openai:gpt-4o", To: to})
	}
	rows := len(groupTimeline(r.Start, r.Series.Timeline))
	require.Greater(t, rows, htmlTimelinePage)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, r))
	require.NoError(t, os.WriteFile(page, buf.Bytes(), 0o644))
	dom := string(runChromium(t, bin, dir, "--window-size=1100,1800", "--dump-dom", "file://"+page))
	require.Contains(t, dom, fmt.Sprintf("rows 1–%d of %d (page 1 of %d)", htmlTimelinePage, rows, (rows+htmlTimelinePage-1)/htmlTimelinePage))
	require.Equal(t, rows, strings.Count(dom, "<tr data-kind="), "every row is in the page")
	require.Equal(t, rows-htmlTimelinePage, strings.Count(dom, `style="display: none;"><td>`), "rows past the first page are hidden, not dropped")
}

// TestLatencyPenaltyPerKind: first token, inter-token and total penalties
// each show, run-wide and per fault step, in every format.
func TestLatencyPenaltyPerKind(t *testing.T) {
	r := fixture()
	l := score.Latency{
		BaselineTTFT: score.Percentiles{N: 9, P95: time.Second}, FaultTTFT: score.Percentiles{N: 9, P95: 3 * time.Second}, TTFTPenalty: 3,
		BaselineInterToken: score.Percentiles{N: 9, P95: 20 * time.Millisecond}, FaultInterToken: score.Percentiles{N: 9, P95: 30 * time.Millisecond}, InterTokenPenalty: 1.5,
		BaselineTotal: score.Percentiles{N: 9, P95: time.Second}, FaultTotal: score.Percentiles{N: 9, P95: time.Second}, TotalPenalty: 1}
	r.Overall.Latency, r.Faults[0].Latency = l, l
	var md, page, card bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, r))
	require.NoError(t, WriteHTML(&page, r))
	require.NoError(t, WriteScorecard(&card, r, false))
	require.Contains(t, md.String(), "| first token 3.00×, inter-token 1.50×, total 1.00× |")
	require.Contains(t, md.String(), "| 3.00× / 1.50× / 1.00× |")
	require.Contains(t, page.String(), "first token 3.00×, inter-token 1.50×, total 1.00×")
	require.Contains(t, card.String(), "p95 inter-token baseline 20ms, during faults 30ms (penalty 1.50×)")
	require.Contains(t, card.String(), "penalty TTFT/ITL/total 3.00× / 1.50× / 1.00×")
}

// TestFalseAlarmsTable: Markdown and HTML list every false alarm (time,
// target, source, reason); the scorecard sums them up on one line within
// its width, however many there are and however long their names.
func TestFalseAlarmsTable(t *testing.T) {
	r := fixture()
	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, r))
	require.NotContains(t, md.String(), "## False alarms", "no table without false alarms")
	require.Contains(t, Scorecard(r), "false alarms 0\n")

	long := "anthropic:claude-sonnet-4-5-with-a-very-long-deployment-name"
	r.Overall.FalseAlarms = []score.FalseAlarm{
		{Time: r.Start.Add(20 * time.Second), Target: "openai:gpt-4o", Source: "detector:token_wall", Reason: "token_wall"},
		{Time: r.Start.Add(21 * time.Second), Source: "alert:fallback_rate_high"},
	}
	for i := range 6 {
		r.Overall.FalseAlarms = append(r.Overall.FalseAlarms, score.FalseAlarm{Time: r.Start.Add(time.Duration(100+i) * time.Second), Target: long, Source: "health", Reason: "sla_first_token"})
	}
	md.Reset()
	var page bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, r))
	require.NoError(t, WriteHTML(&page, r))
	require.Contains(t, md.String(), "## False alarms")
	require.Contains(t, md.String(), "| at | target | source | reason |")
	require.Contains(t, md.String(), "| 20s | openai:gpt-4o | detector:token_wall | token_wall |")
	require.Contains(t, md.String(), "| 21s | – | alert:fallback_rate_high | – |")
	require.Equal(t, 6, strings.Count(md.String(), "| health | sla_first_token |"))
	require.Contains(t, page.String(), "<h2>False alarms</h2>")
	require.Contains(t, page.String(), "<td>detector:token_wall</td>")
	require.Equal(t, 6, strings.Count(page.String(), "<td>sla_first_token</td>"))

	card := Scorecard(r)
	line := ""
	for _, l := range strings.Split(card, "\n") {
		if strings.HasPrefix(l, "SLO breach time ") {
			line = l
		}
		require.LessOrEqual(t, width(l), ScorecardWidth, "%q", l)
	}
	require.Contains(t, line, "false alarms 8 (20s detector:token_wall on openai:gpt-4o")
	require.Contains(t, line, "more)")

	r.Measured = map[string]score.Measure{"false_alarms": {Why: score.WhyBlackBoxEvents}}
	require.Contains(t, Scorecard(r), "false alarms not measured")
}

// TestCompareHTMLDrawsTheTTFTObjective: the bake-off's TTFT chart draws the
// SLO's TTFT bound too.
func TestCompareHTMLDrawsTheTTFTObjective(t *testing.T) {
	c := comparison()
	for _, cr := range c.Contestants {
		cr.Result.SLO.TTFT.P95 = 3 * time.Second
	}
	var buf bytes.Buffer
	require.NoError(t, WriteCompareHTML(&buf, c))
	require.Contains(t, buf.String(), "SLO p95 TTFT 3s")
}

// TestHeaderShowsEverySLOPart: the report's header states every part of
// the SLO the run was judged against, not only its success rate.
func TestHeaderShowsEverySLOPart(t *testing.T) {
	r := fixture()
	r.SLO.TTFT = score.LatencyObjective{P95: 3 * time.Second}
	r.SLO.Latency = score.LatencyObjective{Max: 20 * time.Second}
	r.SLO.Correctness = true
	want := "99% good over 10s, TTFT p95 <= 3s, non-streamed total max <= 20s, correct answers"
	var md, page bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, r))
	require.NoError(t, WriteHTML(&page, r))
	require.Contains(t, md.String(), "- SLO: "+want+"\n")
	require.Contains(t, page.String(), "SLO "+template.HTMLEscapeString(want))
}
