package reports

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/brownout-dev/brownout/scenarios"
)

const (
	ansiReset = "\x1b[0m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
)

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

// WriteScorecard writes the terminal scorecard: the run's verdict, each
// expectation with its verdict, and the key scores per fault step. With
// color, verdicts are green and red (see [ColorEnabled]).
func WriteScorecard(w io.Writer, r *scenarios.Result, color bool) error {
	p := painter(color)
	var b strings.Builder
	head := runVerdict(r)
	switch head {
	case "PASS":
		head = p.paint(ansiBold+ansiGreen, head)
	default:
		head = p.paint(ansiBold+ansiRed, head)
	}
	fmt.Fprintf(&b, "%s  %s  (mode %s, seed %d, %s of %s)\n", head, p.paint(ansiBold, r.Scenario), r.Mode, r.Seed, fmtDur(r.Elapsed), fmtDur(r.Duration))
	if r.Aborted {
		fmt.Fprintf(&b, "aborted: %s\n", r.AbortReason)
	}
	a := r.Overall.Availability
	fmt.Fprintf(&b, "requests %d  success %s (served %s, degraded %s, failed %s)  bad served %d  amplification %.2f (peak %.2f)  cost %s (counterfactual %s)  flaps %d\n",
		a.Requests, fmtPct(a.Success), fmtPct(a.ServedRate), fmtPct(a.DegradedRate), fmtPct(a.FailedRate),
		r.Overall.BadServed, r.Overall.Retry.Amplification, r.Overall.Retry.PeakAmplification,
		fmtMoney(r.Overall.Cost.Total), fmtMoney(r.Overall.Cost.Counterfactual), r.Overall.Flaps)

	if len(r.Expectations) > 0 {
		b.WriteString("\nExpectations\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, v := range r.Expectations {
			name := v.Name
			if v.Step != "" {
				name += " [" + v.Step + "]"
			}
			if v.Target != "" {
				name += " " + v.Target
			}
			fmt.Fprintf(tw, "  %s\t%s\twant %s\tgot %s\n", p.verdict(v.Pass), name, v.Want, v.Got)
		}
		_ = tw.Flush()
	}
	if len(r.Faults) > 0 {
		b.WriteString("\nFault steps\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  step\ttarget\tTTD\tTTM\tTTR\tsuccess\tamplification\tcost ×\tflaps\tbad served")
		for _, f := range r.Faults {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%d\t%d\n", f.Step, f.Target, detect(f), mitigate(f), recoverStr(f),
				fmtPct(f.Availability.Success), f.Retry.Amplification, fmtRatio(f.CostMultiplier), f.Flaps, f.BadServed)
		}
		_ = tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}
