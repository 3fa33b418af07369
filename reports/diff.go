package reports

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// Tolerances bound how much a score may worsen before a diff calls it a
// regression. Durations are absolute; rates are absolute fractions; ratios
// are relative (0.1 = 10% worse).
type Tolerances struct {
	Duration     time.Duration // TTD, TTM, TTR (default 1s)
	Availability float64       // success rate drop (default 0.005 = 0.5 pp)
	Ratio        float64       // amplification, cost, latency penalty (default 0.10)
	Count        int           // flaps, bad served (default 0: any increase)
}

// DefaultTolerances are the tolerances `brownout report diff` uses.
var DefaultTolerances = Tolerances{Duration: time.Second, Availability: 0.005, Ratio: 0.10}

// DiffRow is one score compared across two runs.
type DiffRow struct {
	Score      string // "overall availability", "ttd [openai-429] openai:gpt-4o"
	Old, New   string
	Delta      string
	Regression bool
	Improved   bool
}

// RunDiff is the comparison of two runs of (usually) the same scenario.
type RunDiff struct {
	Old, New *score.Result // nil for sweeps
	// Title names what is compared.
	Title string
	Rows  []DiffRow
}

// Regressions returns the rows that got worse beyond tolerance.
func (d *RunDiff) Regressions() []DiffRow {
	var out []DiffRow
	for _, r := range d.Rows {
		if r.Regression {
			out = append(out, r)
		}
	}
	return out
}

