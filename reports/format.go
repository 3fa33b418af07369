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

func fmtRatio(f float64) string {
	if f == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", f)
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
	case !f.Recovered:
		return "not recovered"
	default:
		return fmtDur(f.TTR)
	}
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
