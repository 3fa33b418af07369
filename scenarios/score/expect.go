package score

import (
	"fmt"
	"github.com/brownout-dev/brownout/yamlfile"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Judge turns the expectations into verdicts on res, in a stable order:
// run-wide bounds, then per step, then per target, then alerts.
func (e *Expect) Judge(res *Result) []Verdict {
	var out []Verdict
	v := func(name, step, target, want, got string, pass bool) {
		key := name
		if strings.HasPrefix(name, "alert ") {
			key = "alerts"
		}
		if i := strings.IndexByte(name, '.'); i > 0 { // latency_penalty.total
			key = name[:i]
		}
		if m, ok := res.Measured[key]; ok && !m.Measured && !(key == "detected_by" && want == "traffic_shift") {
			// Never a pass on a figure that was not measured.
			got, pass = "not measured: "+m.Why, false
		}
		out = append(out, Verdict{Name: name, Step: step, Target: target, Want: want, Got: got, Pass: pass})
	}
	o := &res.Overall
	checkP := func(name string, b *PercentBound, got float64, step, target string) {
		if b == nil {
			return
		}
		want, pass := b.judge(got)
		v(name, step, target, want, b.show(got), pass)
	}
	checkN := func(name string, b *NumberBound, got float64, step, target string) {
		if b == nil {
			return
		}
		want, pass := b.judge(got)
		v(name, step, target, want, b.show(got), pass)
	}
	checkP("availability", e.Availability, o.Availability.Success, "", "")
	checkP("failed", e.Failed, o.Availability.FailedRate, "", "")
	checkP("good", e.Good, o.Availability.GoodRate, "", "")
	checkP("degraded", e.Degraded, o.Availability.DegradedRate, "", "")
	checkN("flaps", e.Flaps, float64(o.Flaps), "", "")
	checkN("bad_served", e.BadServed, float64(o.BadServed), "", "")
	checkN("cost_multiplier", e.CostMultiplier, o.Cost.Multiplier, "", "")
	checkN("retry_amplification", e.RetryAmplification, o.Retry.Amplification, "", "")
	checkN("peak_retry_amplification", e.PeakRetryAmplification, o.Retry.PeakAmplification, "", "")
	checkPenalty := func(b *PenaltyBound, l *Latency, step, target string) {
		if b == nil {
			return
		}
		checkN("latency_penalty", b.firstToken(), l.TTFTPenalty, step, target)
		checkN("latency_penalty.inter_token", b.InterToken, l.InterTokenPenalty, step, target)
		checkN("latency_penalty.total", b.Total, l.TotalPenalty, step, target)
	}
	checkPenalty(e.LatencyPenalty, &o.Latency, "", "")
	if e.TTFTP95 != nil {
		p95 := o.Latency.FaultTTFT.P95
		if o.Latency.FaultTTFT.N == 0 {
			p95 = o.Latency.BaselineTTFT.P95
		}
		want, pass := e.TTFTP95.judge(p95, true)
		v("ttft_p95", "", "", want, e.TTFTP95.show(p95), pass)
	}

	if e.FailTimeP95 != nil {
		p95 := o.Latency.Failed.P95
		want, pass := e.FailTimeP95.judge(p95, true)
		v("fail_time_p95", "", "", want, e.FailTimeP95.show(p95)+fmt.Sprintf(" (%d failed)", o.Latency.Failed.N), pass)
	}

	checkN("false_alarms", e.FalseAlarms, float64(len(o.FalseAlarms)), "", "")
	if e.BreachTime != nil {
		want, pass := e.BreachTime.judge(o.BreachTime, true)
		v("breach_time", "", "", want, e.BreachTime.show(o.BreachTime), pass)
	}

	out = append(out, e.judgeFleet(res)...)

	// Per fault step and target: the run-wide step bounds, then the step's own.
	for _, f := range res.Faults {
		step := e.Steps[BaseStep(f.Step)]
		se := step.StepBounds
		named := false
		for k, tb := range step.Targets {
			if NormTarget(k) == f.Target {
				se, named = se.overlay(tb), true
			}
		}
		ttd, ttm, ttr := firstD(se.TTD, e.TTD), firstD(se.TTM, e.TTM), firstD(se.TTR, e.TTR)
		if f.NotExercised {
			// Neither detected nor missed: only a bound on this very
			// (step, target) pair reports it, as a failure.
			if named && (se.TTD != nil || se.Detected != nil || se.DetectedBy != "") {
				v("detected", f.Step, f.Target, "exercised", "not exercised", false)
			}
			ttd = nil
			se.Detected, se.DetectedBy = nil, ""
		}
		if se.Detected != nil {
			v("detected", f.Step, f.Target, strconv.FormatBool(*se.Detected), detectedString(f), f.Detected == *se.Detected)
		}
		if se.DetectedBy != "" {
			got := "not detected"
			if f.Detected {
				got = f.DetectedBy
			}
			v("detected_by", f.Step, f.Target, se.DetectedBy, got, f.Detected && detectedBy(f.DetectedBy, se.DetectedBy))
		}
		if ttd != nil && (se.Detected == nil || *se.Detected) {
			got := "not detected"
			switch {
			case f.Detected && f.Masked:
				got = ttd.show(f.TTD) + " (" + f.DetectedBy + ", masked by " + maskedBy(f) + ")"
			case f.Detected && res.BlackBox:
				got = ttd.show(f.TTD) + " (" + f.DetectedBy + ": " + shiftFigures(f) + ")"
			case f.Detected:
				got = ttd.show(f.TTD) + " (" + f.DetectedBy + ")"
			case f.Masked:
				got = "not re-detected (masked by " + maskedBy(f) + ")"
			case res.BlackBox:
				got = "not detected (" + shiftFigures(f) + ")"
			}
			want, pass := ttd.judge(f.TTD, f.Detected)
			v("ttd", f.Step, f.Target, want, got, pass)
		}
		if ttm != nil {
			got := "not mitigated"
			switch {
			case !f.Impact:
				got = "0s (no impact)"
			case f.Mitigated:
				got = ttm.show(f.TTM)
			}
			want, pass := ttm.judge(f.TTM, f.Mitigated)
			v("ttm", f.Step, f.Target, want, got, pass)
		}
		if b := se.FirstMitigation; b != nil {
			got := "never"
			switch {
			case !f.Impact:
				got = "0s (no impact)"
			case f.FirstMitigated:
				got = b.show(f.FirstMitigation)
			}
			want, pass := b.judge(f.FirstMitigation, !f.Impact || f.FirstMitigated)
			v("first_mitigation", f.Step, f.Target, want, got, pass)
		}
		if b := se.BreachTime; b != nil {
			want, pass := b.judge(f.BreachTime, true)
			v("breach_time", f.Step, f.Target, want, b.show(f.BreachTime), pass)
		}
		checkN("relapses", se.Relapses, float64(f.Relapses), f.Step, f.Target)
		if ttr != nil && f.RecoveryMeasured() {
			got := "not recovered"
			if f.Recovered {
				got = ttr.show(f.TTR)
			}
			want, pass := ttr.judge(f.TTR, f.Recovered)
			v("ttr", f.Step, f.Target, want, got, pass)
		}
		checkN("load_ratio", firstN(se.LoadRatio, e.LoadRatio), f.LoadRatio, f.Step, f.Target)
		checkP("availability", se.Availability, f.Availability.Success, f.Step, f.Target)
		checkP("failed", se.Failed, f.Availability.FailedRate, f.Step, f.Target)
		checkP("good", se.Good, f.Availability.GoodRate, f.Step, f.Target)
		checkN("bad_served", se.BadServed, float64(f.BadServed), f.Step, f.Target)
		checkN("cost_multiplier", se.CostMultiplier, f.CostMultiplier, f.Step, f.Target)
		checkN("retry_amplification", se.RetryAmplification, f.Retry.Amplification, f.Step, f.Target)
		checkPenalty(se.LatencyPenalty, &f.Latency, f.Step, f.Target)
		checkN("flaps", se.Flaps, float64(f.Flaps), f.Step, f.Target)
	}

	for _, name := range slices.Sorted(maps.Keys(e.Targets)) {
		te := e.Targets[name]
		t, _ := res.Target(name)
		key := NormTarget(name)
		checkP("quality", te.Quality, t.Quality, "", key)
		checkP("share", te.Share, t.Share, "", key)
		checkN("flaps", te.Flaps, float64(t.Flaps), "", key)
		checkN("bad_served", te.BadServed, float64(t.BadServed), "", key)
		checkN("attempts", te.Attempts, float64(t.Attempts), "", key)
		if te.UnnecessaryFallback != nil {
			want, pass := te.UnnecessaryFallback.judge(t.UnnecessaryFallback, true)
			v("unnecessary_fallback", "", key, want, te.UnnecessaryFallback.show(t.UnnecessaryFallback), pass)
		}
	}

	firstFault := time.Time{}
	for _, f := range res.Faults {
		if firstFault.IsZero() || f.Start.Before(firstFault) {
			firstFault = f.Start
		}
	}
	for _, a := range e.Alerts {
		i := slices.IndexFunc(res.Alerts, func(x AlertScore) bool { return x.Name == a.Name })
		var sc AlertScore
		if i >= 0 {
			sc = res.Alerts[i]
		}
		name := "alert " + a.Name
		wantFired := a.Fired == nil || *a.Fired
		if !wantFired {
			v(name, "", "", "never fires", firedString(sc, firstFault), sc.Fired == 0)
			continue
		}
		want := "fires"
		pass := sc.Fired > 0
		if a.Within > 0 {
			want += " within " + a.Within.String() + " of the first fault"
			if pass && !firstFault.IsZero() && sc.FirstAt.Sub(firstFault) > a.Within.D() {
				pass = false
			}
		}
		got := firedString(sc, firstFault)
		if a.DeliveredTo != "" {
			want += ", delivered to " + a.DeliveredTo
			if sc.Delivered[a.DeliveredTo] == 0 {
				pass = false
			}
		}
		if a.UndeliveredTo != "" {
			want += ", delivery to " + a.UndeliveredTo + " fails (flagged)"
			if sc.Undelivered[a.UndeliveredTo] == 0 {
				pass = false
			}
		}
		if sc.Fired > 0 {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(sc.Delivered)) {
				parts = append(parts, fmt.Sprintf("delivered to %s ×%d", k, sc.Delivered[k]))
			}
			for _, k := range slices.Sorted(maps.Keys(sc.Undelivered)) {
				parts = append(parts, fmt.Sprintf("UNDELIVERED to %s ×%d", k, sc.Undelivered[k]))
			}
			if len(parts) > 0 {
				got += ", " + strings.Join(parts, ", ")
			}
		}
		v(name, "", "", want, got, pass)
	}
	judgePromAlerts(e.PrometheusAlerts, res.PromAlerts, func(name, want, got string, pass bool) { v(name, "", "", want, got, pass) })
	return out
}

