package reports

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// fmtDur prints a measured duration: every report uses the rounding of
// the verdicts in result.json ([score.FormatDuration]), so a TTD reads
// the same in a chart, a table and an expectation.
func fmtDur(d time.Duration) string { return score.FormatDuration(d) }

// fmtPct prints a fraction as a percentage with up to two decimals.
func fmtPct(f float64) string {
	s := fmt.Sprintf("%.2f", f*100)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

func fmtMoney(f float64) string { return fmt.Sprintf("$%.4f", f) }

// fmtRatio prints a ratio: a measured 0 is "0.00×"; "–" only when it was
// not measured (a side with no sample, no baseline, no prices). The
// scores keep 0 for both, so callers say which it is.
func fmtRatio(f float64, measured bool) string {
	if !measured {
		return "–"
	}
	return fmt.Sprintf("%.2f×", f)
}

// rateOf prints a rate of a's requests: "–" when there were none (the
// score keeps 0 then, which is not 0%).
func rateOf(a score.Availability, v float64) string {
	if a.Requests == 0 {
		return "–"
	}
	return fmtPct(v)
}

// amplification prints attempts per request, "–" with no request.
func amplification(r score.Retry) string {
	if r.Requests == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", r.Amplification)
}

// sloParts prints every part of the SLO: "99% good over 10s, TTFT p95 <= 3s,
// total max <= 20s, correct answers".
func sloParts(o score.SLO) string {
	parts := []string{fmtPct(o.SuccessRate) + " good over " + fmtDur(o.Window)}
	bound := func(name string, l score.LatencyObjective) {
		if l.P95 > 0 {
			parts = append(parts, name+" p95 <= "+fmtDur(l.P95))
		}
		if l.Max > 0 {
			parts = append(parts, name+" max <= "+fmtDur(l.Max))
		}
	}
	bound("TTFT", o.TTFT)
	bound("non-streamed total", o.Latency)
	if o.Correctness {
		parts = append(parts, "correct answers")
	}
	return strings.Join(parts, ", ")
}

// loadRatio prints a fault's load on its target over the baseline load:
// "–" when the target had no baseline load to compare with.
func loadRatio(f score.FaultScore) string { return fmtRatio(f.LoadRatio, f.BaselineLoad > 0) }

// p95 prints a sample's 95th percentile, "–" for an empty sample.
func p95(p score.Percentiles) string {
	if p.N == 0 {
		return "–"
	}
	return fmtDur(p.P95)
}

// p95ITL prints a sample of inter-token times' 95th percentile to the
// millisecond: they are tens of milliseconds, which fmtDur's 100 ms
// rounding would print as 0s.
func p95ITL(p score.Percentiles) string {
	if p.N == 0 {
		return "–"
	}
	return p.P95.Round(time.Millisecond).String()
}

// penalty prints a latency penalty (fault p95 over baseline p95): "–"
// when either side has no sample.
func penalty(v float64, base, fault score.Percentiles) string {
	return fmtRatio(v, base.N > 0 && fault.N > 0)
}

// penalties prints the three latency penalties, first token, inter-token
// and total: "ttft 1.20×, inter-token –, total 1.05×".
func penalties(l score.Latency) string {
	return "first token " + penalty(l.TTFTPenalty, l.BaselineTTFT, l.FaultTTFT) +
		", inter-token " + penalty(l.InterTokenPenalty, l.BaselineInterToken, l.FaultInterToken) +
		", total " + penalty(l.TotalPenalty, l.BaselineTotal, l.FaultTotal)
}

// penaltyKinds prints the three latency penalties compactly, first token
// / inter-token / total: "2.10× / – / 1.00×".
func penaltyKinds(l score.Latency) string {
	return penalty(l.TTFTPenalty, l.BaselineTTFT, l.FaultTTFT) + " / " +
		penalty(l.InterTokenPenalty, l.BaselineInterToken, l.FaultInterToken) + " / " +
		penalty(l.TotalPenalty, l.BaselineTotal, l.FaultTotal)
}

// costMeasured says whether a cost multiplier of r could be measured with
// faultRequests requests inside the fault windows: the run priced every
// target it used and both sides had requests (a baseline without a served
// request counts as none).
func costMeasured(r *score.Result, faultRequests int) bool {
	if m, ok := r.Measured["cost_multiplier"]; ok && !m.Measured {
		return false
	}
	b := r.Overall.Latency
	return faultRequests > 0 && b.BaselineTTFT.N+b.BaselineTotal.N > 0
}

// costMultiplier prints the run's cost multiplier during faults.
func costMultiplier(r *score.Result) string {
	n := 0
	for _, f := range r.Faults {
		n += f.Availability.Requests
	}
	return fmtRatio(r.Overall.Cost.Multiplier, costMeasured(r, n))
}

// faultCost prints a fault step's cost multiplier.
func faultCost(r *score.Result, f score.FaultScore) string {
	return fmtRatio(f.CostMultiplier, costMeasured(r, f.Availability.Requests))
}

// detect describes the TTD of a fault score.
func detect(f score.FaultScore) string {
	masked := ""
	if f.Masked {
		by := f.MaskedBy
		if by == "" {
			by = "an earlier demotion"
		}
		masked = "masked by " + by
	}
	switch {
	case f.NotExercised:
		return "not exercised"
	case !f.Detected && f.Masked:
		return "not re-detected (" + masked + ")"
	case !f.Detected:
		return "not detected"
	}
	s := fmtDur(f.TTD)
	if f.DetectedBy != "" {
		s += " (" + f.DetectedBy
		if masked != "" {
			s += ", " + masked
		}
		s += ")"
	}
	return s
}

func mitigate(f score.FaultScore) string {
	switch {
	case !f.Impact:
		return "no impact"
	case !f.Mitigated:
		return "not mitigated"
	default:
		return fmtDur(f.TTM)
	}
}

func recoverStr(f score.FaultScore) string {
	switch {
	case f.Superseded:
		return "superseded"
	case f.CutShort:
		return "cut short"
	case !f.Recovered:
		return "not recovered"
	default:
		return fmtDur(f.TTR)
	}
}

// runRecoverStr is recoverStr in the context of its run: a step cut short by
// an aborted run did not recover, and the row says why.
func runRecoverStr(r *score.Result, f score.FaultScore) string {
	if f.CutShort && r.Aborted {
		return "not recovered: run aborted"
	}
	return recoverStr(f)
}

func verdictWord(pass bool) string {
	if pass {
		return "PASS"
	}
	return "FAIL"
}

func runVerdict(r *score.Result) string {
	switch {
	case r.Aborted:
		return "ABORTED"
	case r.Pass:
		return "PASS"
	default:
		return "FAIL"
	}
}

// ColorEnabled reports whether w is a terminal that should get ANSI colour:
// not when NO_COLOR is set (https://no-color.org), TERM is "dumb", or w is not
// a character device (a pipe or a file).
func ColorEnabled(w io.Writer) bool {
	return colorAllowed(os.LookupEnv, isTerminal(w))
}

// colorAllowed is ColorEnabled's decision given the environment and whether
// the output is a terminal.
func colorAllowed(lookupEnv func(string) (string, bool), terminal bool) bool {
	if _, ok := lookupEnv("NO_COLOR"); ok {
		return false
	}
	if term, _ := lookupEnv("TERM"); term == "dumb" {
		return false
	}
	return terminal
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeCharDevice != 0
}

// failingFirst returns the verdicts with every failing one first, each
// group in file order: the reader sees what went wrong before what held.
func failingFirst(vs []score.Verdict) []score.Verdict {
	out := slices.Clone(vs)
	slices.SortStableFunc(out, func(a, b score.Verdict) int {
		switch {
		case a.Pass == b.Pass:
			return 0
		case !a.Pass:
			return -1
		}
		return 1
	})
	return out
}
