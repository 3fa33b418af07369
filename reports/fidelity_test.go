package reports

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

func TestCompareFidelity(t *testing.T) {
	sim := fixture()
	live := fixture()
	live.Mode = score.ModeLive
	f, err := CompareFidelity(sim, live, DefaultFidelityTolerances)
	require.NoError(t, err)
	require.True(t, f.Agrees(), "a run agrees with itself")
	require.Len(t, f.Steps, len(sim.Faults))

	tests := []struct {
		name   string
		change func(live *score.Result)
		within func(f *Fidelity) bool
		want   bool
	}{
		{"TTD within 1s", func(l *score.Result) { l.Faults[0].TTD += time.Second }, func(f *Fidelity) bool { return f.Steps[0].TTD.Within }, true},
		{"TTD beyond 1s", func(l *score.Result) { l.Faults[0].TTD += 1001 * time.Millisecond }, func(f *Fidelity) bool { return f.Steps[0].TTD.Within }, false},
		{"detected in one engine only", func(l *score.Result) { l.Faults[0].Detected = false }, func(f *Fidelity) bool { return f.Steps[0].TTD.Within }, false},
		{"TTR within 10% of a long one", func(l *score.Result) {
			sim.Faults[0].Recovered, sim.Faults[0].TTR = true, 100*time.Second
			l.Faults[0].Recovered, l.Faults[0].TTR = true, 109*time.Second
		}, func(f *Fidelity) bool { return f.Steps[0].TTR.Within }, true},
		{"TTR beyond 10% of a long one", func(l *score.Result) {
			sim.Faults[0].Recovered, sim.Faults[0].TTR = true, 100*time.Second
			l.Faults[0].Recovered, l.Faults[0].TTR = true, 112*time.Second
		}, func(f *Fidelity) bool { return f.Steps[0].TTR.Within }, false},
		{"superseded in one engine only", func(l *score.Result) { l.Faults[0].Superseded = !sim.Faults[0].Superseded }, func(f *Fidelity) bool { return f.Steps[0].TTR.Within }, false},
		{"availability 1 point apart", func(l *score.Result) { l.Overall.Availability.Success = sim.Overall.Availability.Success - 0.01 }, func(f *Fidelity) bool { return f.Availability.Within }, true},
		{"availability 2 points apart", func(l *score.Result) { l.Overall.Availability.Success = sim.Overall.Availability.Success - 0.02 }, func(f *Fidelity) bool { return f.Availability.Within }, false},
		{"amplification 0.2 apart", func(l *score.Result) { l.Overall.Retry.Amplification = sim.Overall.Retry.Amplification + 0.2 }, func(f *Fidelity) bool { return f.Amplification.Within }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim = fixture()
			live := fixture()
			live.Mode = score.ModeLive
			tt.change(live)
			f, err := CompareFidelity(sim, live, DefaultFidelityTolerances)
			require.NoError(t, err)
			require.Equal(t, tt.want, tt.within(f))
			require.Equal(t, tt.want, f.Agrees())
		})
	}

	other := fixture()
	other.Scenario = "another"
	other.Mode = score.ModeLive
	_, err = CompareFidelity(sim, other, DefaultFidelityTolerances)
	require.ErrorContains(t, err, "different scenarios")
	_, err = CompareFidelity(sim, fixture(), DefaultFidelityTolerances)
	require.ErrorContains(t, err, "want a simulated and a live run")

	var b bytes.Buffer
	bad := fixture()
	bad.Mode = score.ModeLive
	bad.Faults[0].TTD += 5 * time.Second
	fb, err := CompareFidelity(sim, bad, DefaultFidelityTolerances)
	require.NoError(t, err)
	require.NoError(t, WriteFidelity(&b, []*Fidelity{f, fb}))
	require.Contains(t, b.String(), "| game day | availability sim / live |")
	require.Contains(t, b.String(), "| "+sim.Faults[0].Step+" · "+sim.Faults[0].Target+" | ")
	require.Equal(t, 1, bytes.Count(b.Bytes(), []byte("✗")), b.String())
}

