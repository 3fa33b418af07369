package reports

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/scenarios"
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
}

// Agrees reports whether every score agrees within tolerance.
func (f *Fidelity) Agrees() bool {
	ok := f.Availability.Within && f.Amplification.Within
	for _, s := range f.Steps {
		ok = ok && s.TTD.Within && s.TTM.Within && s.TTR.Within
	}
	return ok
}

// CompareFidelity compares a simulated and a live run of one game day. It
// refuses two different scenarios or a pair that is not one of each mode.
func CompareFidelity(sim, live *scenarios.Result, tol FidelityTolerances) (*Fidelity, error) {
	if sim.Scenario != live.Scenario {
		return nil, fmt.Errorf("different scenarios: %s and %s", sim.Scenario, live.Scenario)
	}
	if modeOf(sim) != scenarios.ModeSim || modeOf(live) != scenarios.ModeLive {
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
		st.TTR = durCell(ttrCell(s), ttrCell(l), s.Recovered || s.Superseded, l.Recovered || l.Superseded, s.TTR, l.TTR,
			windowed(s.TTR, l.TTR, tol))
		if s.Superseded != l.Superseded {
			st.TTR.Within = false
		}
		f.Steps = append(f.Steps, st)
	}
	return f, nil
}

// windowed is the tolerance of a windowed duration score (TTM, TTR).
func windowed(a, b time.Duration, tol FidelityTolerances) time.Duration {
	return max(tol.Duration, time.Duration(tol.Relative*float64(max(a, b))))
}

func modeOf(r *scenarios.Result) scenarios.Mode {
	if r.Mode == "" {
		return scenarios.ModeSim
	}
	return r.Mode
}

func findFault(r *scenarios.Result, step, target string) *scenarios.FaultScore {
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

func ttdCell(f *scenarios.FaultScore) string {
	switch {
	case f.NotExercised:
		return "not exercised"
	case !f.Detected:
		return "not detected"
	}
	return fmtDur(f.TTD)
}

func ttmCell(f *scenarios.FaultScore) string {
	switch {
	case !f.Impact:
		return "no impact"
	case !f.Mitigated:
		return "not mitigated"
	}
	return fmtDur(f.TTM)
}

func ttrCell(f *scenarios.FaultScore) string {
	switch {
	case f.Superseded:
		return "superseded"
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
	_, err := io.WriteString(w, b.String())
	return err
}
