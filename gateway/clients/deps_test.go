package clients

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPure: the accounting does no I/O and reads no clock (time is an
// argument), so a simulator or a shared store can drive it.
func TestPure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			require.NotContains(t, []string{"os", "net", "net/http", "math/rand", "math/rand/v2"}, p, "%s imports %s", f, p)
		}
		for _, c := range []string{"time.Now(", "time.Sleep(", "time.Since(", "time.Until(", "time.After(", "time.NewTimer("} {
			require.NotContains(t, string(src), c, "%s calls %s", f, c)
		}
	}
}
