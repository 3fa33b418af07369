package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// File names WriteCompareFiles writes; each contestant's own reports go to
// its directory (DIR/NAME).
const (
	CompareHTMLFile     = "compare.html"
	CompareMarkdownFile = "compare.md"
)

// compareTable is a bake-off's scores side by side: a row per score, a
// column per contestant. Section rows have no values.
type compareTable struct {
	names []string
	rows  []compareRow
}

type compareRow struct {
	label  string
	values []string
	pass   []int8 // per value: 1 pass, -1 fail, 0 not a verdict
}

// newCompareTable lays out every contestant's overall scores, each fault
// step's (by step and target, in the first contestant's order) and each
// expectation's verdict.
func newCompareTable(c *scenarios.Comparison) compareTable {
	t := compareTable{}
	rs := make([]*score.Result, len(c.Contestants))
	for i, cr := range c.Contestants {
		t.names = append(t.names, cr.Name)
		rs[i] = cr.Result
	}
	row := func(label string, f func(r *score.Result) string) {
		cr := compareRow{label: label}
		for _, r := range rs {
			cr.values = append(cr.values, f(r))
		}
		t.rows = append(t.rows, cr)
	}
	section := func(label string) { t.rows = append(t.rows, compareRow{label: label}) }
	measured := func(r *score.Result, score, v string) string {
		if m, ok := r.Measured[score]; ok && !m.Measured {
			return "not measured"
		}
		return v
	}
	if c.Rounds > 1 {
		cr := compareRow{label: fmt.Sprintf("verdict over %d rounds", c.Rounds)}
		for _, con := range c.Contestants {
			v, p := "FAIL", int8(-1)
			if con.Pass {
				v, p = "PASS", 1
			}
			if sw := con.Repeat; sw != nil {
				failed := 0
				for _, e := range sw.Expectations {
					if !e.Pass {
						failed++
					}
				}
				v += fmt.Sprintf(" (%d rounds played", len(sw.Seeds))
				if failed > 0 {
					v += fmt.Sprintf(", %d of %d expectations below their pass rate", failed, len(sw.Expectations))
				}
				v += ")"
			}
			cr.values, cr.pass = append(cr.values, v), append(cr.pass, p)
		}
		t.rows = append(t.rows, cr)
	}
	label := "verdict"
	if c.Rounds > 1 {
		label = "verdict, round 1"
	}
	row(label, func(r *score.Result) string {
		if n := len(r.Failed()); n > 0 {
			return fmt.Sprintf("%s (%d of %d failed)", runVerdict(r), n, len(r.Expectations))
		}
		return runVerdict(r)
	})
	row("requests", func(r *score.Result) string { return fmt.Sprint(r.Overall.Availability.Requests) })
	row("success", func(r *score.Result) string { return fmtPct(r.Overall.Availability.Success) })
	row("served / degraded / failed", func(r *score.Result) string {
		a := r.Overall.Availability
		return fmtPct(a.ServedRate) + " / " + measured(r, "degraded", fmtPct(a.DegradedRate)) + " / " + fmtPct(a.FailedRate)
	})
	row("good (every SLO part)", func(r *score.Result) string { return fmtPct(r.Overall.Availability.GoodRate) })
	row("retry amplification (peak 10 s)", func(r *score.Result) string {
		o := r.Overall.Retry
		return measured(r, "retry_amplification", fmt.Sprintf("%.2f (%.2f)", o.Amplification, o.PeakAmplification))
	})
	row("p95 TTFT baseline / faults", func(r *score.Result) string {
		l := r.Overall.Latency
		return p95(l.BaselineTTFT) + " / " + p95(l.FaultTTFT) + " (" + penalty(l.TTFTPenalty, l.BaselineTTFT, l.FaultTTFT) + ")"
	})
	row("p95 inter-token baseline / faults", func(r *score.Result) string {
		l := r.Overall.Latency
		return p95ITL(l.BaselineInterToken) + " / " + p95ITL(l.FaultInterToken) + " (" + penalty(l.InterTokenPenalty, l.BaselineInterToken, l.FaultInterToken) + ")"
	})
	row("p95 total baseline / faults", func(r *score.Result) string {
		l := r.Overall.Latency
		return p95(l.BaselineTotal) + " / " + p95(l.FaultTotal) + " (" + penalty(l.TotalPenalty, l.BaselineTotal, l.FaultTotal) + ")"
	})
	row("p95 time to an error", func(r *score.Result) string {
		return fmtDur(r.Overall.Latency.Failed.P95) + fmt.Sprintf(" (%d)", r.Overall.Latency.Failed.N)
	})
	row("cost (multiplier during faults)", func(r *score.Result) string {
		co := r.Overall.Cost
		return measured(r, "cost_multiplier", fmtMoney(co.Total)+" ("+costMultiplier(r)+")")
	})
	row("bad responses served", func(r *score.Result) string {
		return measured(r, "bad_served", fmt.Sprint(r.Overall.BadServed))
	})
	row("good requests (every SLO part)", func(r *score.Result) string {
		return measured(r, "good", fmtPct(r.Overall.Availability.GoodRate))
	})
	row("SLO breach time", func(r *score.Result) string { return fmtDur(r.Overall.BreachTime) })
	row("false alarms", func(r *score.Result) string {
		return measured(r, "false_alarms", fmt.Sprint(len(r.Overall.FalseAlarms)))
	})
	if len(rs) > 0 {
		for _, f0 := range rs[0].Faults {
			section(f0.Step + " · " + f0.Target)
			fault := func(r *score.Result) (score.FaultScore, bool) { return r.Fault(f0.Step, f0.Target) }
			frow := func(label string, g func(f score.FaultScore) string) {
				row("  "+label, func(r *score.Result) string {
					f, ok := fault(r)
					if !ok {
						return "-"
					}
					return g(f)
				})
			}
			frow("TTD", detect)
			row("  shift: first attempts / served", func(r *score.Result) string {
				f, ok := fault(r)
				if !ok || !r.BlackBox {
					return "-" // measured only in black boxes
				}
				return shiftStr(f.ShiftFirst) + " / " + shiftStr(f.ShiftServed)
			})
			frow("TTM", mitigate)
			frow("first mitigation", firstMitigation)
			frow("SLO breach (spells)", breach)
			frow("relapses", func(f score.FaultScore) string { return fmt.Sprint(f.Relapses) })
			frow("TTR", recoverStr)
			frow("success during", func(f score.FaultScore) string { return rateOf(f.Availability, f.Availability.Success) })
			frow("degraded during", func(f score.FaultScore) string { return rateOf(f.Availability, f.Availability.DegradedRate) })
			frow("retry amplification during", func(f score.FaultScore) string { return amplification(f.Retry) })
			frow("load on target (× baseline)", loadRatio)
			frow("p95 TTFT during", func(f score.FaultScore) string { return p95(f.Latency.FaultTTFT) })
		}
	}
	if c.Rounds > 1 {
		t.rows = append(t.rows, repeatRows(c)...)
	}
	// Expectations, by their position in the first result (every
	// contestant played the same scenario, so the same list).
	if len(rs) > 0 && len(rs[0].Expectations) > 0 {
		section("expectations")
		for i, v0 := range rs[0].Expectations {
			cr := compareRow{label: "  " + verdictLabel(v0)}
			for _, r := range rs {
				if i >= len(r.Expectations) {
					cr.values, cr.pass = append(cr.values, "-"), append(cr.pass, 0)
					continue
				}
				v := r.Expectations[i]
				p := int8(-1)
				if v.Pass {
					p = 1
				}
				cr.values, cr.pass = append(cr.values, verdictWord(v.Pass)+" "+v.Got), append(cr.pass, p)
			}
			t.rows = append(t.rows, cr)
		}
	}
	return t
}

