package scenarios

import (
	"github.com/brownout-dev/brownout/scenarios/score"
	"os"
	"path/filepath"
	"testing"
)

// The simulator skips the refusal scan of answers cut from a provider's
// filler corpus only when the corpus holds none of the configured phrases:
// phrases that filler text does contain ("a" begins "and", "answers",
// "a") still turn its answers into refusals.
func TestFillerRefusalScan(t *testing.T) {
	run := func(refusals string) *score.Result {
		dir := t.TempDir()
		gw := "version: 1\nproviders:\n  - {name: p, kind: openai, base_url: \"http://127.0.0.1:1/v1\"}\n" +
			"routes:\n  - name: chat\n    targets:\n      - {provider: p, model: m}\n" +
			"detectors: {refusals: " + refusals + "}\n"
		sc := "version: 1\nname: filler\nseed: 3\nduration: 30s\n" +
			"providers:\n  inline:\n    - {name: p, format: openai, models: [{name: m, ttft: 100ms, tokens_per_second: 200, output_tokens: {min: 40, max: 80}}]}\n" +
			"gateway: {config: gw.yaml}\ntraffic:\n  - {route: chat, rate: 10/s, stream: 50%}\n"
		for name, text := range map[string]string{"gw.yaml": gw, "s.yaml": sc} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res := runFile(t, filepath.Join(dir, "s.yaml"))
		return res
	}
	quality := func(res *score.Result) (float64, int) {
		for _, tg := range res.Targets {
			if tg.Target == "p:m" {
				return tg.Quality, tg.QualityN
			}
		}
		t.Fatalf("no target p:m in %+v", res.Targets)
		return 0, 0
	}
	if q, n := quality(run(`["i can't help with"]`)); q != 1 || n < 200 {
		t.Errorf("quality with a phrase filler never holds = %v over %d answers, want 1", q, n)
	}
	if q, n := quality(run(`["a"]`)); q > 0.2 || n < 200 {
		t.Errorf("quality with a phrase every filler answer holds = %v over %d answers, want about 0", q, n)
	}
}
