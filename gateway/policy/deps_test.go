package policy

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDependencies checks that the core links no network or global random
// source. fmt (and yamlfile) pull os in transitively, which cannot be
// avoided, so only a direct import of os is forbidden; see
// TestNoDirectImports.
func TestDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not in PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/brownout-dev/brownout/gateway/policy")
	for _, bad := range []string{"net", "net/http", "math/rand", "os/exec", "syscall/js"} {
		require.NotContains(t, deps, bad, "gateway/policy must not depend on %s", bad)
	}
}

// TestNoDirectImports scans the package's non-test files: no direct import of
// os, net, net/http or math/rand, and no call of time.Now or time.Sleep
// (time is an argument in the core).
func TestNoDirectImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	forbiddenImports := map[string]bool{"os": true, "net": true, "net/http": true, "math/rand": true}
	forbiddenCalls := []string{"time.Now", "time.Sleep", "time.After", "time.Tick", "time.NewTimer", "time.NewTicker", "time.Since", "time.Until"}
	scanned := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		scanned++
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		fs := token.NewFileSet()
		af, err := parser.ParseFile(fs, f, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			require.False(t, forbiddenImports[p], "%s imports %s", f, p)
		}
		for _, c := range forbiddenCalls {
			require.NotContains(t, string(src), c+"(", "%s calls %s", f, c)
		}
	}
	require.Positive(t, scanned)
}
