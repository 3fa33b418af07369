package mockprovider_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/brownout-dev/brownout/mockprovider"
)

// TestGenerateJSONSatisfiesSchema validates generated documents with a real
// JSON Schema validator, for many seeds.
func TestGenerateJSONSatisfiesSchema(t *testing.T) {
	files, err := filepath.Glob("testdata/schemas/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
			if err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			c.AssertFormat()
			if err := c.AddResource("schema.json", doc); err != nil {
				t.Fatal(err)
			}
			sch, err := c.Compile("schema.json")
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(5, 6))
			for i := range 200 {
				out := mockprovider.GenerateJSON(raw, r)
				v, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
				if err != nil {
					t.Fatalf("seed step %d: not JSON: %s", i, out)
				}
				if err := sch.Validate(v); err != nil {
					t.Fatalf("step %d: %s\n%v", i, out, err)
				}
			}
		})
	}
}

func TestGenerateJSONDeterministic(t *testing.T) {
	raw, _ := os.ReadFile("testdata/schemas/invoice.json")
	a := mockprovider.GenerateJSON(raw, rand.New(rand.NewPCG(1, 1)))
	b := mockprovider.GenerateJSON(raw, rand.New(rand.NewPCG(1, 1)))
	if a != b {
		t.Fatalf("%s\n%s", a, b)
	}
	if !json.Valid([]byte(mockprovider.GenerateJSON([]byte("not json"), rand.New(rand.NewPCG(1, 1))))) {
		t.Fatal("bad schema gave invalid JSON")
	}
}
