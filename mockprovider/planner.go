package mockprovider

import (
	"iter"
	"math/rand/v2"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

// plannerMemo bounds the message texts a Planner remembers.
const plannerMemo = 1 << 14

// Planner is a provider's behaviour for one goroutine, such as the game-day
// simulator's event loop. It plans exactly what a Model with the same spec
// and source plans for the same requests in the same order (a test holds
// the two to each other), but faster: it takes no lock, remembers the
// prompts it has seen (token estimates, prompt-cache hashes), and plans
// into memory the caller owns (PlanInto), so a caller that reuses its plans
// allocates no token times per request. Its methods must not be called
// concurrently; servers use a Model.
type Planner struct {
	m *Model
}

// NewPlanner builds a Planner from spec; rnd is its seeded source (nil:
// from spec.Seed, as NewModel).
func NewPlanner(spec ProviderSpec, rnd *rand.Rand) (*Planner, error) {
	m, err := NewModel(spec, rnd)
	if err != nil {
		return nil, err
	}
	m.solo = true
	m.memo = newPromptMemo(plannerMemo)
	return &Planner{m: m}, nil
}

// PlanInto plans req arriving at now into p, as Model.Plan plans a new
// one. p is overwritten; its token-time and tool-start buffers are reused.
// The caller may reuse p for another request once it has finished this one
// (Finish, FinishSent) and reads nothing of it any more.
func (pl *Planner) PlanInto(p *Plan, now time.Time, req *llm.Request, meta Meta) {
	starts, times := p.ToolStart[:0], p.TokenTimes
	*p = *faults.NewPlan()
	p.ToolStart, p.TokenTimes = starts, times
	pl.m.plan(p, now, req, meta, true)
}

// Finish ends an attempt as planned (Model.Finish).
func (pl *Planner) Finish(now time.Time, p *Plan) { pl.m.Finish(now, p) }

// FinishSent ends an attempt with what happened (Model.FinishSent).
func (pl *Planner) FinishSent(now time.Time, p *Plan, o Outcome, sent int) {
	pl.m.FinishSent(now, p, o, sent)
}

// AddFault activates a fault from now on (Model.AddFault).
func (pl *Planner) AddFault(now time.Time, f faults.Spec) (string, error) {
	return pl.m.AddFault(now, f)
}

// RemoveFault deactivates a fault (Model.RemoveFault).
func (pl *Planner) RemoveFault(id string) bool { return pl.m.RemoveFault(id) }

// FillerCorpus is the text filler answers are windows of (Model.FillerCorpus).
func (pl *Planner) FillerCorpus() string { return pl.m.FillerCorpus() }

// JournalLen returns the number of journal entries.
func (pl *Planner) JournalLen() int { return pl.m.JournalLen() }

// JournalEntries iterates over the journal, oldest first.
func (pl *Planner) JournalEntries() iter.Seq[JournalEntry] { return pl.m.JournalEntries() }

// Journal returns a copy of the journal, oldest first.
func (pl *Planner) Journal() []JournalEntry { return pl.m.Journal() }