func TestCompareFidelitySweep(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	s := func(d time.Duration) *float64 { return v(float64(d)) }
	live := fixture()
	live.Mode = score.ModeLive
	f0 := live.Faults[0]
	sweep := func() *scenarios.Sweep {
		return &scenarios.Sweep{Scenario: live.Scenario, Mode: score.ModeSim, Seeds: []uint64{1, 2, 3, 4},
			Scores: []scenarios.SweepScore{
				{Name: "availability", Unit: "rate", N: 4, Best: v(1), Median: v(0.995), Worst: v(0.99)},
				{Name: "retry_amplification", Unit: "ratio", HigherIsWorse: true, N: 4, Best: v(1.0), Worst: v(1.2)},
				{Name: "ttd", Step: f0.Step, Target: f0.Target, Unit: "duration", HigherIsWorse: true, N: 4, Best: s(2 * time.Second), Worst: s(5 * time.Second)},
				{Name: "ttm", Step: f0.Step, Target: f0.Target, Unit: "duration", HigherIsWorse: true, N: 4, Best: s(0), Worst: s(0)},
				{Name: "ttr", Step: f0.Step, Target: f0.Target, Unit: "duration", HigherIsWorse: true, N: 4, Best: s(50 * time.Second), Worst: s(60 * time.Second)},
			}}
	}
	tests := []struct {
		name  string
		sw    func(*scenarios.Sweep)
		live  func(*score.Result)
		cell  func(*Fidelity) FidelityCell
		want  bool
		shows string
	}{
		{"ttd inside the seeds' range", nil, func(r *score.Result) { r.Faults[0].Detected, r.Faults[0].TTD = true, 4*time.Second },
			func(f *Fidelity) FidelityCell { return f.Steps[0].TTD }, true, "2s–5s"},
		{"ttd within tolerance past the worst", nil, func(r *score.Result) { r.Faults[0].Detected, r.Faults[0].TTD = true, 6*time.Second },
			func(f *Fidelity) FidelityCell { return f.Steps[0].TTD }, true, ""},
		{"ttd beyond", nil, func(r *score.Result) { r.Faults[0].Detected, r.Faults[0].TTD = true, 7*time.Second },
			func(f *Fidelity) FidelityCell { return f.Steps[0].TTD }, false, ""},
		{"not detected live, detected in every seed", nil, func(r *score.Result) { r.Faults[0].Detected = false },
			func(f *Fidelity) FidelityCell { return f.Steps[0].TTD }, false, ""},
		{"not detected live nor in a seed", func(sw *scenarios.Sweep) { sw.Scores[2].Missing, sw.Scores[2].Worst = 1, nil },
			func(r *score.Result) { r.Faults[0].Detected = false },
			func(f *Fidelity) FidelityCell { return f.Steps[0].TTD }, true, "not detected in 1/4 seeds"},
		{"ttr inside", nil, func(r *score.Result) {
			r.Faults[0].Recovered, r.Faults[0].TTR, r.Faults[0].Superseded = true, 55*time.Second, false
		},
			func(f *Fidelity) FidelityCell { return f.Steps[0].TTR }, true, "50s–1m0s"},
		{"ttr within 10% of the worst", nil, func(r *score.Result) {
			r.Faults[0].Recovered, r.Faults[0].TTR, r.Faults[0].Superseded = true, 65*time.Second, false
		},
			func(f *Fidelity) FidelityCell { return f.Steps[0].TTR }, true, ""},
		{"superseded live, never in a seed", nil, func(r *score.Result) { r.Faults[0].Superseded = true },
			func(f *Fidelity) FidelityCell { return f.Steps[0].TTR }, false, ""},
		{"availability below the worst seed", nil, func(r *score.Result) { r.Overall.Availability.Success = 0.97 },
			func(f *Fidelity) FidelityCell { return f.Availability }, false, "100%–99%"},
		{"availability inside", nil, func(r *score.Result) { r.Overall.Availability.Success = 0.992 },
			func(f *Fidelity) FidelityCell { return f.Availability }, true, ""},
		{"amplification past the worst", nil, func(r *score.Result) { r.Overall.Retry.Amplification = 1.4 },
			func(f *Fidelity) FidelityCell { return f.Amplification }, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sw := sweep()
			if tt.sw != nil {
				tt.sw(sw)
			}
			l := fixture()
			l.Mode = score.ModeLive
			tt.live(l)
			f, err := CompareFidelitySweep(sw, l, DefaultFidelityTolerances)
			require.NoError(t, err)
			c := tt.cell(f)
			require.Equal(t, tt.want, c.Within, "%+v", c)
			require.Contains(t, c.Sim, tt.shows)
		})
	}
	_, err := CompareFidelitySweep(sweep(), fixture(), DefaultFidelityTolerances)
	require.ErrorContains(t, err, "want a live run")
}