// repeatRows are the scores of a bake-off of several rounds, each
// contestant's median and worst over its rounds, then each expectation's
// pass rate. Rows follow the first contestant's sweep; a score another
// contestant lacks shows "-".
func repeatRows(c *scenarios.Comparison) []compareRow {
	var first *scenarios.Sweep
	for _, con := range c.Contestants {
		if con.Repeat != nil {
			first = con.Repeat
			break
		}
	}
	if first == nil {
		return nil
	}
	rows := []compareRow{{label: fmt.Sprintf("over %d rounds: median / worst", c.Rounds)}}
	for i := range first.Scores {
		sc0 := &first.Scores[i]
		cr := compareRow{label: "  " + sweepScoreName(sc0)}
		for _, con := range c.Contestants {
			v := "-"
			if con.Repeat != nil {
				for j := range con.Repeat.Scores {
					sc := &con.Repeat.Scores[j]
					if sc.Name == sc0.Name && sc.Step == sc0.Step && sc.Target == sc0.Target {
						v = sweepValue(sc, sc.Median) + " / " + sweepValue(sc, sc.Worst)
						break
					}
				}
			}
			cr.values = append(cr.values, v)
		}
		rows = append(rows, cr)
	}
	if len(first.Expectations) == 0 {
		return rows
	}
	rows = append(rows, compareRow{label: "expectations: rounds passed"})
	for i, e0 := range first.Expectations {
		cr := compareRow{label: "  " + strings.TrimSpace(e0.Name+" "+e0.Step+" "+e0.Target) + " " + e0.Want}
		for _, con := range c.Contestants {
			if con.Repeat == nil || i >= len(con.Repeat.Expectations) {
				cr.values, cr.pass = append(cr.values, "-"), append(cr.pass, 0)
				continue
			}
			e := con.Repeat.Expectations[i]
			p := int8(-1)
			if e.Pass {
				p = 1
			}
			cr.values = append(cr.values, fmt.Sprintf("%s %d/%d (needs %s)", verdictWord(e.Pass), e.Passed, e.N, fmtPct(e.Needed)))
			cr.pass = append(cr.pass, p)
		}
		rows = append(rows, cr)
	}
	return rows
}

