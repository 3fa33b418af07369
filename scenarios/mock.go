package scenarios

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// simJournalSize keeps every attempt of a long simulated run.
const simJournalSize = 50_000_000

// mockModel adapts a mockprovider.Planner to the simulator: its one event
// loop is the planner's only user.
type mockModel struct {
	m *mockprovider.Planner
}

func newMockProvider(spec mockprovider.ProviderSpec, rnd *rand.Rand) (provider, error) {
	if spec.JournalSize == 0 {
		spec.JournalSize = simJournalSize
	}
	m, err := mockprovider.NewPlanner(spec, rnd)
	if err != nil {
		return nil, err
	}
	return &mockModel{m: m}, nil
}

func (a *mockModel) PlanInto(p *faults.Plan, now time.Time, req *llm.Request, id string) {
	a.m.PlanInto(p, now, req, mockprovider.Meta{RequestID: id, Stream: req.Stream})
}

func (a *mockModel) AddFault(now time.Time, f faults.Spec) (string, error) {
	return a.m.AddFault(now, f)
}

func (a *mockModel) RemoveFault(id string) { a.m.RemoveFault(id) }

func (a *mockModel) Finish(now time.Time, p *faults.Plan) { a.m.Finish(now, p) }

func (a *mockModel) Abandon(now time.Time, p *faults.Plan, sent int) {
	a.m.FinishSent(now, p, mockprovider.OutcomeClientGone, sent)
}

// AppendJournal appends the journal, converted, to dst.
func (a *mockModel) AppendJournal(dst []score.JournalEntry) []score.JournalEntry {
	dst = slices.Grow(dst, a.m.JournalLen())
	var keys targetKeys
	for j := range a.m.JournalEntries() {
		dst = append(dst, journalEntry(&j, &keys))
	}
	return dst
}

// DigestJournal adds the journal to d.
func (a *mockModel) DigestJournal(d *journalDigest) {
	var keys targetKeys
	for j := range a.m.JournalEntries() {
		d.add(keys.key(j.Provider, j.Model), j.RequestID, j.Corrupted)
	}
}

// AppendJournalOf appends the entries of the requests in ids, converted,
// to dst.
func (a *mockModel) AppendJournalOf(dst []score.JournalEntry, ids map[string]bool) []score.JournalEntry {
	var keys targetKeys
	for j := range a.m.JournalEntries() {
		if ids[j.RequestID] {
			dst = append(dst, journalEntry(&j, &keys))
		}
	}
	return dst
}

func (a *mockModel) FillerCorpus() string { return a.m.FillerCorpus() }

// JournalLen returns the number of journal entries.
func (a *mockModel) JournalLen() int { return a.m.JournalLen() }

func convertJournal(js []mockprovider.JournalEntry) []score.JournalEntry {
	out := make([]score.JournalEntry, len(js))
	var keys targetKeys
	for i := range js {
		out[i] = journalEntry(&js[i], &keys)
	}
	return out
}

// targetKeys builds each provider:model key of a journal once: a journal
// names a handful of targets, and consecutive entries mostly the same one
// (a journal's strings are shared, so the comparisons are of equal
// pointers).
type targetKeys struct {
	last int
	keys []targetKey
}

type targetKey struct{ provider, model, key string }

func (t *targetKeys) key(provider, model string) string {
	if t.last < len(t.keys) {
		if k := &t.keys[t.last]; k.model == model && k.provider == provider {
			return k.key
		}
	}
	for i := range t.keys {
		if k := &t.keys[i]; k.model == model && k.provider == provider {
			t.last = i
			return k.key
		}
	}
	t.last = len(t.keys)
	t.keys = append(t.keys, targetKey{provider, model, provider + ":" + model})
	return t.keys[t.last].key
}

func journalEntry(j *mockprovider.JournalEntry, keys *targetKeys) score.JournalEntry {
	return score.JournalEntry{Time: j.Time, RequestID: j.RequestID, Target: keys.key(j.Provider, j.Model),
		Fault: j.Fault, Outcome: string(j.Outcome), OutputTokens: j.TokensSent, Corrupted: j.Corrupted,
		InputTokens: j.PromptTokens, CachedTokens: j.CachedTokens}
}
