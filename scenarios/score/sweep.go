package score

import (
	"cmp"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Sweep is a seed sweep: one simulated scenario played with N seeds, and
// the distribution of each score over them. Seeds vary what a single run
// leaves to chance (arrivals, jitter, fault probabilities), so a sweep says
// how often a score holds rather than whether it held once. It is plain
// data (sweep.json) and, like a run, the same for the same seeds.
type Sweep struct {
	Schema   int      `json:"schema"` // SchemaVersion
	Scenario string   `json:"scenario"`
	File     string   `json:"file,omitempty"`
	Mode     Mode     `json:"mode"`
	Seeds    []uint64 `json:"seeds"`
	// Scores are each score's distribution, run-wide first, then by fault
	// step and target in the order of the first seed's result.
	Scores []SweepScore `json:"scores"`
	// Expectations are each expectation's pass rate over the seeds.
	Expectations []SweepVerdict `json:"expectations"`
	// Pass: every expectation held in at least its required share of seeds.
	Pass bool `json:"pass"`
}

// SweepScore is one score over the seeds of a sweep.
type SweepScore struct {
	Name   string `json:"name"` // "availability", "ttd", ...
	Step   string `json:"step,omitempty"`
	Target string `json:"target,omitempty"`
	// Unit is "duration" (values in nanoseconds), "rate" (a fraction),
	// "count" or "ratio".
	Unit string `json:"unit"`
	// HigherIsWorse orders the values: times, counts and ratios are worse
	// higher, rates lower.
	HigherIsWorse bool `json:"higher_is_worse"`
	// N is the number of seeds the score applies to; Missing those where
	// it was not measured (not detected, not mitigated, not recovered),
	// which rank as the worst.
	N       int `json:"n"`
	Missing int `json:"missing,omitempty"`
	// Median, P90 and Worst are the values half, 90% and all of the seeds
	// are at least as good as; nil when that rank is a missing value. Best
	// is the value no seed beats (with Worst, the range a single run of the
	// scenario may land in).
	Median *float64 `json:"median"`
	P90    *float64 `json:"p90"`
	Worst  *float64 `json:"worst"`
	Best   *float64 `json:"best,omitempty"`
	// DetectedBy counts the detection sources of a ttd over the seeds.
	DetectedBy map[string]int `json:"detected_by,omitempty"`
}

// SweepVerdict is one expectation's record over a sweep's seeds.
type SweepVerdict struct {
	Name   string  `json:"name"`
	Step   string  `json:"step,omitempty"`
	Target string  `json:"target,omitempty"`
	Want   string  `json:"want"`
	Passed int     `json:"passed"`
	N      int     `json:"n"`
	Rate   float64 `json:"rate"`     // Passed / N
	Needed float64 `json:"required"` // the pass rate required (default 1)
	Pass   bool    `json:"pass"`
}

// Summarize makes the sweep of results, one per seed, of the scenario
// named scenario (in file): each score's distribution and each
// expectation's pass rate against its pass_rate in e.
func Summarize(scenario, file string, seeds []uint64, results []*Result, e *Expect) *Sweep {
	sw := &Sweep{Schema: SchemaVersion, Scenario: scenario, File: file, Mode: ModeSim, Seeds: seeds}
	type sample struct {
		v       float64
		missing bool
	}
	type acc struct {
		SweepScore
		vals []sample
	}
	var accs []*acc
	index := map[[3]string]*acc{}
	var r *Result // the result being added
	add := func(name, step, target, unit string, higherWorse bool, v float64, missing bool) *acc {
		if m, ok := r.Measured[name]; ok && !m.Measured {
			// Not measured in this run (a black box's false alarms, cost
			// without prices): no figure, rather than a 0 that reads as one.
			return &acc{}
		}
		k := [3]string{name, step, target}
		a := index[k]
		if a == nil {
			a = &acc{SweepScore: SweepScore{Name: name, Step: step, Target: target, Unit: unit, HigherIsWorse: higherWorse}}
			index[k] = a
			accs = append(accs, a)
		}
		a.vals = append(a.vals, sample{v, missing})
		return a
	}
	dur := func(d time.Duration) float64 { return float64(d) }
	for _, r = range results {
		o := &r.Overall
		add("availability", "", "", "rate", false, o.Availability.Success, false)
		add("good", "", "", "rate", false, o.Availability.GoodRate, false)
		add("bad_served", "", "", "count", true, float64(o.BadServed), false)
		add("flaps", "", "", "count", true, float64(o.Flaps), false)
		add("retry_amplification", "", "", "ratio", true, o.Retry.Amplification, false)
		add("peak_retry_amplification", "", "", "ratio", true, o.Retry.PeakAmplification, false)
		add("cost_multiplier", "", "", "ratio", true, o.Cost.Multiplier, false)
		add("ttft_p95", "", "", "duration", true, dur(o.Latency.FaultTTFT.P95), false)
		add("breach_time", "", "", "duration", true, dur(o.BreachTime), false)
		add("false_alarms", "", "", "count", true, float64(len(o.FalseAlarms)), false)
		if f := r.Fleet; f != nil {
			add("fleet.primary_attempts_per_request", "", "", "ratio", true, f.PrimaryAttemptsPerRequest, false)
			add("fleet.trials_per_recovery", "", "", "count", true, float64(f.TrialsPerRecovery), false)
		}
		for _, f := range r.Faults {
			if !f.NotExercised {
				a := add("ttd", f.Step, f.Target, "duration", true, dur(f.TTD), !f.Detected)
				if f.Detected {
					if a.DetectedBy == nil {
						a.DetectedBy = map[string]int{}
					}
					a.DetectedBy[f.DetectedBy]++
				}
			}
			add("ttm", f.Step, f.Target, "duration", true, dur(f.TTM), f.Impact && !f.Mitigated)
			add("first_mitigation", f.Step, f.Target, "duration", true, dur(f.FirstMitigation), f.Impact && !f.FirstMitigated)
			add("breach_time", f.Step, f.Target, "duration", true, dur(f.BreachTime), false)
			add("relapses", f.Step, f.Target, "count", true, float64(f.Relapses), false)
			if f.RecoveryMeasured() {
				add("ttr", f.Step, f.Target, "duration", true, dur(f.TTR), !f.Recovered)
			}
			add("availability", f.Step, f.Target, "rate", false, f.Availability.Success, false)
			add("good", f.Step, f.Target, "rate", false, f.Availability.GoodRate, false)
		}
	}
	for _, a := range accs {
		// Best first; missing values rank last.
		slices.SortStableFunc(a.vals, func(x, y sample) int {
			if x.missing || y.missing {
				return cmp.Compare(b2i(x.missing), b2i(y.missing))
			}
			if a.HigherIsWorse {
				return cmp.Compare(x.v, y.v)
			}
			return cmp.Compare(y.v, x.v)
		})
		a.N = len(a.vals)
		at := func(q float64) *float64 {
			sm := a.vals[RankOf(q, len(a.vals))]
			if sm.missing {
				return nil
			}
			return &sm.v
		}
		for _, v := range a.vals {
			if v.missing {
				a.Missing++
			}
		}
		a.Median, a.P90, a.Worst, a.Best = at(0.5), at(0.9), at(1), at(0)
		sw.Scores = append(sw.Scores, a.SweepScore)
	}

	// Expectations: verdicts matched by name, step, target and bound.
	vidx := map[[4]string]int{}
	for _, r := range results {
		for _, v := range r.Expectations {
			k := [4]string{v.Name, v.Step, v.Target, v.Want}
			i, ok := vidx[k]
			if !ok {
				i = len(sw.Expectations)
				vidx[k] = i
				sw.Expectations = append(sw.Expectations, SweepVerdict{Name: v.Name, Step: v.Step, Target: v.Target, Want: v.Want,
					Needed: e.passRate(v.Step, v.Target)})
			}
			e := &sw.Expectations[i]
			e.N++
			if v.Pass {
				e.Passed++
			}
		}
	}
	sw.Pass = true
	for i := range sw.Expectations {
		e := &sw.Expectations[i]
		// An expectation missing from a seed's verdicts (a target not
		// exercised there) neither passed nor failed in it.
		e.Rate = float64(e.Passed) / float64(e.N)
		e.Pass = e.Rate >= e.Needed-1e-12
		sw.Pass = sw.Pass && e.Pass
	}
	for _, r := range results {
		if r.Aborted {
			sw.Pass = false
		}
	}
	return sw
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// passRate is the share of seeds an expectation on step and target must
// hold in: the (step, target) pair's pass_rate, the step's, or the
// scenario's; 1 when none is set.
func (e *Expect) passRate(step, target string) float64 {
	r := math.NaN()
	if e.PassRate != nil {
		r = e.PassRate.F()
	}
	if se, ok := e.Steps[BaseStep(step)]; ok && step != "" {
		if se.PassRate != nil {
			r = se.PassRate.F()
		}
		for k, tb := range se.Targets {
			if NormTarget(k) == target && tb.PassRate != nil {
				r = tb.PassRate.F()
			}
		}
	}
	if math.IsNaN(r) {
		return 1
	}
	return r
}

// WriteDir writes sweep.json into dir (created if needed).
func (sw *Sweep) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(sw, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sweep.json"), append(b, '\n'), 0o644)
}
