package scenarios

import (
	"context"
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
			res, err := Run(context.Background(), s, Options{Mode: ModeSim})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			requirePass(t, res)
		})
	}
}