// maskedBy names what masked a fault: the earlier step, or a demotion
// outside every fault.
func maskedBy(f FaultScore) string {
	if f.MaskedBy == "" {
		return "an earlier demotion"
	}
	return f.MaskedBy
}

func firedString(sc AlertScore, firstFault time.Time) string {
	if sc.Fired == 0 {
		return "never fired"
	}
	if firstFault.IsZero() {
		return fmt.Sprintf("fired ×%d", sc.Fired)
	}
	return fmt.Sprintf("fired ×%d, first %s after the first fault", sc.Fired, FormatDuration(sc.FirstAt.Sub(firstFault)))
}

// detectedBy reports whether a detection source matches an expected one:
// equal, or want is "detector" and got names a detector.
// detectedBy reports whether the detection source got is one that want
// accepts: a source, "detector" for any detector, or alternatives joined
// by "|" ("detector:json_invalid | health").
func detectedBy(got, want string) bool {
	for _, w := range DetectionSources(want) {
		if got == w || (w == "detector" && strings.HasPrefix(got, "detector:")) {
			return true
		}
	}
	return false
}

// DetectionSources splits a detected_by expectation into its alternatives.
func DetectionSources(want string) []string {
	alts := strings.Split(want, "|")
	for i := range alts {
		alts[i] = strings.TrimSpace(alts[i])
	}
	return alts
}

