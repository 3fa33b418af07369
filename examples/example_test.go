package examples_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/brownout-dev/brownout/examples"
)

// WriteStarter writes a mock providers file, a gateway configuration and a
// game day that `brownout gameday run DIR/gameday.yaml` passes as written.
func ExampleWriteStarter() {
	dir, _ := os.MkdirTemp("", "starter")
	defer os.RemoveAll(dir)
	if err := examples.WriteStarter(filepath.Join(dir, "starter")); err != nil {
		fmt.Println(err)
		return
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "starter"))
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// Output:
	// gameday.yaml
	// gateway.yaml
	// providers.yaml
}
