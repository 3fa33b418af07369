package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/brownout-dev/brownout/scenarios"
)

// mdEscape keeps a value from breaking a Markdown table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// WriteMarkdown writes the report as Markdown, for a ticket or a postmortem.
func WriteMarkdown(w io.Writer, r *scenarios.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Game day: %s — %s\n\n", mdEscape(r.Scenario), runVerdict(r))
	fmt.Fprintf(&b, "- Mode: %s, seed %d\n- Ran %s of %s\n", r.Mode, r.Seed, fmtDur(r.Elapsed), fmtDur(r.Duration))
	if r.Aborted {
		fmt.Fprintf(&b, "- **Aborted:** %s\n", mdEscape(r.AbortReason))
	}
	fmt.Fprintf(&b, "- SLO: %s success over %s\n", fmtPct(r.SLO.SuccessRate), fmtDur(r.SLO.Window))
	if r.BlackBox {
		b.WriteString("- Black-box run: detection measured as traffic shift at the mocks\n")
	}

	b.WriteString("\n## Expectations\n\n| | expectation | want | got |\n|---|---|---|---|\n")
	for _, v := range r.Expectations {
		name := v.Name
		if v.Step != "" {
			name += " [" + v.Step + "]"
		}
		if v.Target != "" {
			name += " " + v.Target
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", verdictWord(v.Pass), mdEscape(name), mdEscape(v.Want), mdEscape(v.Got))
	}

	a := r.Overall.Availability
	b.WriteString("\n## Overall\n\n| score | value |\n|---|---|\n")
	rows := [][2]string{
		{"requests", fmt.Sprint(a.Requests)},
		{"success (served + degraded)", fmtPct(a.Success)},
		{"served in full / degraded / failed", fmtPct(a.ServedRate) + " / " + fmtPct(a.DegradedRate) + " / " + fmtPct(a.FailedRate)},
		{"bad responses served as success", fmt.Sprint(r.Overall.BadServed)},
		{"retry amplification (peak 10 s)", fmt.Sprintf("%.2f (%.2f)", r.Overall.Retry.Amplification, r.Overall.Retry.PeakAmplification)},
		{"retry budget exhausted", fmt.Sprint(r.Overall.Retry.BudgetExhausted)},
		{"TTFT p95 baseline → fault", fmtDur(r.Overall.Latency.BaselineTTFT.P95) + " → " + fmtDur(r.Overall.Latency.FaultTTFT.P95) + " (" + fmtRatio(r.Overall.Latency.TTFTPenalty) + ")"},
		{"cost / counterfactual", fmtMoney(r.Overall.Cost.Total) + " / " + fmtMoney(r.Overall.Cost.Counterfactual)},
		{"fallback premium", fmtMoney(r.Overall.Cost.FallbackPremium)},
		{"cost multiplier during faults", fmtRatio(r.Overall.Cost.Multiplier)},
		{"flaps", fmt.Sprint(r.Overall.Flaps)},
	}
	rows = append(rows, fleetRows(r.Fleet)...)
	for _, row := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], row[1])
	}

	if len(r.Faults) > 0 {
		b.WriteString("\n## Fault steps\n\n| step | target | kind | TTD | TTM | TTR | success | amplification | load × | cost × | flaps | bad served |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, f := range r.Faults {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %s | %d | %d |\n",
				mdEscape(f.Step), f.Target, mdEscape(f.Kind), detect(f), mitigate(f), recoverStr(f), fmtPct(f.Availability.Success),
				f.Retry.Amplification, fmtRatio(f.LoadRatio), fmtRatio(f.CostMultiplier), f.Flaps, f.BadServed)
		}
	}
	if len(r.Targets) > 0 {
		b.WriteString("\n## Targets\n\n| target | attempts | ok | served | share | cost | quality | openings | false positives |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, t := range r.Targets {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %s | %s (n=%d) | %d | %d |\n",
				t.Target, t.Attempts, t.OK, t.Served, fmtPct(t.Share), fmtMoney(t.Cost), fmtPct(t.Quality), t.QualityN, t.Openings, t.FalsePositives)
		}
	}
	if len(r.Alerts) > 0 {
		b.WriteString("\n## Alerts\n\n| alert | severity | fired | first | delivered | undelivered |\n|---|---|---|---|---|---|\n")
		for _, al := range r.Alerts {
			first := "–"
			if !al.FirstAt.IsZero() {
				first = fmtDur(al.FirstAt.Sub(r.Start))
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s |\n", mdEscape(al.Name), al.Severity, al.Fired, first, countMap(al.Delivered), countMap(al.Undelivered))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func countMap(m map[string]int) string {
	if len(m) == 0 {
		return "–"
	}
	keys := sortedKeys(m)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