func detectedString(f FaultScore) string {
	if f.Detected {
		return "true (" + f.DetectedBy + ")"
	}
	return "false"
}

func firstD(a, b *DurationBound) *DurationBound {
	if a != nil {
		return a
	}
	return b
}

func firstN(a, b *NumberBound) *NumberBound {
	if a != nil {
		return a
	}
	return b
}

// judge checks a measured duration; measured false (not detected, not
// mitigated, not recovered) fails a max bound.
func (b *DurationBound) judge(d time.Duration, measured bool) (string, bool) {
	var want []string
	pass := true
	if b.Min != nil {
		want = append(want, ">= "+b.Min.String())
		pass = pass && measured && d >= b.Min.D()
	}
	if b.Max != nil {
		want = append(want, "<= "+b.Max.String())
		pass = pass && measured && d <= b.Max.D()
	}
	return strings.Join(want, " and "), pass
}

func (b *NumberBound) judge(x float64) (string, bool) {
	var want []string
	pass := true
	if b.Min != nil {
		want = append(want, ">= "+num(*b.Min))
		pass = pass && x >= *b.Min-1e-12
	}
	if b.Max != nil {
		want = append(want, "<= "+num(*b.Max))
		pass = pass && x <= *b.Max+1e-12
	}
	return strings.Join(want, " and "), pass
}

