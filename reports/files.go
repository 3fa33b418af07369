package reports

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// File names WriteFiles writes next to result.json.
const (
	HTMLFile     = "report.html"
	MarkdownFile = "report.md"
	JUnitFile    = "junit.xml"
)

// WriteFiles writes report.html, report.md and junit.xml into dir. It
// writes every file it can and returns the errors of those it could not.
func WriteFiles(dir string, r *score.Result) error {
	var errs []error
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{HTMLFile, func(b *bytes.Buffer) error { return WriteHTML(b, r) }},
		{MarkdownFile, func(b *bytes.Buffer) error { return WriteMarkdown(b, r) }},
		{JUnitFile, func(b *bytes.Buffer) error { return WriteJUnit(b, r) }},
	} {
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), buf.Bytes(), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
