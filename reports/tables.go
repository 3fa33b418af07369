package reports

import (
	"fmt"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// The tables every format shows — fault steps, targets, and demotions and
// flaps per target — built once here; the scorecard, Markdown and HTML only
// lay them out.

// column is a table column: its header in the documents (Long) and in the
// terminal's narrow scorecard (Short; "" for Long), whether its values are
// numbers (right-aligned on the terminal), and whether the scorecard leaves
// it to a line of its own (Aside) to stay within its width.
type column struct {
	Long, Short string
	Num, Aside  bool
}

func (c column) short() string {
	if c.Short != "" {
		return c.Short
	}
	return c.Long
}

type table struct {
	Cols []column
	Rows [][]string
}

// faultTable has one row per fault step and target.
func faultTable(r *score.Result) table {
	t := table{Cols: []column{{Long: "step"}, {Long: "target"}, {Long: "kind"}, {Long: "window"},
		{Long: "TTD"}, {Long: "TTM"}, {Long: "TTR"}, {Long: "success", Num: true}, {Long: "amplification", Num: true},
		{Long: "load ×", Short: "load", Num: true}, {Long: "cost ×", Short: "cost", Num: true}, {Long: "re-detections", Short: "re-detected", Num: true},
		{Long: "flaps", Num: true}, {Long: "bad served", Num: true},
		{Long: "first mitigation", Aside: true}, {Long: "SLO breach", Aside: true}, {Long: "relapses", Num: true, Aside: true},
		{Long: "returns to target", Num: true, Aside: true},
		{Long: "latency penalty (first token / inter-token / total)", Short: "penalty TTFT/ITL/total", Aside: true}}}
	for _, f := range r.Faults {
		t.Rows = append(t.Rows, []string{f.Step, f.Target, f.Kind, window(r, f), detect(f), mitigate(f), runRecoverStr(r, f),
			rateOf(f.Availability, f.Availability.Success), amplification(f.Retry), loadRatio(f),
			faultCost(r, f), fmt.Sprint(f.ReDetections), fmt.Sprint(f.Flaps), fmt.Sprint(f.BadServed),
			firstMitigation(f), breach(f), fmt.Sprint(f.Relapses), fmt.Sprint(f.Returns), penaltyKinds(f.Latency)})
	}
	return t
}

// firstMitigation prints when the SLI first came back at the SLO.
func firstMitigation(f score.FaultScore) string {
	switch {
	case !f.Impact:
		return "no impact"
	case f.FirstMitigated:
		return fmtDur(f.FirstMitigation)
	}
	return "never"
}

// breach prints how long the SLI was below the SLO, and in how many spells.
func breach(f score.FaultScore) string {
	if f.Breaches == 0 {
		return "0s"
	}
	return fmt.Sprintf("%s in %d", fmtDur(f.BreachTime), f.Breaches) + breachParts(f.BreachByPart)
}

// breachParts names the SLO parts that broke and for how long, "" when
// none did: " (latency 9.8s, correctness 2s)".
func breachParts(m map[string]time.Duration) string {
	var parts []string
	for _, p := range []string{score.PartSuccess, score.PartCorrectness, score.PartLatency, score.PartTTFTP95, score.PartLatencyP95} {
		if d := m[p]; d > 0 {
			parts = append(parts, p+" "+fmtDur(d))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// falseAlarms prints the run's false alarms: "0", or "2 (20s a:m
// detector:token_wall, 21s alert:X)", the first few.
func falseAlarms(r *score.Result) string {
	fa := r.Overall.FalseAlarms
	s := fmt.Sprint(len(fa))
	var parts []string
	for i, a := range fa {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		p := fmtDur(a.Time.Sub(r.Start)) + " " + a.Source
		if a.Target != "" {
			p += " on " + a.Target
		}
		parts = append(parts, p)
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// falseAlarmTable has one row per false alarm: when, on which target, what
// raised it and why.
func falseAlarmTable(r *score.Result) table {
	t := table{Cols: []column{{Long: "at"}, {Long: "target"}, {Long: "source"}, {Long: "reason"}}}
	for _, a := range r.Overall.FalseAlarms {
		target := a.Target
		if target == "" {
			target = "–"
		}
		reason := a.Reason
		if reason == "" {
			reason = "–"
		}
		t.Rows = append(t.Rows, []string{fmtDur(a.Time.Sub(r.Start)), target, a.Source, reason})
	}
	return t
}

// falseAlarmLine is the scorecard's one line on SLO breach time and false
// alarms, within ScorecardWidth: as many of the first alarms as fit, then
// how many more.
func falseAlarmLine(r *score.Result) string {
	head := "SLO breach time " + fmtDur(r.Overall.BreachTime) + "  false alarms "
	fa := r.Overall.FalseAlarms
	if m, ok := r.Measured["false_alarms"]; ok && !m.Measured {
		return head + "not measured"
	}
	line := head + fmt.Sprint(len(fa))
	if len(fa) == 0 {
		return line
	}
	var parts []string
	for i, a := range fa {
		p := fmtDur(a.Time.Sub(r.Start)) + " " + a.Source
		if a.Target != "" {
			p += " on " + a.Target
		}
		rest := ""
		if more := len(fa) - i - 1; more > 0 {
			rest = fmt.Sprintf(", +%d more", more)
		}
		try := line + " (" + strings.Join(append(parts, p), ", ") + rest + ")"
		if width(try) > ScorecardWidth {
			break
		}
		parts = append(parts, p)
	}
	if more := len(fa) - len(parts); len(parts) == 0 || more > 0 {
		if len(parts) == 0 {
			return line + " (see report.md)"
		}
		return line + " (" + strings.Join(parts, ", ") + fmt.Sprintf(", +%d more", more) + ")"
	}
	return line + " (" + strings.Join(parts, ", ") + ")"
}

// window prints when a fault step ran, as offsets from the run's start.
func window(r *score.Result, f score.FaultScore) string {
	return fmtDur(f.Start.Sub(r.Start)) + "–" + fmtDur(f.End.Sub(r.Start))
}

// targetTable has one row per target: traffic, cost and quality.
func targetTable(r *score.Result) table {
	t := table{Cols: []column{{Long: "target"}, {Long: "attempts", Num: true}, {Long: "ok", Num: true},
		{Long: "served", Num: true}, {Long: "share", Num: true}, {Long: "cost", Num: true},
		{Long: "quality", Num: true}, {Long: "bad served", Num: true}}}
	for _, x := range r.Targets {
		t.Rows = append(t.Rows, []string{x.Target, fmt.Sprint(x.Attempts), fmt.Sprint(x.OK), fmt.Sprint(x.Served),
			fmtPct(x.Share), fmtMoney(x.Cost), fmt.Sprintf("%s (n=%d)", fmtPct(x.Quality), x.QualityN), fmt.Sprint(x.BadServed)})
	}
	return t
}

// demotionTable has one row per target: how often it was demoted (breaker
// openings and unhealthy markings), how those split into re-detections
// within a fault, oscillations after one and false positives outside every
// fault, its flaps (oscillations + false positives) and the time it spent
// out of traffic with no fault of its own.
func demotionTable(r *score.Result) table {
	t := table{Cols: []column{{Long: "target"}, {Long: "breaker openings", Short: "opened", Num: true},
		{Long: "unhealthy markings", Short: "unhealthy", Num: true}, {Long: "re-detections", Short: "re-detected", Num: true},
		{Long: "oscillations", Short: "oscillated", Num: true}, {Long: "false positives", Short: "false pos.", Num: true},
		{Long: "flaps", Num: true}, {Long: "unnecessary fallback", Num: true, Aside: true}}}
	for _, x := range r.Targets {
		t.Rows = append(t.Rows, []string{x.Target, fmt.Sprint(x.Openings), fmt.Sprint(x.Unhealthy), fmt.Sprint(x.ReDetections),
			fmt.Sprint(x.Oscillations), fmt.Sprint(x.FalsePositives), fmt.Sprint(x.Flaps), fmtDur(x.UnnecessaryFallback)})
	}
	return t
}

// flapsByTarget prints the run's flaps with the targets they come from:
// "0", or "6 (openai:gpt-4o 4, anthropic:claude-sonnet-4 2)".
func flapsByTarget(r *score.Result) string {
	var parts []string
	for _, t := range r.Targets {
		if t.Flaps > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t.Target, t.Flaps))
		}
	}
	s := fmt.Sprint(r.Overall.Flaps)
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// overallRows are the run-wide scores as (name, value) pairs.
func overallRows(r *score.Result) [][2]string {
	a := r.Overall.Availability
	l := r.Overall.Latency
	c := r.Overall.Cost
	p3 := func(p score.Percentiles) string {
		if p.N == 0 {
			return "– (no sample)"
		}
		return fmtDur(p.P50) + " / " + fmtDur(p.P95) + " / " + fmtDur(p.P99)
	}
	return [][2]string{
		{"requests", fmt.Sprint(a.Requests)},
		{"success (served + degraded)", fmtPct(a.Success)},
		{"served in full / degraded / failed", fmtPct(a.ServedRate) + " / " + fmtPct(a.DegradedRate) + " / " + fmtPct(a.FailedRate)},
		{"bad responses served as success", fmt.Sprint(r.Overall.BadServed)},
		{"retry amplification (peak 10 s)", fmt.Sprintf("%.2f (%.2f)", r.Overall.Retry.Amplification, r.Overall.Retry.PeakAmplification)},
		{"retry budget exhausted", fmt.Sprint(r.Overall.Retry.BudgetExhausted)},
		{"TTFT p50 / p95 / p99 baseline", p3(l.BaselineTTFT)},
		{"TTFT p50 / p95 / p99 during faults", p3(l.FaultTTFT)},
		{"inter-token p95 baseline / during faults", p95ITL(l.BaselineInterToken) + " / " + p95ITL(l.FaultInterToken)},
		{"total (non-streamed) p95 baseline / during faults", p95(l.BaselineTotal) + " / " + p95(l.FaultTotal)},
		{"latency penalty (p95 during faults / baseline)", penalties(l)},
		{"cost / counterfactual / premium", fmtMoney(c.Total) + " / " + fmtMoney(c.Counterfactual) + " / " + fmtMoney(c.FallbackPremium)},
		{"cost multiplier during faults", costMultiplier(r)},
		{"prompt-cache warm-up penalty", fmtMoney(c.CacheWarmupPenalty)},
		{"flaps (by target)", flapsByTarget(r)},
		{"SLO breach time", fmtDur(r.Overall.BreachTime) + breachParts(r.Overall.BreachByPart)},
		{"false alarms (no fault to find)", falseAlarms(r)},
	}
}
