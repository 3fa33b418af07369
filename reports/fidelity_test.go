package reports

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios"
)

func TestCompareFidelity(t *testing.T) {
	sim := fixture()
	live := fixture()
	live.Mode = scenarios.ModeLive
	f, err := CompareFidelity(sim, live, DefaultFidelityTolerances)
	require.NoError(t, err)
	require.True(t, f.Agrees(), "a run agrees with itself")
	require.Len(t, f.Steps, len(sim.Faults))

	tests := []struct {
		name   string
		change func(live *scenarios.Result)
		within func(f *Fidelity) bool
		want   bool
	}{
		{"TTD within 1s", func(l *scenarios.Result) { l.Faults[0].TTD += time.Second }, func(f *Fidelity) bool { return f.Steps[0].TTD.Within }, true},
		{"TTD beyond 1s", func(l *scenarios.Result) { l.Faults[0].TTD += 1001 * time.Millisecond }, func(f *Fidelity) bool { return f.Steps[0].TTD.Within }, false},
		{"detected in one engine only", func(l *scenarios.Result) { l.Faults[0].Detected = false }, func(f *Fidelity) bool { return f.Steps[0].TTD.Within }, false},
		{"TTR within 10% of a long one", func(l *scenarios.Result) {
			sim.Faults[0].Recovered, sim.Faults[0].TTR = true, 100*time.Second
			l.Faults[0].Recovered, l.Faults[0].TTR = true, 109*time.Second
		}, func(f *Fidelity) bool { return f.Steps[0].TTR.Within }, true},
		{"TTR beyond 10% of a long one", func(l *scenarios.Result) {
			sim.Faults[0].Recovered, sim.Faults[0].TTR = true, 100*time.Second
			l.Faults[0].Recovered, l.Faults[0].TTR = true, 112*time.Second
		}, func(f *Fidelity) bool { return f.Steps[0].TTR.Within }, false},
		{"superseded in one engine only", func(l *scenarios.Result) { l.Faults[0].Superseded = !sim.Faults[0].Superseded }, func(f *Fidelity) bool { return f.Steps[0].TTR.Within }, false},
		{"availability 1 point apart", func(l *scenarios.Result) { l.Overall.Availability.Success = sim.Overall.Availability.Success - 0.01 }, func(f *Fidelity) bool { return f.Availability.Within }, true},
		{"availability 2 points apart", func(l *scenarios.Result) { l.Overall.Availability.Success = sim.Overall.Availability.Success - 0.02 }, func(f *Fidelity) bool { return f.Availability.Within }, false},
		{"amplification 0.2 apart", func(l *scenarios.Result) { l.Overall.Retry.Amplification = sim.Overall.Retry.Amplification + 0.2 }, func(f *Fidelity) bool { return f.Amplification.Within }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim = fixture()
			live := fixture()
			live.Mode = scenarios.ModeLive
			tt.change(live)
			f, err := CompareFidelity(sim, live, DefaultFidelityTolerances)
			require.NoError(t, err)
			require.Equal(t, tt.want, tt.within(f))
			require.Equal(t, tt.want, f.Agrees())
		})
	}

	other := fixture()
	other.Scenario = "another"
	other.Mode = scenarios.ModeLive
	_, err = CompareFidelity(sim, other, DefaultFidelityTolerances)
	require.ErrorContains(t, err, "different scenarios")
	_, err = CompareFidelity(sim, fixture(), DefaultFidelityTolerances)
	require.ErrorContains(t, err, "want a simulated and a live run")

	var b bytes.Buffer
	bad := fixture()
	bad.Mode = scenarios.ModeLive
	bad.Faults[0].TTD += 5 * time.Second
	fb, err := CompareFidelity(sim, bad, DefaultFidelityTolerances)
	require.NoError(t, err)
	require.NoError(t, WriteFidelity(&b, []*Fidelity{f, fb}))
	require.Contains(t, b.String(), "| game day | availability sim / live |")
	require.Contains(t, b.String(), "| "+sim.Faults[0].Step+" · "+sim.Faults[0].Target+" | ")
	require.Equal(t, 1, bytes.Count(b.Bytes(), []byte("✗")), b.String())
}
