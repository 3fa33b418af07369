package scenarios

import (
	"math/rand/v2"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// simJournalSize keeps every attempt of a long simulated run.
const simJournalSize = 50_000_000

// simPromptMemo bounds the message texts a simulated provider remembers.
const simPromptMemo = 1 << 14

// mockModel adapts mockprovider.Model to the simulator.
type mockModel struct {
	m *mockprovider.Model
}

func newMockProvider(spec mockprovider.ProviderSpec, rnd *rand.Rand) (provider, error) {
	if spec.JournalSize == 0 {
		spec.JournalSize = simJournalSize
	}
	m, err := mockprovider.NewModel(spec, rnd)
	if err != nil {
		return nil, err
	}
	// The simulator draws prompts from a fixed set: remember their token
	// counts and prompt-cache hashes (plans are unchanged).
	m.MemoizePrompts(simPromptMemo)
	return &mockModel{m: m}, nil
}

func (a *mockModel) Plan(now time.Time, req *llm.Request, id string) *faults.Plan {
	return a.m.Plan(now, req, mockprovider.Meta{RequestID: id, Stream: req.Stream})
}

func (a *mockModel) AddFault(now time.Time, f faults.Spec) string {
	id, err := a.m.AddFault(now, f)
	if err != nil {
		return ""
	}
	return id
}

func (a *mockModel) RemoveFault(id string) { a.m.RemoveFault(id) }

func (a *mockModel) Finish(now time.Time, p *faults.Plan) { a.m.Finish(now, p) }

func (a *mockModel) Abandon(now time.Time, p *faults.Plan, sent int) {
	a.m.FinishSent(now, p, mockprovider.OutcomeClientGone, sent)
}

func (a *mockModel) Journal() []JournalEntry { return convertJournal(a.m.Journal()) }

func convertJournal(js []mockprovider.JournalEntry) []JournalEntry {
	out := make([]JournalEntry, len(js))
	// A journal names a handful of targets: build each key once.
	type pm struct{ provider, model string }
	keys := map[pm]string{}
	for i, j := range js {
		k, ok := keys[pm{j.Provider, j.Model}]
		if !ok {
			k = j.Provider + ":" + j.Model
			keys[pm{j.Provider, j.Model}] = k
		}
		out[i] = JournalEntry{Time: j.Time, RequestID: j.RequestID, Target: k,
			Fault: j.Fault, Outcome: string(j.Outcome), OutputTokens: j.TokensSent, Corrupted: j.Corrupted}
	}
	return out
}
