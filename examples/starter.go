package examples

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed starter/*.yaml
var starter embed.FS

// StarterFiles are the files WriteStarter writes, in order.
var StarterFiles = []string{"providers.yaml", "gateway.yaml", "gameday.yaml"}

// ErrExists is returned by WriteStarter when a file it would write exists.
var ErrExists = errors.New("file exists")

// WriteStarter writes the starter (StarterFiles) into dir, creating it. It
// overwrites nothing: when one of the files exists it writes none and
// returns an error wrapping ErrExists naming it.
func WriteStarter(dir string) error {
	for _, name := range StarterFiles {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("%s: %w (brownout init overwrites nothing)", p, ErrExists)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range StarterFiles {
		data, err := starter.ReadFile("starter/" + name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
