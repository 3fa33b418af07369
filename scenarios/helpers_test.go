package scenarios

import (
	"context"
	"testing"
)

// runFile loads a scenario file and plays it in sim mode with its own seed.
func runFile(t testing.TB, path string) *Result {
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