func (b *PercentBound) judge(x float64) (string, bool) {
	var want []string
	pass := true
	if b.Min != nil {
		want = append(want, ">= "+pct(b.Min.F()))
		pass = pass && x >= b.Min.F()-1e-12
	}
	if b.Max != nil {
		want = append(want, "<= "+pct(b.Max.F()))
		pass = pass && x <= b.Max.F()+1e-12
	}
	return strings.Join(want, " and "), pass
}

// show prints x for a verdict against b: with three decimals, or as many
// more as it takes for the printed figure not to contradict the verdict.
func (b *NumberBound) show(x float64) string {
	_, pass := b.judge(x)
	for prec := 3; prec < 9; prec++ {
		if _, p := b.judge(roundTo(x, prec)); p == pass {
			return numPrec(x, prec)
		}
	}
	return numPrec(x, -1)
}

// show prints x for a verdict against b: as a percentage with two
// decimals, or as many more as it takes for the printed figure not to
// contradict the verdict.
func (b *PercentBound) show(x float64) string {
	_, pass := b.judge(x)
	for prec := 2; prec < 8; prec++ {
		if _, p := b.judge(roundTo(x*100, prec) / 100); p == pass {
			return strconv.FormatFloat(x*100, 'f', prec, 64) + "%"
		}
	}
	return strconv.FormatFloat(x*100, 'f', -1, 64) + "%"
}

// roundTo rounds x to prec decimals, as strconv prints it.
func roundTo(x float64, prec int) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', prec, 64), 64)
	return r
}

func num(x float64) string { return numPrec(x, 3) }

