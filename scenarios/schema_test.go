package scenarios

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite golden files")

const schemaFile = "../examples/gamedays/scenario.schema.json"

// TestSchemaGolden keeps the published schema in step with Schema()
// (go test ./scenarios -run TestSchemaGolden -update).
func TestSchemaGolden(t *testing.T) {
	got := Schema()
	if *update {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go test ./scenarios -run TestSchemaGolden -update", schemaFile)
	}
}

// TestSchemaAcceptsLibraryRejectsTypos: every game day of the library
// validates against the schema, and a misspelt field does not.
func TestSchemaAcceptsLibraryRejectsTypos(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("scenario.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("scenario.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	toJSON := func(t *testing.T, src []byte) any {
		t.Helper()
		var v any
		if err := yaml.Unmarshal(src, &v); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return inst
	}
	files, _ := filepath.Glob("../examples/gamedays/*.yaml")
	files = append(files, "testdata/short.yaml", "testdata/fidelity.yaml")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(toJSON(t, src)); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		})
	}
	t.Run("typo", func(t *testing.T) {
		src, _ := os.ReadFile("testdata/short.yaml")
		src = bytes.Replace(src, []byte("timeline:"), []byte("timelin:"), 1)
		if err := sch.Validate(toJSON(t, src)); err == nil {
			t.Fatal("a misspelt field validated")
		}
	})
}
