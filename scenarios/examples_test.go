package scenarios

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios/score"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TestGameDayLibrary runs every game day in examples/gamedays in sim mode;
// each must meet its own expectations.
func TestGameDayLibrary(t *testing.T) {
	files, err := filepath.Glob("../examples/gamedays/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no game days found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if (raceEnabled || testing.Short()) && filepath.Base(f) != "primary-429-storm.yaml" {
				t.Skip("the simulator is single-goroutine: under -race or -short only the flagship runs")
			}
			s, err := Load(f)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			res, err := Run(context.Background(), s, Options{Mode: score.ModeSim})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			requirePass(t, res)
		})
	}
}

// TestGameDayLibrarySeeds: every example game day holds its expectations
// over several seeds, not only the one it names — a live run is a new draw
// of what the scenario leaves to chance, and an example that passes by its
// seed's luck fails there.
func TestGameDayLibrarySeeds(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("the seed sweeps of every example run in make test's pass without -race")
	}
	files, err := filepath.Glob("../examples/gamedays/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no game days found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := Load(f)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			sw, err := RunSweep(context.Background(), s, 4)
			if err != nil {
				t.Fatalf("sweep: %v", err)
			}
			for _, e := range sw.Expectations {
				if !e.Pass {
					t.Errorf("%s %s %s %s: held in %d of %d seeds", e.Name, e.Step, e.Target, e.Want, e.Passed, e.N)
				}
			}
		})
	}
}

// TestFalseAlarmSLA: sla-tighter-than-normal's false alarms come from its
// SLA, not from the scoring: the demotions it counts are health's, for
// sla_first_token, on a run with no fault; the same traffic with the SLA
// at 1s raises none and keeps the primary in traffic.
func TestFalseAlarmSLA(t *testing.T) {
	s, err := Load("../examples/gamedays/sla-tighter-than-normal.yaml")
	require.NoError(t, err)
	res, err := Run(context.Background(), s, Options{})
	require.NoError(t, err)
	require.NotEmpty(t, res.Overall.FalseAlarms)
	for _, a := range res.Overall.FalseAlarms {
		require.Equal(t, "health", a.Source, "%+v", a)
		require.Equal(t, "sla_first_token", a.Reason, "%+v", a)
		require.Equal(t, "openai:gpt-4o", a.Target)
	}
	s.Gateway.Routes[0].Targets[0].SLA.FirstToken = yamlfile.Duration(time.Second)
	res, err = Run(context.Background(), s, Options{})
	require.NoError(t, err)
	require.Empty(t, res.Overall.FalseAlarms)
	tg, ok := res.Target("openai/gpt-4o")
	require.True(t, ok)
	require.Zero(t, tg.UnnecessaryFallback)
}
