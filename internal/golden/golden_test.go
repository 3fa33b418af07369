package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// -update writes the file (and its directory); then equal bytes compare
// clean, different bytes give a diff naming the change, and a missing file
// is an error.
func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b.txt")
	if _, err := compare(path, []byte("x")); err == nil {
		t.Fatal("a missing golden file compared without error")
	}
	*update = true
	Check(t, path, []byte("hello\n"))
	*update = false
	if b, err := os.ReadFile(path); err != nil || string(b) != "hello\n" {
		t.Fatalf("-update wrote %q, %v", b, err)
	}
	Check(t, path, []byte("hello\n"))
	if d, err := compare(path, []byte("help\n")); err != nil || d == "" {
		t.Fatalf("different bytes: diff %q, err %v", d, err)
	}
}
