package scenarios

import (
	"github.com/brownout-dev/brownout/scenarios/score"
	"slices"
)

// What scoring reads of the simulated mocks' journals.

// journalDigest is what scoring reads of a journal of a run whose log has
// attempt events (so scoring does not take attempts from the journal): the
// targets it names and the requests with a corrupted entry.
type journalDigest struct {
	targets   []string // in the order they first appear
	corrupted map[string]bool
}

func (d *journalDigest) add(target, requestID string, corrupted bool) {
	if n := len(d.targets); n == 0 || d.targets[n-1] != target {
		if !slices.Contains(d.targets, target) {
			d.targets = append(d.targets, target)
		}
	}
	if corrupted {
		if d.corrupted == nil {
			d.corrupted = map[string]bool{}
		}
		d.corrupted[requestID] = true
	}
}

// scoredJournal returns what scoring reads of the mocks' journals, in the
// form Input.JournalTargets describes: the targets they name and the
// entries of the requests with a corrupted entry, in journal order. A
// simulated hour holds hundreds of thousands of entries; scoring needs
// only these.
func (m *sim) scoredJournal() ([]score.JournalEntry, []string) {
	var d journalDigest
	for _, p := range m.s.env.providers {
		m.provs[p.name].DigestJournal(&d)
	}
	var js []score.JournalEntry
	if len(d.corrupted) > 0 {
		for _, p := range m.s.env.providers {
			js = m.provs[p.name].AppendJournalOf(js, d.corrupted)
		}
	}
	return js, d.targets
}

func (m *sim) journal() []score.JournalEntry { return m.journalOf()() }

// journalOf returns a function that makes the mocks' journals, in the
// order of the scenario's providers; it holds the providers only.
func (m *sim) journalOf() func() []score.JournalEntry {
	ps := make([]provider, len(m.s.env.providers))
	for i, p := range m.s.env.providers {
		ps[i] = m.provs[p.name]
	}
	return func() []score.JournalEntry {
		n := 0
		for _, p := range ps {
			n += p.JournalLen()
		}
		out := make([]score.JournalEntry, 0, n)
		for _, p := range ps {
			out = p.AppendJournal(out)
		}
		return out
	}
}
