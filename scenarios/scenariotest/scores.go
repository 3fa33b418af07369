package scenariotest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/reports"
	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// Time returns a time score of a result by name: of the fault step on
// target ("provider/model" or "provider:model"; "" for the step's only or
// first target) — "ttd", "ttm", "ttr", "first_mitigation", "breach_time" —
// or of the whole run when step is "" — "ttft_p95", "breach_time",
// "unnecessary_fallback" (per target). ok is false when the score was not
// measured: not detected (see score.FaultScore.Detection for why), not
// mitigated, not recovered, superseded or cut short, or no such step.
// A step with no impact has a ttm of 0.
func Time(r *score.Result, name, step, target string) (d time.Duration, ok bool) {
	if step == "" {
		switch name {
		case "ttft_p95":
			return r.Overall.Latency.FaultTTFT.P95, r.Overall.Latency.FaultTTFT.N > 0
		case "breach_time":
			return r.Overall.BreachTime, true
		case "unnecessary_fallback":
			t, ok := r.Target(target)
			return t.UnnecessaryFallback, ok
		}
		return 0, false
	}
	f, ok := r.Fault(step, target)
	if !ok {
		return 0, false
	}
	switch name {
	case "ttd":
		return f.TTD, f.Detection() == score.Detected
	case "ttm":
		return f.TTM, !f.Impact || f.Mitigated
	case "ttr":
		return f.TTR, f.RecoveryMeasured() && f.Recovered
	case "first_mitigation":
		return f.FirstMitigation, !f.Impact || f.FirstMitigated
	case "breach_time":
		return f.BreachTime, true
	}
	return 0, false
}

// Number returns a number score of a result by name: of the fault step on
// target when step is set, of the target when only target is, else of the
// run. Rates are fractions (0.99 for 99%). Names: "availability", "good",
// "failed", "degraded", "bad_served", "flaps", "retry_amplification",
// "load_ratio" and "cost_multiplier" (steps), "re_detections" (steps and
// targets), "relapses" (steps), "peak_retry_amplification" (run), "share"
// and "quality" (targets). ok is false for a name the scope does not have.
func Number(r *score.Result, name, step, target string) (v float64, ok bool) {
	avail := func(a score.Availability) (float64, bool) {
		switch name {
		case "availability":
			return a.Success, true
		case "good":
			return a.GoodRate, true
		case "failed":
			return a.FailedRate, true
		case "degraded":
			return a.DegradedRate, true
		}
		return 0, false
	}
	switch {
	case step != "":
		f, found := r.Fault(step, target)
		if !found {
			return 0, false
		}
		if v, ok := avail(f.Availability); ok {
			return v, true
		}
		switch name {
		case "bad_served":
			return float64(f.BadServed), true
		case "flaps":
			return float64(f.Flaps), true
		case "re_detections":
			return float64(f.ReDetections), true
		case "relapses":
			return float64(f.Relapses), true
		case "retry_amplification":
			return f.Retry.Amplification, true
		case "load_ratio":
			return f.LoadRatio, true
		case "cost_multiplier":
			return f.CostMultiplier, true
		}
	case target != "":
		t, found := r.Target(target)
		if !found {
			return 0, false
		}
		switch name {
		case "flaps":
			return float64(t.Flaps), true
		case "re_detections":
			return float64(t.ReDetections), true
		case "bad_served":
			return float64(t.BadServed), true
		case "share":
			return t.Share, true
		case "quality":
			return t.Quality, t.QualityN > 0
		}
	default:
		o := &r.Overall
		if v, ok := avail(o.Availability); ok {
			return v, true
		}
		switch name {
		case "bad_served":
			return float64(o.BadServed), true
		case "flaps":
			return float64(o.Flaps), true
		case "retry_amplification":
			return o.Retry.Amplification, true
		case "peak_retry_amplification":
			return o.Retry.PeakAmplification, true
		case "cost_multiplier":
			return o.Cost.Multiplier, true
		}
	}
	return 0, false
}

// Sweep loads the scenario file and plays it in the simulator over n
// seeds (the scenario's and the n-1 after it). It fails the test on a load
// or run error; it does not judge the expectations (see RequirePassRate).
func Sweep(t TB, file string, n int) *scenarios.Sweep {
	t.Helper()
	s, err := scenarios.Load(file)
	if err != nil {
		t.Fatalf("%v", err)
		return nil
	}
	sw, err := scenarios.RunSweep(t.Context(), s, n)
	if err != nil {
		t.Fatalf("sweep %s: %v", file, err)
		return nil
	}
	return sw
}

// RequirePassRate fails the test, with the sweep's summary, unless every
// expectation held in at least rate of the seeds (0.9 for 90%). The rate
// is the test's, whatever pass_rate the scenario file requires (sw.Pass
// holds that verdict).
func RequirePassRate(t TB, sw *scenarios.Sweep, rate float64) {
	t.Helper()
	if sw == nil {
		t.Fatalf("scenariotest: no sweep")
		return
	}
	var low []string
	for _, v := range sw.Expectations {
		if v.Rate+1e-9 < rate {
			low = append(low, fmt.Sprintf("%s: held in %d of %d seeds (%.0f%%), want %.0f%%",
				strings.Join(strings.Fields(v.Name+" "+v.Step+" "+v.Target+" "+v.Want), " "), v.Passed, v.N, 100*v.Rate, 100*rate))
		}
	}
	if len(low) > 0 {
		var b strings.Builder
		_ = reports.WriteSweep(&b, sw, false)
		t.Fatalf("game day %s over %d seeds:\n%s\n\n%s", sw.Scenario, len(sw.Seeds), strings.Join(low, "\n"), b.String())
	}
}

// SweepScore returns a score's distribution over a sweep's seeds by name,
// step and target ("" for run-wide scores; the target as "provider/model"
// or "provider:model"). Its values are float64: nanoseconds for a
// duration (see SweepTime), fractions for rates.
func SweepScore(sw *scenarios.Sweep, name, step, target string) (scenarios.SweepScore, bool) {
	if target != "" {
		target = score.NormTarget(target)
	}
	i := slices.IndexFunc(sw.Scores, func(s scenarios.SweepScore) bool {
		return s.Name == name && s.Step == step && (target == "" || s.Target == target)
	})
	if i < 0 {
		return scenarios.SweepScore{}, false
	}
	return sw.Scores[i], true
}

// SweepTime reads one value of a duration score of a sweep (its Median,
// P90, Worst or Best) as a time.Duration; ok is false when the value is a
// missing one (not detected, not recovered... in that share of seeds).
func SweepTime(v *float64) (d time.Duration, ok bool) {
	if v == nil {
		return 0, false
	}
	return time.Duration(*v), true
}
