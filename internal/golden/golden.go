// Package golden compares a test's output with a committed file and, run
// with -update, rewrites the file instead: `go test ./pkg -update`, then
// review the diff before committing it. It is for tests only.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files (and other expected outputs) from what the tests produce")

// Update reports whether the test binary runs with -update.
func Update() bool { return *update }

// Check compares got with the file at path (relative to the test's package
// directory). With -update it writes got there, creating directories. A
// missing file or a difference fails t, with a -want +got diff.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	d, err := compare(path, got)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d != "" {
		t.Errorf("%s differs from the golden file (-want +got); run go test -update after checking:\n%s", path, d)
	}
}

// compare returns the -want +got diff of the file at path and got, "" when
// they are equal.
func compare(path string, got []byte) (string, error) {
	want, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return cmp.Diff(string(want), string(got)), nil
}
