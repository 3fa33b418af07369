package scenarios

import (
	"strings"
	"testing"
)

// TestSimJournal: a simulated run's Result.Journal is the mocks' whole
// journals (made on demand: scoring reads only part of them), an entry per
// attempt that reached a provider.
func TestSimJournal(t *testing.T) {
	res := runFile(t, "testdata/short.yaml")
	js := res.Journal()
	if len(js) == 0 || len(js) != res.Overall.Retry.Attempts {
		t.Fatalf("journal has %d entries, want one per attempt (%d)", len(js), res.Overall.Retry.Attempts)
	}
	for i, j := range js {
		if j.RequestID == "" || !strings.Contains(j.Target, ":") || j.Time.Before(Epoch) {
			t.Fatalf("entry %d = %+v", i, j)
		}
	}
}
