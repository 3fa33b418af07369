package mockprovider_test

import (
	"strings"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

func TestLoadExample(t *testing.T) {
	specs, err := mockprovider.LoadFile("../examples/providers/three-providers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	formats := map[llm.Format]int{}
	for _, s := range specs {
		formats[s.Format]++
		if len(s.Models) != 2 || s.Models[0].Price.InputPerMTok == 0 {
			t.Errorf("%s: %+v", s.Name, s.Models)
		}
		if _, err := mockprovider.NewModel(s, nil); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
	if formats[llm.FormatOpenAI] != 1 || formats[llm.FormatAnthropic] != 1 || formats[llm.FormatGemini] != 1 {
		t.Fatalf("formats %v", formats)
	}
}

func TestLoadFlakyExample(t *testing.T) {
	specs, err := mockprovider.LoadFile("../examples/providers/flaky-openai.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := mockprovider.NewModel(specs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Faults()); got != 5 {
		t.Fatalf("%d faults", got)
	}
	at := func(d time.Duration) string {
		req := userReq("gpt-4o", "hi")
		req.Stream = true
		p := m.Plan(t0.Add(d), req, mockprovider.Meta{})
		m.Finish(t0.Add(d), p)
		return p.Fault
	}
	if f := at(0); f != "" {
		t.Fatalf("first request: %q", f)
	}
	if f := at(30 * time.Second); f != "" {
		t.Fatalf("at 30s: %q", f)
	}
	if f := at(3*time.Minute + 30*time.Second); !strings.HasPrefix(f, "stall") {
		t.Fatalf("at 3m30s: %q", f)
	}
	if f := at(10 * time.Minute); f != "" {
		t.Fatalf("at 10m: %q", f)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"testdata/specs/bad.yaml", []string{
			`bad.yaml:4:13: providers.0.format: unknown format "openapi"`,
			`bad.yaml:7:33: providers.0.models.0.ttft.p99: must be at least the median`,
			`bad.yaml:9:36: providers.0.faults.0.status: must be an error status`,
			`bad.yaml:10:26: providers.0.faults.1.for: does not apply to cut`,
			`bad.yaml:11:11: providers.1.name: duplicate provider name "openai"`,
			`bad.yaml:13:13: providers.1.models: at least one model is required`,
			`bad.yaml:15:16: providers.1.rules.0.regex: error parsing regexp`,
		}},
		{"testdata/specs/bad_percent.yaml", []string{`bad_percent.yaml:7:17: providers.0.models.0.jitter: 150% is not a percentage between 0% and 100%`}},
		{"testdata/specs/unknown_field.yaml", []string{`unknown_field.yaml:7:9: tokens_per_sec: unknown field`}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := mockprovider.LoadFile(tt.file)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("missing %q in:\n%v", w, err)
				}
			}
		})
	}
}
