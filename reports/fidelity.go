package reports

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// FidelityTolerances bound how far a live run's scores may be from the
// simulation's before the simulator's fidelity is in question: the
// simulation models the gateway's request path exactly (one lifecycle for
// both engines, see gateway/lifecycle), but live timing carries scheduler
// and network noise, and the two engines draw their random numbers apart.
//
// TTD is a point in time (the first detection), so its tolerance is
// absolute. TTM and TTR end when a windowed measure crosses a bound (the
// SLI over its window holds again; the target's share of traffic is back to
// 90% of its baseline), and a window of random arrivals crosses a bound a
// little earlier or later: their tolerance is Duration or Relative of the
// longer of the two, whichever is more.
type FidelityTolerances struct {
	Duration      time.Duration // TTD, TTM and TTR (default 1s)
	Relative      float64       // TTM and TTR, of the longer duration (default 0.1)
	Availability  float64       // absolute, in fractions (default 0.01 = 1 point)
	Amplification float64       // attempts per request, absolute (default 0.1)
}

// DefaultFidelityTolerances are the tolerances of the README's fidelity
// table.
var DefaultFidelityTolerances = FidelityTolerances{Duration: time.Second, Relative: 0.1, Availability: 0.01, Amplification: 0.1}

// FidelityCell is one score in both engines.
type FidelityCell struct {
	Sim, Live string
	Within    bool // the two agree within tolerance
}

// FidelityStep is one fault step on one target in both engines.
type FidelityStep struct {
	Step, Target  string
	TTD, TTM, TTR FidelityCell
}

// Fidelity is one game day played by the simulator and live.
type Fidelity struct {
	Scenario      string
	Availability  FidelityCell
	Amplification FidelityCell
	Verdict       FidelityCell // PASS/FAIL of the expectations
	Steps         []FidelityStep
	// Alerts compares the team's Prometheus alerts (alerts.prometheus_rules):
	// each rule's time to fire per incident, which agree within one scrape
	// interval plus one evaluation interval (when a sample lands in a
	// scrape and a rule sees it are each quantised to their interval).
	Alerts []FidelityAlert
	// Fleet compares a fleet game day's scores (gateway.replicas): the
	// attempts the fleet sent to a faulted primary per user request, and
	// the half-open trials its worst recovery took. Nil for one gateway.
	Fleet []FidelityFleet
}

// FidelityFleet is one fleet score in both engines.
type FidelityFleet struct {
	Score string
	Cell  FidelityCell
}

// FidelityAlert is one Prometheus alert's time to fire in an incident, in
// both engines.
type FidelityAlert struct {
	Incident, Rule string
	TimeToFire     FidelityCell
}

// Agrees reports whether every score agrees within tolerance.
func (f *Fidelity) Agrees() bool {
	ok := f.Availability.Within && f.Amplification.Within
	for _, s := range f.Steps {
		ok = ok && s.TTD.Within && s.TTM.Within && s.TTR.Within
	}
	for _, a := range f.Alerts {
		ok = ok && a.TimeToFire.Within
	}
	for _, c := range f.Fleet {
		ok = ok && c.Cell.Within
	}
	return ok
}

