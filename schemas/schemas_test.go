package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/internal/golden"
)

// The committed files are what the generator makes from the Go types today.
func TestSchemasUpToDate(t *testing.T) {
	for _, f := range generated {
		t.Run(f.name, func(t *testing.T) {
			want, err := generate(f)
			require.NoError(t, err)
			again, err := generate(f)
			require.NoError(t, err)
			require.Equal(t, string(want), string(again), "generation is not deterministic")
			checkFresh(t, f.name, want)
		})
	}
	t.Run("suite", func(t *testing.T) { checkFresh(t, "suite", evals.SuiteSchema) })
}

func checkFresh(t *testing.T, name string, want []byte) {
	t.Helper()
	path := name + ".schema.json"
	if golden.Update() {
		require.NoError(t, os.WriteFile(path, want, 0o644))
		return
	}
	got, err := Get(name)
	require.NoError(t, err)
	if !bytes.Equal(got, want) {
		t.Fatalf("schemas/%s is stale (the Go types changed): run `go test ./schemas -update` and commit it\n%s",
			path, firstDiff(string(got), string(want)))
	}
}

// firstDiff shows the first line where committed and generated differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n  committed: %s\n  generated: %s", i+1, gl, wl)
		}
	}
	return ""
}

func compile(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	return compileAs(t, name, jsonschema.Draft2020)
}

// compileAs compiles a schema as draft; any draft but 2020-12 drops the
// $schema keyword first. Editors' YAML language server validates with a
// draft-07 engine, so the schemas must mean the same under draft-07.
func compileAs(t *testing.T, name string, draft *jsonschema.Draft) *jsonschema.Schema {
	t.Helper()
	b, err := Get(name)
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	if draft != jsonschema.Draft2020 {
		delete(doc.(map[string]any), "$schema")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(draft)
	c.AssertFormat()
	url := name + ".schema.json"
	require.NoError(t, c.AddResource(url, doc))
	s, err := c.Compile(url)
	require.NoError(t, err)
	return s
}

// yamlAsJSON converts YAML to the JSON value an editor's language server
// validates (anchors resolved, scalars typed as YAML 1.2 core).
func yamlAsJSON(t *testing.T, src []byte) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal(src, &v))
	b, err := json.Marshal(v)
	require.NoError(t, err)
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	return out
}

// schemaComment is the editor hint on an example's first lines.
var schemaComment = regexp.MustCompile(`(?m)^# yaml-language-server: \$schema=(\S+)$`)

// kindOf says which schema an example file follows, by where it lives.
func kindOf(path string) string {
	dir, base := filepath.Base(filepath.Dir(path)), filepath.Base(path)
	switch {
	case dir == "providers" || strings.HasPrefix(base, "providers"):
		return "providers"
	case dir == "gateway" || strings.HasPrefix(base, "gateway"):
		return "gateway"
	case dir == "gamedays":
		return "scenario"
	case dir == "evals":
		return "suite"
	}
	return ""
}

// Every example file validates against its schema.
func TestExamplesValidate(t *testing.T) {
	var files []string
	for _, dir := range []string{"gateway", "providers", "gamedays", "evals"} {
		err := filepath.WalkDir(filepath.Join("..", "examples", dir), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return nil
		})
		require.NoError(t, err)
	}
	require.NotEmpty(t, files)
	compiled := map[string]*jsonschema.Schema{}
	draft7 := map[string]*jsonschema.Schema{}
	for _, name := range Names() {
		compiled[name] = compile(t, name)
		draft7[name] = compileAs(t, name, jsonschema.Draft7)
	}
	for _, p := range files {
		t.Run(filepath.ToSlash(strings.TrimPrefix(p, "../")), func(t *testing.T) {
			kind := kindOf(p)
			require.NotEmpty(t, kind, "no schema for %s: teach kindOf where it belongs", p)
			src, err := os.ReadFile(p)
			require.NoError(t, err)
			if m := schemaComment.FindSubmatch(src); m != nil {
				require.Equal(t, kind+".schema.json", filepath.Base(string(m[1])), "the $schema comment names another schema")
				target := filepath.Join(filepath.Dir(p), filepath.FromSlash(string(m[1])))
				_, err := os.Stat(target)
				require.NoError(t, err, "the $schema comment's path does not resolve")
			}
			doc := yamlAsJSON(t, src)
			require.NoError(t, compiled[kind].Validate(doc))
			require.NoError(t, draft7[kind].Validate(doc), "as draft-07")
		})
	}
}

// Get hands out copies: a caller cannot change what the next one gets.
func TestGetReturnsCopies(t *testing.T) {
	for _, name := range Names() {
		a, err := Get(name)
		require.NoError(t, err)
		require.True(t, json.Valid(a), name)
		a[0] = 'X'
		b, err := Get(name)
		require.NoError(t, err)
		require.Equal(t, byte('{'), b[0], name)
	}
	_, err := Get("Gateway")
	require.ErrorIs(t, err, ErrUnknown)
}
