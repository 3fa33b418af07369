package reports

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// sweepValue prints one value of a sweep score; nil is its missing word.
func sweepValue(sc *scenarios.SweepScore, v *float64) string {
	if v == nil {
		switch sc.Name {
		case "ttd":
			return "not detected"
		case "ttm":
			return "not mitigated"
		case "ttr":
			return "not recovered"
		}
		return "–"
	}
	switch sc.Unit {
	case "duration":
		return fmtDur(time.Duration(*v))
	case "rate":
		return fmtPct(*v)
	case "count":
		return fmt.Sprint(int(*v))
	}
	return fmt.Sprintf("%.2f", *v)
}

func sweepScoreName(sc *scenarios.SweepScore) string {
	if sc.Step == "" {
		return sc.Name
	}
	return sc.Name + " [" + sc.Step + "] " + sc.Target
}

// WriteSweep writes a seed sweep: each score's median, p90 and worst, the
// detection sources of each TTD, and each expectation's pass rate.
func WriteSweep(w io.Writer, sw *scenarios.Sweep, color bool) error {
	p := painter(color)
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s, %d seeds (%d…%d)\n\n", sw.Scenario, sw.Mode, len(sw.Seeds), sw.Seeds[0], sw.Seeds[len(sw.Seeds)-1])
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "score\tmedian\tp90\tworst\tseeds\t")
	for i := range sw.Scores {
		sc := &sw.Scores[i]
		extra := ""
		if len(sc.DetectedBy) > 0 {
			var parts []string
			for _, k := range sortedKeys(sc.DetectedBy) {
				parts = append(parts, fmt.Sprintf("%s ×%d", k, sc.DetectedBy[k]))
			}
			extra = "by " + strings.Join(parts, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", sweepScoreName(sc), sweepValue(sc, sc.Median), sweepValue(sc, sc.P90), sweepValue(sc, sc.Worst), sc.N, extra)
	}
	_ = tw.Flush()
	if len(sw.Expectations) > 0 {
		b.WriteString("\nexpectations (pass rate over seeds)\n")
		tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, e := range sw.Expectations {
			verdict := p.paint(ansiGreen, "PASS")
			if !e.Pass {
				verdict = p.paint(ansiRed, "FAIL")
			}
			name := strings.TrimSpace(e.Name + " " + e.Step + " " + e.Target)
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d/%d passed (%s, needs %s)\n", verdict, name, e.Want, e.Passed, e.N, fmtPct(e.Rate), fmtPct(e.Needed))
		}
		_ = tw.Flush()
	}
	verdict := p.paint(ansiGreen, "PASS")
	if !sw.Pass {
		verdict = p.paint(ansiRed, "FAIL")
	}
	fmt.Fprintf(&b, "\n%s\n", verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

// Comparable reports why two runs (or sweeps) should not be compared: a
// different scenario or a different mode. nil when they may be.
func Comparable(oldScenario string, oldMode score.Mode, newScenario string, newMode score.Mode) error {
	switch {
	case oldScenario != newScenario:
		return fmt.Errorf("different scenarios (%q vs %q): their scores do not compare (--force to diff anyway)", oldScenario, newScenario)
	case oldMode != newMode:
		return fmt.Errorf("different modes (%s vs %s): simulated and live scores do not compare (--force to diff anyway)", oldMode, newMode)
	}
	return nil
}

// DiffSweeps compares two sweeps score by score on their distributions:
// median, p90 and worst each, with the tolerances of Diff; an expectation
// whose pass rate fell below what it needs is a regression.
func DiffSweeps(old, new *scenarios.Sweep, tol Tolerances) *RunDiff {
	d := &RunDiff{Title: fmt.Sprintf("old: %s (%s, %d seeds)  new: %s (%s, %d seeds)", old.Scenario, old.Mode, len(old.Seeds), new.Scenario, new.Mode, len(new.Seeds))}
	find := func(sc *scenarios.SweepScore) *scenarios.SweepScore {
		for i := range old.Scores {
			o := &old.Scores[i]
			if o.Name == sc.Name && o.Step == sc.Step && o.Target == sc.Target {
				return o
			}
		}
		return nil
	}
	for i := range new.Scores {
		n := &new.Scores[i]
		o := find(n)
		if o == nil {
			continue
		}
		for _, q := range []struct {
			name string
			o, n *float64
		}{{"median", o.Median, n.Median}, {"p90", o.P90, n.P90}, {"worst", o.Worst, n.Worst}} {
			d.Rows = append(d.Rows, sweepRow(n, sweepScoreName(n)+" "+q.name, q.o, q.n, tol))
		}
	}
	for _, nv := range new.Expectations {
		for _, ov := range old.Expectations {
			if ov.Name == nv.Name && ov.Step == nv.Step && ov.Target == nv.Target && ov.Want == nv.Want && ov.Rate != nv.Rate {
				d.Rows = append(d.Rows, DiffRow{Score: "pass rate " + strings.TrimSpace(nv.Name+" "+nv.Step+" "+nv.Target),
					Old: fmtPct(ov.Rate), New: fmtPct(nv.Rate), Delta: fmt.Sprintf("%+.0fpp", (nv.Rate-ov.Rate)*100),
					Regression: ov.Pass && !nv.Pass, Improved: nv.Rate > ov.Rate})
			}
		}
	}
	return d
}

// sweepRow compares one quantile of a score; a value that went missing
// (not detected in that share of seeds) is a regression.
func sweepRow(sc *scenarios.SweepScore, name string, o, n *float64, tol Tolerances) DiffRow {
	row := DiffRow{Score: name, Old: sweepValue(sc, o), New: sweepValue(sc, n)}
	switch {
	case o == nil && n == nil:
		row.Delta = "="
		return row
	case o != nil && n == nil:
		row.Delta, row.Regression = "lost", true
		return row
	case o == nil && n != nil:
		row.Delta, row.Improved = "gained", true
		return row
	}
	worse := *n - *o // positive: worse
	if !sc.HigherIsWorse {
		worse = -worse
	}
	var limit float64
	switch sc.Unit {
	case "duration":
		limit = float64(tol.Duration)
		row.Delta = signedDur(time.Duration(*n - *o))
	case "rate":
		limit = tol.Availability
		row.Delta = fmt.Sprintf("%+.2fpp", (*n-*o)*100)
	case "count":
		limit = float64(tol.Count)
		row.Delta = fmt.Sprintf("%+d", int(*n-*o))
	default:
		limit = tol.Ratio * max(*o, -*o)
		row.Delta = fmt.Sprintf("%+.3g", *n-*o)
	}
	row.Regression = worse > limit+1e-12
	row.Improved = -worse > limit+1e-12
	return row
}
