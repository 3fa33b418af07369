package reports

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/brownout-dev/brownout/scenarios/score"
)

const (
	ansiReset = "\x1b[0m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiBold  = "\x1b[1m"
)

// ScorecardWidth is the most columns a scorecard line takes: tables that
// would be wider are printed one record per row, and long lines wrap.
const ScorecardWidth = 100

type painter bool

func (p painter) paint(code, s string) string {
	if !p {
		return s
	}
	return code + s + ansiReset
}

func (p painter) verdict(pass bool) string {
	if pass {
		return p.paint(ansiGreen, "PASS")
	}
	return p.paint(ansiRed, "FAIL")
}

// WriteScorecard writes the terminal scorecard, at most [ScorecardWidth]
// columns wide: the run's verdict, the overall scores, each fault step's
// scores, per-target totals, demotions and flaps per target, alerts and
// every expectation with its verdict. With color, verdicts are green and
// red (see [ColorEnabled]); widths are measured on the uncoloured text.
func WriteScorecard(w io.Writer, r *score.Result, color bool) error {
	p := painter(color)
	var b strings.Builder
	head := runVerdict(r)
	if head == "PASS" {
		head = p.paint(ansiBold+ansiGreen, head)
	} else {
		head = p.paint(ansiBold+ansiRed, head)
	}
	fmt.Fprintf(&b, "%s  game day %s (%s, seed %d, %s of %s)\n", head, p.paint(ansiBold, r.Scenario), r.Mode, r.Seed, fmtDur(r.Elapsed), fmtDur(r.Duration))
	if r.Aborted {
		b.WriteString(wrap([]string{"aborted after " + fmtDur(r.Elapsed) + ": " + r.AbortReason}, 0))
	}
	o := &r.Overall
	a := o.Availability
	b.WriteString("\n")
	b.WriteString(wrap([]string{
		fmt.Sprintf("requests %d", a.Requests), fmt.Sprintf("served %d", a.Served), fmt.Sprintf("degraded %d", a.Degraded),
		fmt.Sprintf("failed %d", a.Failed), fmt.Sprintf("success %s (SLO %s over %s)", fmtPct(a.Success), fmtPct(r.SLO.SuccessRate), fmtDur(r.SLO.Window))}, 0))
	b.WriteString(wrap([]string{
		fmt.Sprintf("retry amplification %.2f (peak %.2f over 10s)", o.Retry.Amplification, o.Retry.PeakAmplification),
		fmt.Sprintf("budget exhausted %d", o.Retry.BudgetExhausted)}, 0))
	b.WriteString(wrap([]string{fmt.Sprintf("p95 TTFT baseline %s, during faults %s (penalty %s)",
		p95(o.Latency.BaselineTTFT), p95(o.Latency.FaultTTFT), penalty(o.Latency.TTFTPenalty, o.Latency.BaselineTTFT, o.Latency.FaultTTFT))}, 0))
	b.WriteString(wrap([]string{fmt.Sprintf("p95 inter-token baseline %s, during faults %s (penalty %s)",
		p95ITL(o.Latency.BaselineInterToken), p95ITL(o.Latency.FaultInterToken),
		penalty(o.Latency.InterTokenPenalty, o.Latency.BaselineInterToken, o.Latency.FaultInterToken))}, 0))
	b.WriteString(wrap([]string{fmt.Sprintf("p95 total baseline %s, during faults %s (penalty %s)",
		p95(o.Latency.BaselineTotal), p95(o.Latency.FaultTotal), penalty(o.Latency.TotalPenalty, o.Latency.BaselineTotal, o.Latency.FaultTotal))}, 0))
	b.WriteString(wrap([]string{"cost " + fmtMoney(o.Cost.Total), "counterfactual " + fmtMoney(o.Cost.Counterfactual),
		"fallback premium " + fmtMoney(o.Cost.FallbackPremium)}, 0))
	b.WriteString(wrap([]string{"cost multiplier during faults " + costMultiplier(r),
		"prompt-cache warm-up " + fmtMoney(o.Cost.CacheWarmupPenalty)}, 0))
	last := []string{"flaps " + flapsByTarget(r), fmt.Sprintf("bad served %d", o.BadServed)}
	if r.BlackBox {
		last = append(last, "(black box: detection by traffic shift)")
	}
	b.WriteString(wrap(last, 0))
	b.WriteString(falseAlarmLine(r) + "\n")
	writeFleetScorecard(&b, r.Fleet)

	if len(r.Faults) > 0 {
		b.WriteString("\nFault steps\n")
		writeFaultBlocks(&b, faultTable(r))
	}
	if len(r.Targets) > 0 {
		b.WriteString("\nTargets\n")
		writeTable(&b, targetTable(r))
		b.WriteString("\nDemotions and flaps per target (flaps = oscillations + false positives)\n")
		writeTable(&b, demotionTable(r))
	}
	if len(r.Alerts) > 0 {
		b.WriteString("\nAlerts\n")
		for _, al := range r.Alerts {
			items := []string{fmt.Sprintf("%s (%s): fired %d, resolved %d", al.Name, al.Severity, al.Fired, al.Resolved)}
			for _, k := range sortedKeys(al.Undelivered) {
				items = append(items, fmt.Sprintf("%s to %s ×%d", p.paint(ansiRed, "UNDELIVERED"), k, al.Undelivered[k]))
			}
			for _, k := range sortedKeys(al.Delivered) {
				items = append(items, fmt.Sprintf("delivered to %s ×%d", k, al.Delivered[k]))
			}
			b.WriteString(wrap(items, 2))
		}
	}
	if r.PromAlerts != nil {
		b.WriteString("\nPrometheus alerts\n")
		b.WriteString(wrap([]string{promAlertsAbout(r)}, 0))
		writeTable(&b, promAlertsTable(r))
	}
	if note := timelineNote(r); note != "" {
		b.WriteString("\n" + wrap([]string{"Timeline: not the whole run: the reports hold " + note}, 0))
	}
	if len(r.Expectations) > 0 {
		writeExpectations(&b, r, p)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Scorecard returns the plain (uncoloured) scorecard.
func Scorecard(r *score.Result) string {
	var b strings.Builder
	_ = WriteScorecard(&b, r, false)
	return b.String()
}

// writeFaultBlocks prints each fault step as a short block: what and when,
// then detection, mitigation and recovery, then the other scores.
func writeFaultBlocks(b *strings.Builder, t table) {
	for _, row := range t.Rows {
		var what, times, rest []string
		for i, c := range t.Cols {
			switch {
			case i < 4:
				what = append(what, row[i])
			case i < 7:
				times = append(times, c.short()+" "+row[i])
			default:
				rest = append(rest, c.short()+" "+row[i])
			}
		}
		b.WriteString(wrap(what, 2))
		b.WriteString(wrap(times, 4))
		b.WriteString(wrap(rest, 4))
	}
}

// writeTable prints a table with aligned columns (numbers to the right)
// under short headers, indented by two; a table wider than ScorecardWidth
// is printed as one record per row instead. Aside columns follow as one
// line each, listing the rows whose value is not zero.
func writeTable(b *strings.Builder, t table) {
	var cols []int
	for i, c := range t.Cols {
		if !c.Aside {
			cols = append(cols, i)
		}
	}
	widths := make([]int, len(t.Cols))
	total := 0
	for _, i := range cols {
		widths[i] = width(t.Cols[i].short())
		for _, row := range t.Rows {
			widths[i] = max(widths[i], width(row[i]))
		}
		total += 2 + widths[i]
	}
	if total <= ScorecardWidth {
		line := func(cells func(i int) string) {
			var l strings.Builder
			for _, i := range cols {
				l.WriteString("  ")
				fill := strings.Repeat(" ", widths[i]-width(cells(i)))
				if t.Cols[i].Num {
					l.WriteString(fill + cells(i))
				} else {
					l.WriteString(cells(i) + fill)
				}
			}
			b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
		}
		line(func(i int) string { return t.Cols[i].short() })
		for _, row := range t.Rows {
			line(func(i int) string { return row[i] })
		}
	} else {
		for _, row := range t.Rows {
			b.WriteString("  " + row[cols[0]] + "\n")
			var items []string
			for _, i := range cols[1:] {
				items = append(items, t.Cols[i].short()+" "+row[i])
			}
			b.WriteString(wrap(items, 4))
		}
	}
	for i, c := range t.Cols {
		if !c.Aside {
			continue
		}
		var vals []string
		for _, row := range t.Rows {
			if row[i] != "0" && row[i] != "0s" && row[i] != "" {
				vals = append(vals, row[0]+" "+row[i])
			}
		}
		if len(vals) == 0 {
			vals = append(vals, "none")
		}
		b.WriteString(wrap([]string{c.Long + ": " + strings.Join(vals, ", ")}, 2))
	}
}

// writeExpectations prints each verdict on a line — the verdict, the
// expectation and its scope in an aligned column, then what was wanted and
// what was measured — or, when that line would be too wide, the last two on
// the lines below.
//
// An aborted run fails whatever its expectations say (they were judged on
// part of a run), and the heading says so.
func writeExpectations(b *strings.Builder, r *score.Result, p painter) {
	vs := r.Expectations
	pass := 0
	for _, v := range vs {
		if v.Pass {
			pass++
		}
	}
	if r.Aborted {
		fmt.Fprintf(b, "\nExpectations (%d of %d hold on the %s that ran; the run was aborted, so it fails)\n", pass, len(vs), fmtDur(r.Elapsed))
	} else {
		fmt.Fprintf(b, "\nExpectations (%d of %d hold)\n", pass, len(vs))
	}
	name := func(v score.Verdict) string {
		return strings.Join(strings.Fields(v.Name+" "+v.Step+" "+v.Target), " ")
	}
	nameW, wantW := expectationColumns(vs, name)
	for _, v := range vs {
		n, want, got := name(v), "want "+v.Want, "got "+v.Got
		line := "  " + pad(n, nameW) + "  " + pad(want, wantW) + "  " + got
		if fitsRow(width(n), width(want), width(got), nameW, wantW) {
			b.WriteString("  " + p.verdict(v.Pass) + strings.TrimRight(line, " ") + "\n")
			continue
		}
		b.WriteString("  " + p.verdict(v.Pass) + "  " + n + "\n")
		b.WriteString(wrap([]string{want, got}, 8))
	}
}

// expectationLine is the width of an expectation's line but for its cells:
// the indent, the verdict and the gaps.
const expectationLine = 2 + 4 + 2 + 2 + 2

// fitsRow reports whether an expectation with cells of these widths fits
// one line under columns of widths nameW and wantW.
func fitsRow(n, want, got, nameW, wantW int) bool {
	return n <= nameW && want <= wantW && expectationLine+nameW+wantW+got <= ScorecardWidth
}

// expectationColumns picks the widths of the name and want columns under
// which the most expectations fit one line (the narrowest such widths).
func expectationColumns(vs []score.Verdict, name func(score.Verdict) string) (nameW, wantW int) {
	best := -1
	for _, a := range vs {
		for _, b := range vs {
			nw, ww := width(name(a)), width("want "+b.Want)
			fit := 0
			for _, v := range vs {
				if fitsRow(width(name(v)), width("want "+v.Want), width("got "+v.Got), nw, ww) {
					fit++
				}
			}
			if fit > best || fit == best && nw+ww < nameW+wantW {
				best, nameW, wantW = fit, nw, ww
			}
		}
	}
	return nameW, wantW
}

// pad fills s with spaces to n columns.
func pad(s string, n int) string { return s + strings.Repeat(" ", max(0, n-width(s))) }

// width is how many columns s takes on a terminal: one per character
// (the scorecard's text has no wide characters), none for colour codes.
func width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			if j := strings.IndexByte(s[i:], 'm'); j > 0 {
				i += j + 1
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return n
}

// wrap joins items with two spaces into lines of at most ScorecardWidth
// columns, each indented by indent (later lines by two more). An item
// moves whole to the next line when it does not fit; one too long for a
// line of its own is broken at its spaces.
func wrap(items []string, indent int) string {
	var b strings.Builder
	line, used := strings.Repeat(" ", indent), false
	next := func() {
		b.WriteString(line + "\n")
		line, used = strings.Repeat(" ", indent+2), false
	}
	for _, it := range items {
		if used && width(line)+2+width(it) > ScorecardWidth {
			next()
		}
		for i, word := range strings.Split(it, " ") {
			sep := " "
			switch {
			case !used:
				sep = ""
			case i == 0:
				sep = "  "
			}
			if used && width(line)+len(sep)+width(word) > ScorecardWidth {
				next()
				sep = ""
			}
			line += sep + word
			used = true
		}
	}
	if used {
		b.WriteString(line + "\n")
	}
	return b.String()
}
