package mockprovider_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// EachJournal visits the entries Journal copies, in the same order, also
// once the bounded journal has dropped its oldest entries.
func TestEachJournal(t *testing.T) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.JournalSize = 1500 // over one storage block, and dropping
	m := newModel(t, s)
	for range 4000 {
		p := m.Plan(t0, userReq("gpt-4o", "hi"), mockprovider.Meta{})
		m.Finish(t0, p)
	}
	want := m.Journal()
	var got []mockprovider.JournalEntry
	m.EachJournal(func(e *mockprovider.JournalEntry) { got = append(got, *e) })
	if m.JournalLen() != len(want) || len(want) == 0 || want[len(want)-1].Seq != 4000 {
		t.Fatalf("JournalLen %d, Journal %d entries", m.JournalLen(), len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("EachJournal (-Journal +EachJournal):\n%s", diff)
	}
}
