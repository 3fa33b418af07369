package scenarios

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteScorecard writes a plain-text scorecard of the result: the verdict,
// overall scores, each fault step's scores, per-target totals, alerts and
// every expectation.
func WriteScorecard(w io.Writer, r *Result) error {
	var b strings.Builder
	verdict := "PASS"
	if !r.Pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "game day %s (%s, seed %d): %s\n", r.Scenario, r.Mode, r.Seed, verdict)
	if r.Aborted {
		fmt.Fprintf(&b, "ABORTED after %s: %s\n", fmtDur(r.Elapsed), r.AbortReason)
	}
	o := &r.Overall
	a := o.Availability
	fmt.Fprintf(&b, "\nrequests %d  served %d  degraded %d  failed %d  availability %s (SLO %s over %s)\n",
		a.Requests, a.Served, a.Degraded, a.Failed, pct(a.Success), pct(r.SLO.SuccessRate), r.SLO.Window)
	fmt.Fprintf(&b, "retry amplification %s (peak %s over 10s)  budget exhausted %d\n",
		num(o.Retry.Amplification), num(o.Retry.PeakAmplification), o.Retry.BudgetExhausted)
	fmt.Fprintf(&b, "latency p95 ttft baseline %s fault %s (penalty %s)  total baseline %s fault %s\n",
		fmtDur(o.Latency.BaselineTTFT.P95), fmtDur(o.Latency.FaultTTFT.P95), num(o.Latency.TTFTPenalty),
		fmtDur(o.Latency.BaselineTotal.P95), fmtDur(o.Latency.FaultTotal.P95))
	fmt.Fprintf(&b, "cost $%.4f  counterfactual $%.4f  fallback premium $%.4f  multiplier %s  cache warm-up $%.4f\n",
		o.Cost.Total, o.Cost.Counterfactual, o.Cost.FallbackPremium, num(o.Cost.Multiplier), o.Cost.CacheWarmupPenalty)
	fmt.Fprintf(&b, "flaps %d  bad served %d", o.Flaps, o.BadServed)
	if r.BlackBox {
		b.WriteString("  (black box: detection by traffic shift)")
	}
	b.WriteString("\n")

	if len(r.Faults) > 0 {
		b.WriteString("\nfaults\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  step\ttarget\tkind\tttd\tttm\tttr\tavail\tamp\tload\tcost×\tbad\tflaps")
		for _, f := range r.Faults {
			ttd := "—"
			if f.Detected {
				ttd = fmtDur(f.TTD) + " " + f.DetectedBy
			}
			ttm := "never"
			if !f.Impact {
				ttm = "no impact"
			} else if f.Mitigated {
				ttm = fmtDur(f.TTM)
			}
			ttr := "never"
			switch {
			case f.Superseded:
				ttr = "(next step)"
			case f.Recovered:
				ttr = fmtDur(f.TTR)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", f.Step, f.Target, f.Kind, ttd, ttm, ttr,
				pct(f.Availability.Success), num(f.Retry.Amplification), num(f.LoadRatio), num(f.CostMultiplier), f.BadServed, f.Flaps)
		}
		tw.Flush()
	}

	if len(r.Targets) > 0 {
		b.WriteString("\ntargets\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  target\tattempts\tok\tserved\tshare\tcost\tquality\topenings\tflaps\tbad")
		for _, t := range r.Targets {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%s\t$%.4f\t%s\t%d\t%d\t%d\n", t.Target, t.Attempts, t.OK, t.Served,
				pct(t.Share), t.Cost, pct(t.Quality), t.Openings, t.Flaps, t.BadServed)
		}
		tw.Flush()
	}

	if len(r.Alerts) > 0 {
		b.WriteString("\nalerts\n")
		for _, al := range r.Alerts {
			fmt.Fprintf(&b, "  %s (%s): fired %d, resolved %d", al.Name, al.Severity, al.Fired, al.Resolved)
			for _, k := range sortedKeys(al.Undelivered) {
				fmt.Fprintf(&b, ", UNDELIVERED to %s ×%d", k, al.Undelivered[k])
			}
			for _, k := range sortedKeys(al.Delivered) {
				fmt.Fprintf(&b, ", delivered to %s ×%d", k, al.Delivered[k])
			}
			b.WriteString("\n")
		}
	}

	if len(r.Expectations) > 0 {
		b.WriteString("\nexpectations\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, v := range r.Expectations {
			mark := "ok  "
			if !v.Pass {
				mark = "FAIL"
			}
			scope := ""
			if v.Step != "" {
				scope = v.Step
			}
			if v.Target != "" {
				if scope != "" {
					scope += " "
				}
				scope += v.Target
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\twant %s\tgot %s\n", mark, v.Name, scope, v.Want, v.Got)
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Scorecard returns the scorecard as a string.
func (r *Result) Scorecard() string {
	var b strings.Builder
	_ = WriteScorecard(&b, r)
	return b.String()
}

// TB is the part of testing.TB that RequireExpectations uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// RequireExpectations fails the test with the scorecard when any expectation
// of the result does not hold (or the run was aborted):
//
//	res, err := scenarios.Run(ctx, s, scenarios.Options{})
//	require.NoError(t, err)
//	scenarios.RequireExpectations(t, res)
func RequireExpectations(t TB, r *Result) {
	t.Helper()
	if r == nil {
		t.Fatalf("scenarios: no result")
		return
	}
	if !r.Pass {
		t.Fatalf("game day %s failed its expectations:\n%s", r.Scenario, r.Scorecard())
	}
}