// TestFidelityFleet: a fleet game day adds fleet rows: attempts per
// request on the faulted primary within the amplification tolerance, the
// worst recovery's trials within one; against a sweep, inside the seeds'
// range widened as much. A fleet in one engine only disagrees.
func TestFidelityFleet(t *testing.T) {
	fleet := func(apr float64, trials int) *score.FleetScore {
		return &score.FleetScore{Replicas: 3, State: "redis", PrimaryAttemptsPerRequest: apr, TrialsPerRecovery: trials}
	}
	cases := []struct {
		name      string
		sim, live *score.FleetScore
		within    []bool
	}{
		{"agree", fleet(0.12, 1), fleet(0.2, 2), []bool{true, true}},
		{"attempts apart", fleet(0.12, 1), fleet(0.5, 1), []bool{false, true}},
		{"trials apart", fleet(0.12, 1), fleet(0.12, 3), []bool{true, false}},
		{"a fleet in one engine only", fleet(0.12, 1), nil, []bool{false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sim, live := fixture(), fixture()
			live.Mode = score.ModeLive
			sim.Fleet, live.Fleet = c.sim, c.live
			f, err := CompareFidelity(sim, live, DefaultFidelityTolerances)
			require.NoError(t, err)
			require.Len(t, f.Fleet, len(c.within))
			for i, w := range c.within {
				require.Equal(t, w, f.Fleet[i].Cell.Within, "%s: %+v", f.Fleet[i].Score, f.Fleet[i].Cell)
			}
			require.Equal(t, !slices.Contains(c.within, false), f.Agrees())
			var b bytes.Buffer
			require.NoError(t, WriteFidelity(&b, []*Fidelity{f}))
			require.Contains(t, b.String(), "| game day | fleet score | sim / live |")
		})
	}
	sim := fixture()
	f, err := CompareFidelity(sim, func() *score.Result { l := fixture(); l.Mode = score.ModeLive; return l }(), DefaultFidelityTolerances)
	require.NoError(t, err)
	require.Nil(t, f.Fleet, "no fleet rows for one gateway")

	v := func(x float64) *float64 { return &x }
	live := fixture()
	live.Mode = score.ModeLive
	live.Fleet = fleet(0.3, 4)
	sw := &scenarios.Sweep{Scenario: live.Scenario, Mode: score.ModeSim, Seeds: []uint64{1, 2},
		Scores: []scenarios.SweepScore{
			{Name: "fleet.primary_attempts_per_request", Unit: "ratio", HigherIsWorse: true, N: 2, Best: v(0.1), Worst: v(0.15)},
			{Name: "fleet.trials_per_recovery", Unit: "count", HigherIsWorse: true, N: 2, Best: v(1), Worst: v(2)},
		}}
	fs, err := CompareFidelitySweep(sw, live, DefaultFidelityTolerances)
	require.NoError(t, err)
	require.Len(t, fs.Fleet, 2)
	require.False(t, fs.Fleet[0].Cell.Within, "0.3 is past 0.15 + 0.1")
	require.False(t, fs.Fleet[1].Cell.Within, "4 trials is past 2 + 1")
	live.Fleet = fleet(0.2, 3)
	fs, err = CompareFidelitySweep(sw, live, DefaultFidelityTolerances)
	require.NoError(t, err)
	require.True(t, fs.Fleet[0].Cell.Within && fs.Fleet[1].Cell.Within, "%+v", fs.Fleet)
}