// Diff compares two results score by score. Higher is worse for times,
// ratios, flaps and bad served; lower is worse for availability. A fault
// step detected (or mitigated, recovered) in the old run and not in the new
// one is a regression whatever the tolerance.
func Diff(old, new *score.Result, tol Tolerances) *RunDiff {
	d := &RunDiff{Old: old, New: new, Title: fmt.Sprintf("old: %s (%s, seed %d)  new: %s (%s, seed %d)", old.Scenario, old.Mode, old.Seed, new.Scenario, new.Mode, new.Seed)}
	rate := func(name string, o, n float64) {
		row := DiffRow{Score: name, Old: fmtPct(o), New: fmtPct(n), Delta: fmt.Sprintf("%+.2fpp", (n-o)*100)}
		row.Regression = o-n > tol.Availability+1e-12
		row.Improved = n-o > tol.Availability+1e-12
		d.Rows = append(d.Rows, row)
	}
	// ratio adds a row; with show nil, shown must give its values.
	ratio := func(name string, o, n float64, show func(float64) string) {
		row := DiffRow{Score: name}
		if show != nil {
			row.Old, row.New = show(o), show(n)
		}
		if o != 0 {
			row.Delta = fmt.Sprintf("%+.1f%%", (n-o)/math.Abs(o)*100)
		} else {
			row.Delta = fmt.Sprintf("%+.3g", n-o)
		}
		limit := math.Abs(o) * tol.Ratio
		row.Regression = n-o > limit+1e-12
		row.Improved = o-n > limit+1e-12
		d.Rows = append(d.Rows, row)
	}
	shown := func(o, n string) { d.Rows[len(d.Rows)-1].Old, d.Rows[len(d.Rows)-1].New = o, n }
	count := func(name string, o, n int) {
		row := DiffRow{Score: name, Old: fmt.Sprint(o), New: fmt.Sprint(n), Delta: fmt.Sprintf("%+d", n-o)}
		row.Regression = n-o > tol.Count
		row.Improved = n < o
		d.Rows = append(d.Rows, row)
	}
	timed := func(name string, o time.Duration, oOK bool, n time.Duration, nOK bool, missing string) {
		show := func(v time.Duration, ok bool) string {
			if !ok {
				return missing
			}
			return fmtDur(v)
		}
		row := DiffRow{Score: name, Old: show(o, oOK), New: show(n, nOK)}
		switch {
		case oOK && nOK:
			row.Delta = signedDur(n - o)
			row.Regression = n-o > tol.Duration
			row.Improved = o-n > tol.Duration
		case oOK && !nOK:
			row.Delta, row.Regression = "lost", true
		case !oOK && nOK:
			row.Delta, row.Improved = "gained", true
		default:
			row.Delta = "="
		}
		d.Rows = append(d.Rows, row)
	}

	rate("availability", old.Overall.Availability.Success, new.Overall.Availability.Success)
	count("bad served", old.Overall.BadServed, new.Overall.BadServed)
	count("flaps", old.Overall.Flaps, new.Overall.Flaps)
	// The flaps row names the targets they come from.
	d.Rows[len(d.Rows)-1].Old, d.Rows[len(d.Rows)-1].New = flapsByTarget(old), flapsByTarget(new)
	ratio("retry amplification", old.Overall.Retry.Amplification, new.Overall.Retry.Amplification, func(v float64) string { return fmt.Sprintf("%.2f", v) })
	ratio("peak amplification", old.Overall.Retry.PeakAmplification, new.Overall.Retry.PeakAmplification, func(v float64) string { return fmt.Sprintf("%.2f", v) })
	ratio("cost", old.Overall.Cost.Total, new.Overall.Cost.Total, fmtMoney)
	ratio("cost multiplier", old.Overall.Cost.Multiplier, new.Overall.Cost.Multiplier, nil)
	shown(costMultiplier(old), costMultiplier(new))
	ol, nl := old.Overall.Latency, new.Overall.Latency
	ratio("TTFT penalty", ol.TTFTPenalty, nl.TTFTPenalty, nil)
	shown(penalty(ol.TTFTPenalty, ol.BaselineTTFT, ol.FaultTTFT), penalty(nl.TTFTPenalty, nl.BaselineTTFT, nl.FaultTTFT))
	ratio("inter-token penalty", ol.InterTokenPenalty, nl.InterTokenPenalty, nil)
	shown(penalty(ol.InterTokenPenalty, ol.BaselineInterToken, ol.FaultInterToken), penalty(nl.InterTokenPenalty, nl.BaselineInterToken, nl.FaultInterToken))
	ratio("total-time penalty", ol.TotalPenalty, nl.TotalPenalty, nil)
	shown(penalty(ol.TotalPenalty, ol.BaselineTotal, ol.FaultTotal), penalty(nl.TotalPenalty, nl.BaselineTotal, nl.FaultTotal))
	ratio("p95 TTFT during faults", old.Overall.Latency.FaultTTFT.P95.Seconds(), new.Overall.Latency.FaultTTFT.P95.Seconds(), func(v float64) string { return fmtDur(time.Duration(v * 1e9)) })
	timed("SLO breach time", old.Overall.BreachTime, true, new.Overall.BreachTime, true, "")
	count("false alarms", len(old.Overall.FalseAlarms), len(new.Overall.FalseAlarms))

	for _, nf := range new.Faults {
		of, ok := old.Fault(nf.Step, nf.Target)
		if !ok {
			continue
		}
		tag := " [" + nf.Step + "] " + nf.Target
		timed("ttd"+tag, of.TTD, of.Detected, nf.TTD, nf.Detected, "not detected")
		timed("ttm"+tag, of.TTM, of.Mitigated || !of.Impact, nf.TTM, nf.Mitigated || !nf.Impact, "not mitigated")
		timed("ttr"+tag, of.TTR, of.Recovered || !of.RecoveryMeasured(), nf.TTR, nf.Recovered || !nf.RecoveryMeasured(), "not recovered")
		timed("first mitigation"+tag, of.FirstMitigation, of.FirstMitigated || !of.Impact, nf.FirstMitigation, nf.FirstMitigated || !nf.Impact, "never")
		timed("SLO breach"+tag, of.BreachTime, true, nf.BreachTime, true, "")
		count("relapses"+tag, of.Relapses, nf.Relapses)
		rate("availability"+tag, of.Availability.Success, nf.Availability.Success)
		count("flaps"+tag, of.Flaps, nf.Flaps)
	}
	for _, nv := range new.Expectations {
		for _, ov := range old.Expectations {
			if ov.Name == nv.Name && ov.Step == nv.Step && ov.Target == nv.Target && ov.Pass && !nv.Pass {
				d.Rows = append(d.Rows, DiffRow{Score: "expectation " + strings.TrimSpace(nv.Name+" "+nv.Step+" "+nv.Target),
					Old: "PASS", New: "FAIL", Delta: "now failing", Regression: true})
			}
		}
	}
	return d
}

func signedDur(d time.Duration) string {
	if d >= 0 {
		return "+" + fmtDur(d)
	}
	return "-" + fmtDur(-d)
}

// WriteDiff writes a side-by-side table of the diff, flagging regressions.
func WriteDiff(w io.Writer, d *RunDiff, color bool) error {
	p := painter(color)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", d.Title)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "score\told\tnew\tdelta\t")
	for _, r := range d.Rows {
		flag := ""
		switch {
		case r.Regression:
			flag = p.paint(ansiRed, "REGRESSION")
		case r.Improved:
			flag = p.paint(ansiGreen, "improved")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Score, r.Old, r.New, r.Delta, flag)
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "\n%d regression(s)\n", len(d.Regressions()))
	_, err := io.WriteString(w, b.String())
	return err
}