// CompareFidelity compares a simulated and a live run of one game day. It
// refuses two different scenarios or a pair that is not one of each mode.
func CompareFidelity(sim, live *score.Result, tol FidelityTolerances) (*Fidelity, error) {
	if sim.Scenario != live.Scenario {
		return nil, fmt.Errorf("different scenarios: %s and %s", sim.Scenario, live.Scenario)
	}
	if modeOf(sim) != score.ModeSim || modeOf(live) != score.ModeLive {
		return nil, fmt.Errorf("%s: want a simulated and a live run, got %s and %s", sim.Scenario, modeOf(sim), modeOf(live))
	}
	f := &Fidelity{Scenario: sim.Scenario}
	sa, la := sim.Overall.Availability.Success, live.Overall.Availability.Success
	f.Availability = FidelityCell{fmtPct(sa), fmtPct(la), math.Abs(sa-la) <= tol.Availability+1e-9}
	sr, lr := sim.Overall.Retry.Amplification, live.Overall.Retry.Amplification
	f.Amplification = FidelityCell{fmt.Sprintf("%.2f", sr), fmt.Sprintf("%.2f", lr), math.Abs(sr-lr) <= tol.Amplification+1e-9}
	f.Verdict = FidelityCell{runVerdict(sim), runVerdict(live), runVerdict(sim) == runVerdict(live)}
	for i := range sim.Faults {
		s := &sim.Faults[i]
		l := findFault(live, s.Step, s.Target)
		st := FidelityStep{Step: s.Step, Target: s.Target}
		if l == nil {
			st.TTD, st.TTM, st.TTR = FidelityCell{Sim: ttdCell(s), Live: "missing"}, FidelityCell{Sim: ttmCell(s), Live: "missing"},
				FidelityCell{Sim: ttrCell(s), Live: "missing"}
			f.Steps = append(f.Steps, st)
			continue
		}
		st.TTD = durCell(ttdCell(s), ttdCell(l), s.Detected, l.Detected, s.TTD, l.TTD, tol.Duration)
		st.TTM = durCell(ttmCell(s), ttmCell(l), !s.Impact || s.Mitigated, !l.Impact || l.Mitigated, s.TTM, l.TTM,
			windowed(s.TTM, l.TTM, tol))
		st.TTR = durCell(ttrCell(s), ttrCell(l), s.Recovered || !s.RecoveryMeasured(), l.Recovered || !l.RecoveryMeasured(), s.TTR, l.TTR,
			windowed(s.TTR, l.TTR, tol))
		if s.Superseded != l.Superseded || s.CutShort != l.CutShort {
			st.TTR.Within = false
		}
		f.Steps = append(f.Steps, st)
	}
	f.Alerts = comparePromAlerts(sim.PromAlerts, live.PromAlerts)
	f.Fleet = compareFleet(sim.Fleet, live.Fleet, tol)
	return f, nil
}

// Fleet score names in Fidelity.Fleet (as a sweep names them).
const (
	fleetAttempts = "fleet.primary_attempts_per_request"
	fleetTrials   = "fleet.trials_per_recovery"
)

