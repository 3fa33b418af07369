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

// WriteScorecard writes the terminal scorecard: the run's verdict, the
// overall scores, each fault step's scores, per-target totals, alerts and
// every expectation with its verdict. With color, verdicts are green and red
// (see [ColorEnabled]); tabwriter aligns on the uncoloured text because the
// colour codes wrap whole cells at the ends of lines only.
func WriteScorecard(w io.Writer, r *scenarios.Result, color bool) error {
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
		fmt.Fprintf(&b, "aborted after %s: %s\n", fmtDur(r.Elapsed), r.AbortReason)
	}
	o := &r.Overall
	a := o.Availability
	fmt.Fprintf(&b, "\nrequests %d  served %d  degraded %d  failed %d  success %s (SLO %s over %s)\n",
		a.Requests, a.Served, a.Degraded, a.Failed, fmtPct(a.Success), fmtPct(r.SLO.SuccessRate), fmtDur(r.SLO.Window))
	fmt.Fprintf(&b, "retry amplification %.2f (peak %.2f over 10s)  budget exhausted %d\n",
		o.Retry.Amplification, o.Retry.PeakAmplification, o.Retry.BudgetExhausted)
	fmt.Fprintf(&b, "p95 TTFT baseline %s, during faults %s (penalty %s)  p95 total baseline %s, during faults %s\n",
		fmtDur(o.Latency.BaselineTTFT.P95), fmtDur(o.Latency.FaultTTFT.P95), fmtRatio(o.Latency.TTFTPenalty),
		fmtDur(o.Latency.BaselineTotal.P95), fmtDur(o.Latency.FaultTotal.P95))
	fmt.Fprintf(&b, "cost %s  counterfactual %s  fallback premium %s  multiplier %s  cache warm-up %s\n",
		fmtMoney(o.Cost.Total), fmtMoney(o.Cost.Counterfactual), fmtMoney(o.Cost.FallbackPremium), fmtRatio(o.Cost.Multiplier), fmtMoney(o.Cost.CacheWarmupPenalty))
	fmt.Fprintf(&b, "flaps %d  bad served %d", o.Flaps, o.BadServed)
	if r.BlackBox {
		b.WriteString("  (black box: detection by traffic shift)")
	}
	b.WriteString("\n")
	writeFleetScorecard(&b, r.Fleet)

	if len(r.Faults) > 0 {
		b.WriteString("\nFault steps\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  step\ttarget\tkind\tTTD\tTTM\tTTR\tsuccess\tamplification\tload ×\tcost ×\tbad served\tflaps")
		for _, f := range r.Faults {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%d\t%d\n", f.Step, f.Target, f.Kind, detect(f), mitigate(f), recoverStr(f),
				fmtPct(f.Availability.Success), f.Retry.Amplification, fmtRatio(f.LoadRatio), fmtRatio(f.CostMultiplier), f.BadServed, f.Flaps)
		}
		_ = tw.Flush()
	}
	if len(r.Targets) > 0 {
		b.WriteString("\nTargets\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  target\tattempts\tok\tserved\tshare\tcost\tquality\topenings\tflaps\tbad served")
		for _, t := range r.Targets {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%d\t%d\n", t.Target, t.Attempts, t.OK, t.Served,
				fmtPct(t.Share), fmtMoney(t.Cost), fmtPct(t.Quality), t.Openings, t.Flaps, t.BadServed)
		}
		_ = tw.Flush()
	}
	if len(r.Alerts) > 0 {
		b.WriteString("\nAlerts\n")
		for _, al := range r.Alerts {
			fmt.Fprintf(&b, "  %s (%s): fired %d, resolved %d", al.Name, al.Severity, al.Fired, al.Resolved)
			for _, k := range sortedKeys(al.Undelivered) {
				fmt.Fprintf(&b, ", %s to %s ×%d", p.paint(ansiRed, "UNDELIVERED"), k, al.Undelivered[k])
			}
			for _, k := range sortedKeys(al.Delivered) {
				fmt.Fprintf(&b, ", delivered to %s ×%d", k, al.Delivered[k])
			}
			b.WriteString("\n")
		}
	}
	if len(r.Expectations) > 0 {
		b.WriteString("\nExpectations\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, v := range r.Expectations {
			scope := strings.TrimSpace(v.Step + " " + v.Target)
			fmt.Fprintf(tw, "  %s\t%s\t%s\twant %s\tgot %s\n", p.verdict(v.Pass), v.Name, scope, v.Want, v.Got)
		}
		_ = tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Scorecard returns the plain (uncoloured) scorecard.
func Scorecard(r *scenarios.Result) string {
	var b strings.Builder
	_ = WriteScorecard(&b, r, false)
	return b.String()
}