func verdictLabel(v score.Verdict) string {
	l := v.Name
	if v.Step != "" {
		l += " " + v.Step
	}
	if v.Target != "" {
		l += " " + v.Target
	}
	return l + " " + v.Want
}

func shiftStr(d *time.Duration) string {
	if d == nil {
		return "not shifted"
	}
	return fmtDur(*d)
}

// WriteCompare writes a bake-off's scores side by side for a terminal.
func WriteCompare(w io.Writer, c *scenarios.Comparison, color bool) error {
	p := painter(color)
	t := newCompareTable(c)
	var b strings.Builder
	fmt.Fprintf(&b, "%s  bake-off %s (live, %s): %s\n\n", p.verdict(c.Pass), p.paint(ansiBold, c.Scenario), seedsOf(c), strings.Join(t.names, " vs "))
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\t%s\n", strings.Join(t.names, "\t"))
	for _, r := range t.rows {
		vs := r.values
		if vs == nil {
			vs = make([]string, len(t.names)) // a section: empty cells keep the columns aligned
		}
		fmt.Fprintf(tw, "%s\t%s\n", r.label, strings.Join(vs, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCompareMarkdown writes a bake-off's scores side by side as Markdown.
func WriteCompareMarkdown(w io.Writer, c *scenarios.Comparison) error {
	t := newCompareTable(c)
	var b strings.Builder
	verdict := "PASS"
	if !c.Pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "# Bake-off: %s — %s\n\n", mdEscape(c.Scenario), verdict)
	fmt.Fprintf(&b, "Live, %s, the same traffic and faults against each gateway in turn; every gateway scored as a black box (from its users' answers and the mock providers' journals).\n\n", seedsOf(c))
	for _, cr := range c.Contestants {
		fmt.Fprintf(&b, "- **%s**: %s\n", mdEscape(cr.Name), mdEscape(cr.Where()))
	}
	b.WriteString("\n| score |")
	for _, n := range t.names {
		b.WriteString(" " + mdEscape(n) + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(t.names)) + "\n")
	for _, r := range t.rows {
		if r.values == nil {
			fmt.Fprintf(&b, "| **%s** |%s\n", mdEscape(r.label), strings.Repeat(" |", len(t.names)))
			continue
		}
		fmt.Fprintf(&b, "| %s |", mdEscape(strings.TrimSpace(r.label)))
		for _, v := range r.values {
			b.WriteString(" " + mdEscape(v) + " |")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCompareFiles writes compare.html and compare.md into dir, and each
// contestant's reports (report.html, report.md, junit.xml) into dir/NAME.
func WriteCompareFiles(dir string, c *scenarios.Comparison) error {
	var errs []error
	for _, cr := range c.Contestants {
		errs = append(errs, WriteFiles(filepath.Join(dir, cr.Name), cr.Result))
	}
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{CompareHTMLFile, func(b *bytes.Buffer) error { return WriteCompareHTML(b, c) }},
		{CompareMarkdownFile, func(b *bytes.Buffer) error { return WriteCompareMarkdown(b, c) }},
	} {
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, os.WriteFile(filepath.Join(dir, f.name), buf.Bytes(), 0o644))
	}
	return errors.Join(errs...)
}

// seedsOf says which seeds a bake-off played: "seed 7", or "3 rounds,
// seeds 7…9".
func seedsOf(c *scenarios.Comparison) string {
	if c.Rounds > 1 {
		return fmt.Sprintf("%d rounds, seeds %d…%d", c.Rounds, c.Seed, c.Seed+uint64(c.Rounds)-1)
	}
	return fmt.Sprintf("seed %d", c.Seed)
}