// compareFleet compares two runs' fleet scores: attempts per request on a
// faulted primary within the amplification tolerance, the worst
// recovery's half-open trials within one (a trial in flight as the store
// answers may count on either side). Nil when neither run was a fleet.
func compareFleet(sim, live *score.FleetScore, tol FidelityTolerances) []FidelityFleet {
	if sim == nil && live == nil {
		return nil
	}
	if sim == nil || live == nil {
		c := FidelityCell{Sim: "one gateway", Live: "one gateway"}
		if sim != nil {
			c.Sim = fmt.Sprintf("%d replicas", sim.Replicas)
		}
		if live != nil {
			c.Live = fmt.Sprintf("%d replicas", live.Replicas)
		}
		return []FidelityFleet{{Score: "fleet", Cell: c}}
	}
	sa, la := sim.PrimaryAttemptsPerRequest, live.PrimaryAttemptsPerRequest
	st, lt := sim.TrialsPerRecovery, live.TrialsPerRecovery
	return []FidelityFleet{
		{fleetAttempts, FidelityCell{fmt.Sprintf("%.2f", sa), fmt.Sprintf("%.2f", la), math.Abs(sa-la) <= tol.Amplification+1e-9}},
		{fleetTrials, FidelityCell{fmt.Sprint(st), fmt.Sprint(lt), abs(st-lt) <= 1}},
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// comparePromAlerts pairs the incidents of two runs by name and compares
// each rule's time to fire (nil when neither run evaluated rules).
func comparePromAlerts(sim, live *score.PromAlerts) []FidelityAlert {
	if sim == nil && live == nil {
		return nil
	}
	if sim == nil || live == nil {
		return []FidelityAlert{{Incident: "–", Rule: "prometheus rules", TimeToFire: FidelityCell{
			Sim:  map[bool]string{true: "evaluated", false: "not evaluated"}[sim != nil],
			Live: map[bool]string{true: "evaluated", false: "not evaluated"}[live != nil]}}}
	}
	tol := sim.ScrapeInterval + sim.EvalInterval
	fire := func(p *score.PromAlerts, incident, rule string) (time.Duration, bool) {
		for _, in := range p.Incidents {
			if in.Name != incident {
				continue
			}
			for _, a := range in.Alerts {
				if a.Rule == rule {
					return a.TimeToFire, true
				}
			}
		}
		return 0, false
	}
	var out []FidelityAlert
	for _, in := range sim.Incidents {
		for _, r := range sim.Rules {
			sd, sok := fire(sim, in.Name, r.Name)
			ld, lok := fire(live, in.Name, r.Name)
			if !sok && !lok {
				continue
			}
			text := func(d time.Duration, ok bool) string {
				if !ok {
					return "never fired"
				}
				return fmtDur(d)
			}
			out = append(out, FidelityAlert{Incident: in.Name, Rule: r.Name,
				TimeToFire: durCell(text(sd, sok), text(ld, lok), sok, lok, sd, ld, tol)})
		}
	}
	return out
}

// windowed is the tolerance of a windowed duration score (TTM, TTR).
func windowed(a, b time.Duration, tol FidelityTolerances) time.Duration {
	return max(tol.Duration, time.Duration(tol.Relative*float64(max(a, b))))
}

func modeOf(r *score.Result) score.Mode {
	if r.Mode == "" {
		return score.ModeSim
	}
	return r.Mode
}

func findFault(r *score.Result, step, target string) *score.FaultScore {
	for i := range r.Faults {
		if r.Faults[i].Step == step && r.Faults[i].Target == target {
			return &r.Faults[i]
		}
	}
	return nil
}

// durCell compares a duration score that is only a duration when ok (was
// detected, mitigated, recovered): both ok and within tol, or both not.
func durCell(simText, liveText string, simOK, liveOK bool, sim, live, tol time.Duration) FidelityCell {
	c := FidelityCell{Sim: simText, Live: liveText}
	switch {
	case simOK != liveOK:
	case !simOK:
		c.Within = true
	default:
		d := sim - live
		c.Within = d <= tol && -d <= tol
	}
	return c
}

func ttdCell(f *score.FaultScore) string {
	switch {
	case f.NotExercised:
		return "not exercised"
	case !f.Detected:
		return "not detected"
	}
	return fmtDur(f.TTD)
}

func ttmCell(f *score.FaultScore) string {
	switch {
	case !f.Impact:
		return "no impact"
	case !f.Mitigated:
		return "not mitigated"
	}
	return fmtDur(f.TTM)
}

func ttrCell(f *score.FaultScore) string {
	switch {
	case !f.RecoveryMeasured():
		return recoverStr(*f)
	case !f.Recovered:
		return "not recovered"
	}
	return fmtDur(f.TTR)
}

// WriteFidelity writes the comparisons as two Markdown tables: one row per
// game day (availability, amplification, verdict), then one per fault step
// and target (TTD, TTM, TTR). A pair beyond tolerance is marked ✗.
func WriteFidelity(w io.Writer, fs []*Fidelity) error {
	var b strings.Builder
	cell := func(c FidelityCell) string {
		mark := ""
		if !c.Within {
			mark = " ✗"
		}
		return c.Sim + " / " + c.Live + mark
	}
	b.WriteString("| game day | availability sim / live | amplification sim / live | verdict sim / live |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.Scenario, cell(f.Availability), cell(f.Amplification), cell(f.Verdict))
	}
	b.WriteString("\n| game day | step · target | TTD sim / live | TTM sim / live | TTR sim / live |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, f := range fs {
		for _, s := range f.Steps {
			fmt.Fprintf(&b, "| %s | %s · %s | %s | %s | %s |\n", f.Scenario, s.Step, s.Target, cell(s.TTD), cell(s.TTM), cell(s.TTR))
		}
	}
	if slices.ContainsFunc(fs, func(f *Fidelity) bool { return len(f.Alerts) > 0 }) {
		b.WriteString("\n| game day | incident · Prometheus alert | time to fire sim / live |\n")
		b.WriteString("|---|---|---|\n")
		for _, f := range fs {
			for _, a := range f.Alerts {
				fmt.Fprintf(&b, "| %s | %s · %s | %s |\n", f.Scenario, a.Incident, a.Rule, cell(a.TimeToFire))
			}
		}
	}
	if slices.ContainsFunc(fs, func(f *Fidelity) bool { return len(f.Fleet) > 0 }) {
		b.WriteString("\n| game day | fleet score | sim / live |\n")
		b.WriteString("|---|---|---|\n")
		for _, f := range fs {
			for _, c := range f.Fleet {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", f.Scenario, c.Score, cell(c.Cell))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// CompareFidelitySweep compares a live run with a simulated seed sweep of
// the same game day (gameday run --seeds N). One live run is one draw of
// what the scenario leaves to chance (arrivals, jitter, the phase of a
// cooldown against a fault's end), so a live score agrees when it lies in
// the range the simulated seeds span, from the best to the worst, widened
// by the tolerance; a score the live run left unmeasured (not detected,
// not mitigated, not recovered, superseded, not exercised) agrees when some
// simulated seeds left it unmeasured too.
func CompareFidelitySweep(sw *scenarios.Sweep, live *score.Result, tol FidelityTolerances) (*Fidelity, error) {
	if sw.Scenario != live.Scenario {
		return nil, fmt.Errorf("different scenarios: %s and %s", sw.Scenario, live.Scenario)
	}
	if modeOf(live) != score.ModeLive {
		return nil, fmt.Errorf("%s: want a live run to compare with the sweep, got %s", live.Scenario, modeOf(live))
	}
	score := func(name, step, target string) *scenarios.SweepScore {
		for i := range sw.Scores {
			if s := &sw.Scores[i]; s.Name == name && s.Step == step && s.Target == target {
				return s
			}
		}
		return nil
	}
	n := len(sw.Seeds)
	f := &Fidelity{Scenario: sw.Scenario}
	f.Availability = rangeCell(score("availability", "", ""), live.Overall.Availability.Success, true, tol.Availability, fmtPct)
	f.Amplification = rangeCell(score("retry_amplification", "", ""), live.Overall.Retry.Amplification, true, tol.Amplification,
		func(v float64) string { return fmt.Sprintf("%.2f", v) })
	// The seeds where some expectation failed are at least those of the
	// expectation that failed most.
	failed := 0
	for _, e := range sw.Expectations {
		failed = max(failed, e.N-e.Passed)
	}
	simPass := failed == 0
	simText := fmt.Sprintf("PASS (%d seeds)", n)
	if !simPass {
		simText = fmt.Sprintf("FAIL in ≥%d/%d seeds", failed, n)
	}
	f.Verdict = FidelityCell{simText, runVerdict(live), runVerdict(live) == "PASS" || !simPass}
	durText := func(v float64) string { return fmtDur(time.Duration(v)) }
	for i := range live.Faults {
		l := &live.Faults[i]
		st := FidelityStep{Step: l.Step, Target: l.Target}
		ttd := score("ttd", l.Step, l.Target)
		switch {
		case l.NotExercised:
			st.TTD = FidelityCell{seedRange(ttd, n, durText), "not exercised", ttd == nil || ttd.N < n}
			if ttd == nil {
				st.TTD.Sim = fmt.Sprintf("not exercised in %d/%d", n, n)
			}
		default:
			st.TTD = rangeCell(ttd, float64(l.TTD), l.Detected, float64(tol.Duration), durText)
			if !l.Detected {
				st.TTD.Live = "not detected"
			}
		}
		ttm := score("ttm", l.Step, l.Target)
		st.TTM = rangeCell(ttm, float64(l.TTM), !l.Impact || l.Mitigated, float64(windowedRange(ttm, tol)), durText)
		switch {
		case !l.Impact:
			st.TTM.Live = "no impact"
		case !l.Mitigated:
			st.TTM.Live = "not mitigated"
		}
		ttr := score("ttr", l.Step, l.Target)
		switch {
		case !l.RecoveryMeasured():
			st.TTR = FidelityCell{seedRange(ttr, n, durText), recoverStr(*l), ttr == nil || ttr.N < n}
			if ttr == nil {
				st.TTR.Sim = fmt.Sprintf("%s in %d/%d", recoverStr(*l), n, n)
			}
		default:
			st.TTR = rangeCell(ttr, float64(l.TTR), l.Recovered, float64(windowedRange(ttr, tol)), durText)
			if !l.Recovered {
				st.TTR.Live = "not recovered"
			}
		}
		f.Steps = append(f.Steps, st)
	}
	if fl := live.Fleet; fl != nil {
		f.Fleet = []FidelityFleet{
			{fleetAttempts, rangeCell(score(fleetAttempts, "", ""), fl.PrimaryAttemptsPerRequest, true, tol.Amplification,
				func(v float64) string { return fmt.Sprintf("%.2f", v) })},
			{fleetTrials, rangeCell(score(fleetTrials, "", ""), float64(fl.TrialsPerRecovery), true, 1,
				func(v float64) string { return fmt.Sprint(int(v)) })},
		}
	}
	return f, nil
}

// windowedRange is the tolerance of a windowed duration score against a
// sweep: Duration, or Relative of the longest value the seeds measured.
func windowedRange(s *scenarios.SweepScore, tol FidelityTolerances) time.Duration {
	if s == nil {
		return tol.Duration
	}
	for _, v := range []*float64{s.Worst, s.P90, s.Median, s.Best} {
		if v != nil {
			return max(tol.Duration, time.Duration(tol.Relative*(*v)))
		}
	}
	return tol.Duration
}

// rangeCell compares a live value (measured says it is one) with the range
// of s over the seeds, widened by tol.
func rangeCell(s *scenarios.SweepScore, live float64, measured bool, tol float64, format func(float64) string) FidelityCell {
	c := FidelityCell{Sim: "–", Live: format(live)}
	if s == nil {
		c.Within = false
		return c
	}
	c.Sim = seedRange(s, s.N, format)
	if !measured {
		c.Within = s.Missing > 0
		return c
	}
	if s.Best == nil {
		return c // every seed left it unmeasured
	}
	lo, hi := *s.Best, math.Inf(1)
	if s.Worst != nil {
		hi = *s.Worst
	}
	if !s.HigherIsWorse {
		lo, hi = hi, lo
		if s.Worst == nil {
			lo = math.Inf(-1)
		}
	}
	c.Within = live >= lo-tol-1e-9 && live <= hi+tol+1e-9
	return c
}

// seedRange describes s over n seeds: "best–worst", and how many seeds
// left it unmeasured.
func seedRange(s *scenarios.SweepScore, n int, format func(float64) string) string {
	if s == nil {
		return "no seed measured it"
	}
	var parts []string
	switch {
	case s.Best == nil:
	case s.Worst != nil && format(*s.Best) == format(*s.Worst):
		parts = append(parts, format(*s.Best))
	case s.Worst != nil:
		parts = append(parts, format(*s.Best)+"–"+format(*s.Worst))
	default:
		parts = append(parts, format(*s.Best)+"–")
	}
	if s.Missing > 0 {
		missing := "not measured"
		switch s.Name {
		case "ttd":
			missing = "not detected"
		case "ttm":
			missing = "not mitigated"
		case "ttr":
			missing = "not recovered"
		}
		parts = append(parts, fmt.Sprintf("%s in %d/%d seeds", missing, s.Missing, s.N))
	}
	if m := n - s.N; m > 0 && (s.Name == "ttr" || s.Name == "ttd") {
		what := "superseded"
		if s.Name == "ttd" {
			what = "not exercised"
		}
		parts = append(parts, fmt.Sprintf("%s in %d/%d", what, m, n))
	}
	return strings.Join(parts, ", ")
}
