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

// ioFree are the packages held to the core's rules: the core itself and
// the request lifecycle both engines drive around it.
var ioFree = []string{".", "../lifecycle"}

// TestDependencies checks that the core (and the lifecycle) links no
// network or global random source. fmt (and yamlfile) pull os in transitively, which cannot be
// avoided, so only a direct import of os is forbidden; see
// TestNoDirectImports.
func TestDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not in PATH")
	}
	for _, dir := range ioFree {
		out, err := exec.Command(gobin, "list", "-deps", dir).Output()
		require.NoError(t, err)
		deps := strings.Fields(string(out))
		require.Contains(t, deps, "github.com/brownout-dev/brownout/gateway/policy")
		for _, bad := range []string{"net", "net/http", "math/rand", "os/exec", "syscall/js"} {
			require.NotContains(t, deps, bad, "%s must not depend on %s", dir, bad)
		}
	}
}

// TestNoDirectImports scans the package's non-test files: no direct import of
// os, net, net/http or math/rand, and no call of time.Now or time.Sleep
// (time is an argument in the core).
func TestNoDirectImports(t *testing.T) {
	var files []string
	for _, dir := range ioFree {
		fs, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		files = append(files, fs...)
	}
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
