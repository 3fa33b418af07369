package scenarios

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMakefileNamesEveryRaceSkip: make test's second pass (without -race)
// runs the tests named in the Makefile's NORACE_TESTS. Every name there
// must still be a test of this package, and every test of this package
// that skips under the race detector must be named there, so no test is
// skipped by the way make test invokes it.
func TestMakefileNamesEveryRaceSkip(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^NORACE_TESTS := (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no NORACE_TESTS line")
	}
	named := strings.Split(strings.TrimSpace(string(m[1])), "|")
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	var raceSkips []string
	fn := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\) \{$`)
	skip := regexp.MustCompile(`raceEnabled[^\n]*\{\n(?:\t[^\n]*\n)*?\t+t\.Skip`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, loc := range fn.FindAllSubmatchIndex(b, -1) {
			name := string(b[loc[2]:loc[3]])
			defined[name] = true
			body := b[loc[1]:]
			if end := strings.Index(string(body), "\n}\n"); end >= 0 {
				body = body[:end]
			}
			if skip.Match(body) {
				raceSkips = append(raceSkips, name)
			}
		}
	}
	for _, n := range named {
		if !defined[n] {
			t.Errorf("Makefile NORACE_TESTS names %s, which is no test of package scenarios", n)
		}
	}
	for _, n := range raceSkips {
		if !slices.Contains(named, n) {
			t.Errorf("%s skips under -race but the Makefile's NORACE_TESTS does not run it without", n)
		}
	}
	if len(raceSkips) < 5 {
		t.Errorf("found only %d tests that skip under -race (%v): the pattern no longer reads the test files", len(raceSkips), raceSkips)
	}
}
