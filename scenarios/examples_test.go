package scenarios

import (
	"context"
	"github.com/brownout-dev/brownout/scenarios/score"
	"path/filepath"
	"testing"
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
