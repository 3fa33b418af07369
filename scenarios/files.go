package scenarios

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brownout-dev/brownout/yamlfile"
)

// missingFile reports, at field, a file the scenario names (name, relative
// to the scenario's directory) that does not exist: the path it resolved to
// and the file in that directory it may have meant. It returns whether the
// file is missing.
func (s *Scenario) missingFile(field, name string, addErr func(error)) bool {
	p := s.rel(name)
	if _, err := os.Stat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
		return false
	}
	addErr(s.doc.Errorf(field, "%s: no such file (looked for %s)%s", name, p, nearbyFiles(name, p)))
	return true
}

// nearbyFiles is what to say after "no such file" about p (name as
// written): the file of its directory it may have meant, the files with its
// extension there, or that the directory does not exist.
func nearbyFiles(name, p string) string {
	msg := ""
	dir, ext := filepath.Dir(p), filepath.Ext(p)
	entries, err := os.ReadDir(dir)
	var files, same []string // every file; those with name's extension
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			files = append(files, e.Name())
			if filepath.Ext(e.Name()) == ext {
				same = append(same, e.Name())
			}
		}
	}
	switch {
	case err != nil:
		msg += fmt.Sprintf("; the directory %s does not exist", dir)
	case yamlfile.Suggest(filepath.Base(p), files) != "":
		msg += fmt.Sprintf("; did you mean %s?", filepath.Join(filepath.Dir(name), yamlfile.Suggest(filepath.Base(p), files)))
	case len(same) == 0:
		msg += fmt.Sprintf("; %s holds no %s file", dir, cmp.Or(ext, "such"))
	default:
		if len(same) > 6 {
			same = append(same[:6], "...")
		}
		msg += fmt.Sprintf("; %s holds %s", dir, strings.Join(same, ", "))
	}
	return msg
}

// readPrompts reads a JSON lines file of prompts: each line a JSON string or
// an object with a "prompt" field.
func readPrompts(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var str string
		if err := json.Unmarshal(b, &str); err == nil {
			out = append(out, str)
			continue
		}
		var obj struct {
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal(b, &obj); err != nil || obj.Prompt == "" {
			return nil, fmt.Errorf("%s:%d: want a JSON string or {\"prompt\": \"...\"}", path, line)
		}
		out = append(out, obj.Prompt)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no prompts", path)
	}
	return out, nil
}