// numPrec prints x with prec decimals (-1: as many as needed), trailing
// zeros dropped.
func numPrec(x float64, prec int) string {
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func pct(x float64) string { return strconv.FormatFloat(x*100, 'f', 2, 64) + "%" }

// FormatDuration prints a measured duration the way every verdict and
// report shows it: rounded to 100 ms, in Go's notation ("800ms", "12.4s",
// "1m2.7s"). A verdict compares the unrounded value; see [DurationBound].
func FormatDuration(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }

// show prints a measured duration for a verdict against b: rounded as
// [FormatDuration] does, unless the rounded figure would pass where d fails
// or fail where d passes (829ms against "<= 810ms" is not "800ms"); then
// with as many more digits as the verdict needs.
func (b *DurationBound) show(d time.Duration) string {
	_, pass := b.judge(d, true)
	for _, unit := range []time.Duration{100 * time.Millisecond, 10 * time.Millisecond, time.Millisecond, time.Microsecond} {
		if _, p := b.judge(d.Round(unit), true); p == pass {
			return d.Round(unit).String()
		}
	}
	return d.String()
}

// shiftFigures shows a black box's two traffic-shift figures.
func shiftFigures(f FaultScore) string {
	fig := func(d *time.Duration) string {
		if d == nil {
			return "not shifted"
		}
		return FormatDuration(*d)
	}
	return "first attempts " + fig(f.ShiftFirst) + ", served " + fig(f.ShiftServed)
}

// Expect turns scores into a verdict. Step-level bounds (TTD, TTM, TTR,
// LoadRatio) apply to every fault step on every target it faults; the others
// apply to the whole run. Steps and Targets add bounds for one step or one
// target.
type Expect struct {
	TTD                    *DurationBound `yaml:"ttd,omitempty"`
	TTM                    *DurationBound `yaml:"ttm,omitempty"`
	TTR                    *DurationBound `yaml:"ttr,omitempty"`
	LoadRatio              *NumberBound   `yaml:"load_ratio,omitempty"`
	Flaps                  *NumberBound   `yaml:"flaps,omitempty"`
	Availability           *PercentBound  `yaml:"availability,omitempty"`
	Failed                 *PercentBound  `yaml:"failed,omitempty"`
	Good                   *PercentBound  `yaml:"good,omitempty"` // share of good requests (every SLO part met)
	Degraded               *PercentBound  `yaml:"degraded,omitempty"`
	BadServed              *NumberBound   `yaml:"bad_served,omitempty"`
	CostMultiplier         *NumberBound   `yaml:"cost_multiplier,omitempty"`
	RetryAmplification     *NumberBound   `yaml:"retry_amplification,omitempty"`
	PeakRetryAmplification *NumberBound   `yaml:"peak_retry_amplification,omitempty"`
	LatencyPenalty         *PenaltyBound  `yaml:"latency_penalty,omitempty"`
	TTFTP95                *DurationBound `yaml:"ttft_p95,omitempty"`
	FailTimeP95            *DurationBound `yaml:"fail_time_p95,omitempty"`
	// FalseAlarms bounds the detections, demotions and pages with no
	// fault to find (Overall.FalseAlarms); BreachTime the time the SLI was
	// below the SLO over the whole run.
	FalseAlarms *NumberBound   `yaml:"false_alarms,omitempty"`
	BreachTime  *DurationBound `yaml:"breach_time,omitempty"`
	Alerts      []AlertExpect  `yaml:"alerts,omitempty"`
	// PrometheusAlerts bounds the team's own Prometheus alerts
	// (alerts.prometheus_rules), by alert name.
	PrometheusAlerts map[string]PromAlertExpect `yaml:"prometheus_alerts,omitempty"`
	Steps            map[string]StepExpect      `yaml:"steps,omitempty"`
	Targets          map[string]TargetExpect    `yaml:"targets,omitempty"`
	// Fleet bounds the scores of a fleet of replicas (see FleetScore).
	Fleet *FleetExpect `yaml:"fleet,omitempty"`
	// PassRate is the share of a seed sweep's seeds (gameday run --seeds)
	// in which every expectation must hold. Default 100%.
	PassRate *yamlfile.Percent `yaml:"pass_rate,omitempty"`
}

// StepExpect are bounds on one fault step, on every target it faults;
// Targets adds or overrides bounds for one (step, target) pair, by target
// ("provider/model").
type StepExpect struct {
	StepBounds `yaml:",inline"`
	Targets    map[string]StepBounds `yaml:"targets,omitempty"`
}

// StepBounds are the bounds of a fault step on a target.
type StepBounds struct {
	TTD      *DurationBound `yaml:"ttd,omitempty"`
	TTM      *DurationBound `yaml:"ttm,omitempty"`
	TTR      *DurationBound `yaml:"ttr,omitempty"`
	Detected *bool          `yaml:"detected,omitempty"`
	// DetectedBy names the detection source the step must be detected by:
	// exactly as FaultScore.DetectedBy ("detector:json_invalid", "breaker",
	// "health", "probe", ...), "detector" for any detector, or alternatives
	// joined by "|" ("detector:json_invalid | health") when two sources
	// race to see the fault first.
	DetectedBy         string        `yaml:"detected_by,omitempty"`
	Availability       *PercentBound `yaml:"availability,omitempty"`
	Failed             *PercentBound `yaml:"failed,omitempty"`
	Good               *PercentBound `yaml:"good,omitempty"`
	BadServed          *NumberBound  `yaml:"bad_served,omitempty"`
	CostMultiplier     *NumberBound  `yaml:"cost_multiplier,omitempty"`
	RetryAmplification *NumberBound  `yaml:"retry_amplification,omitempty"`
	LoadRatio          *NumberBound  `yaml:"load_ratio,omitempty"`
	LatencyPenalty     *PenaltyBound `yaml:"latency_penalty,omitempty"`
	Flaps              *NumberBound  `yaml:"flaps,omitempty"`
	// FirstMitigation bounds the time to the first moment the SLI was
	// back at the SLO (a relapse after it is judged by Relapses);
	// BreachTime the time the SLI was below the SLO during the step.
	FirstMitigation *DurationBound `yaml:"first_mitigation,omitempty"`
	BreachTime      *DurationBound `yaml:"breach_time,omitempty"`
	Relapses        *NumberBound   `yaml:"relapses,omitempty"`
	// PassRate is the share of a seed sweep's seeds in which each of these
	// bounds must hold (default: Expect's).
	PassRate *yamlfile.Percent `yaml:"pass_rate,omitempty"`
}

// overlay returns b with every bound o sets replaced by o's.
func (b StepBounds) overlay(o StepBounds) StepBounds {
	bv, ov := reflect.ValueOf(&b).Elem(), reflect.ValueOf(o)
	for i := range ov.NumField() {
		if !ov.Field(i).IsZero() {
			bv.Field(i).Set(ov.Field(i))
		}
	}
	return b
}

// TargetExpect are bounds on one target over the run.
type TargetExpect struct {
	Quality   *PercentBound `yaml:"quality,omitempty"`
	Share     *PercentBound `yaml:"share,omitempty"`
	Flaps     *NumberBound  `yaml:"flaps,omitempty"`
	BadServed *NumberBound  `yaml:"bad_served,omitempty"`
	Attempts  *NumberBound  `yaml:"attempts,omitempty"`
	// UnnecessaryFallback bounds the time the target spent out of traffic
	// with no fault of its own (see TargetScore.UnnecessaryFallback).
	UnnecessaryFallback *DurationBound `yaml:"unnecessary_fallback,omitempty"`
}

// AlertExpect expects an alert rule to fire (within Within of the first
// fault's start) and to be delivered to, or to fail delivery to, a sink.
// Fired false expects it never to fire.
type AlertExpect struct {
	Name          string            `yaml:"name"`
	Within        yamlfile.Duration `yaml:"within,omitempty"`
	Fired         *bool             `yaml:"fired,omitempty"`
	DeliveredTo   string            `yaml:"delivered_to,omitempty"`
	UndeliveredTo string            `yaml:"undelivered_to,omitempty"`
}

// DurationBound is {max: 30s} and/or {min: 1s}. A verdict compares the
// measured value unrounded; its Got shows it as [FormatDuration] does, with
// more digits only where that rounding would contradict the verdict.
type DurationBound struct {
	Min *yamlfile.Duration `yaml:"min,omitempty"`
	Max *yamlfile.Duration `yaml:"max,omitempty"`
}

// NumberBound is {max: 1.3} and/or {min: 0.5}.
type NumberBound struct {
	Min *float64 `yaml:"min,omitempty"`
	Max *float64 `yaml:"max,omitempty"`
}

// PenaltyBound bounds the latency penalties, fault p95 over baseline p95:
// {max: 2} bounds the first token's (as before per-kind bounds existed);
// {first_token: {max: 2}, inter_token: {max: 3}, total: {max: 1.5}} bounds
// each kind. A streamed answer can keep its first token fast and crawl after
// it; only the inter-token and total penalties see that. Verdicts are named
// latency_penalty (first token), latency_penalty.inter_token and
// latency_penalty.total.
type PenaltyBound struct {
	NumberBound `yaml:",inline"`
	FirstToken  *NumberBound `yaml:"first_token,omitempty"`
	InterToken  *NumberBound `yaml:"inter_token,omitempty"`
	Total       *NumberBound `yaml:"total,omitempty"`
}

// firstToken is the first-token bound, given either way; nil when none.
func (b *PenaltyBound) firstToken() *NumberBound {
	if b.FirstToken != nil {
		return b.FirstToken
	}
	if b.Min != nil || b.Max != nil {
		return &b.NumberBound
	}
	return nil
}

// Check reports a bound given both ways, or none at all, as a problem with
// the field that says so.
func (b *PenaltyBound) Check() (field, msg string) {
	switch {
	case b.FirstToken != nil && (b.Min != nil || b.Max != nil):
		return "first_token", "the first-token penalty is bounded twice: use min/max or first_token, not both"
	case b.firstToken() == nil && b.InterToken == nil && b.Total == nil:
		return "", "no bound: give max/min, or first_token, inter_token or total"
	}
	return "", ""
}

// PercentBound is {min: 99.5%} and/or {max: 1%}.
type PercentBound struct {
	Min *yamlfile.Percent `yaml:"min,omitempty"`
	Max *yamlfile.Percent `yaml:"max,omitempty"`
}

// FleetExpect are bounds on a fleet's scores (see FleetScore).
type FleetExpect struct {
	// PrimaryAttemptsPerRequest bounds the fleet's attempts on a faulted
	// primary per user request during outages.
	PrimaryAttemptsPerRequest *NumberBound `yaml:"primary_attempts_per_request,omitempty"`
	// TrialsPerRecovery bounds the half-open trials of the fleet's
	// largest recovery.
	TrialsPerRecovery *NumberBound `yaml:"trials_per_recovery,omitempty"`
	// Degraded bounds how often a replica fell back to local state,
	// Resynced how often one followed the store again.
	Degraded *NumberBound `yaml:"degraded,omitempty"`
	Resynced *NumberBound `yaml:"resynced,omitempty"`
	// SpuriousDegraded bounds the fallbacks that came with no store step
	// active (FleetScore.SpuriousDegraded).
	SpuriousDegraded *NumberBound `yaml:"spurious_degraded,omitempty"`
}

// judgeFleet judges the fleet bounds.
func (x *Expect) judgeFleet(res *Result) []Verdict {
	e := x.Fleet
	if e == nil {
		return nil
	}
	f := res.Fleet
	if f == nil {
		f = &FleetScore{}
	}
	var out []Verdict
	for _, c := range []struct {
		name string
		b    *NumberBound
		got  float64
	}{
		{"fleet.primary_attempts_per_request", e.PrimaryAttemptsPerRequest, f.PrimaryAttemptsPerRequest},
		{"fleet.trials_per_recovery", e.TrialsPerRecovery, float64(f.TrialsPerRecovery)},
		{"fleet.degraded", e.Degraded, float64(f.Degraded)},
		{"fleet.resynced", e.Resynced, float64(f.Resynced)},
		{"fleet.spurious_degraded", e.SpuriousDegraded, float64(f.SpuriousDegraded)},
	} {
		if c.b == nil {
			continue
		}
		if c.name == "fleet.trials_per_recovery" && len(f.Recoveries) == 0 {
			// No outage ended in the run: a bound on its recovery is
			// not met by measuring nothing.
			want, _ := c.b.judge(0)
			out = append(out, Verdict{Name: c.name, Want: want, Got: "not measured: no outage ended in the run", Pass: false})
			continue
		}
		want, pass := c.b.judge(c.got)
		out = append(out, Verdict{Name: c.name, Want: want, Got: num(c.got), Pass: pass})
	}
	return out
}

// BaseStep is the name of the step a repeat repeats ("flap#3" -> "flap").
func BaseStep(name string) string {
	base, _, _ := strings.Cut(name, "#")
	return base
}
