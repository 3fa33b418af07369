package scenarios

import (
	"context"
	"github.com/brownout-dev/brownout/scenarios/score"
	"testing"
)

// runFile loads a scenario file and plays it in sim mode with its own seed.
func runFile(t testing.TB, path string) *score.Result {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// playSim loads a scenario file and plays it in the simulator with its own
// seed, returning the finished simulation (for what Run does not show).
func playSim(tb testing.TB, path string) *sim {
	tb.Helper()
	s, err := Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := newSim(context.Background(), s, s.Seed)
	if err != nil {
		tb.Fatal(err)
	}
	m.run()
	return m
}
