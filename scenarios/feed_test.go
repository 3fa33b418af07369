package scenarios

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// TestFeedMatchesScore: the simulator's results, scored as the log was
// written, equal Score's on the finished log, for every example game day
// (a log that uses a request id twice: TestFeedReusedRequestID).
func TestFeedMatchesScore(t *testing.T) {
	files, err := filepath.Glob("../examples/gamedays/*.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("example game days: %v %v", files, err)
	}
	for _, f := range append(files, "testdata/lean.yaml") {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if (raceEnabled || testing.Short()) && filepath.Base(f) != "primary-429-storm.yaml" {
				t.Skip("the simulator is single-goroutine: under -race or -short only the flagship runs")
			}
			m := playSim(t, f)
			in := m.input()
			got, want := m.score.Score(in), score.Score(in)
			if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(score.Result{})); d != "" {
				t.Errorf("fed scores differ (-Score +feed):\n%s", d)
			}
			// The whole journal scores as the part the simulator passes.
			full := in
			full.Journal, full.JournalTargets = m.journal(), nil
			if d := cmp.Diff(score.Score(full), want, cmpopts.IgnoreUnexported(score.Result{})); d != "" {
				t.Errorf("scores differ (-whole journal +scored part):\n%s", d)
			}
			if in.JournalTargets == nil || len(in.Journal) >= len(full.Journal) {
				t.Errorf("scored journal: %d of %d entries, targets %v", len(in.Journal), len(full.Journal), in.JournalTargets)
			}
			if want.Overall.Availability.Requests == 0 {
				t.Error("no requests scored")
			}
		})
	}
}
