package mockprovider

import (
	"time"

	"github.com/brownout-dev/brownout/llm"
)

// Outcome is how an attempt ended, as the provider saw it.
type Outcome string

// Outcomes.
const (
	OutcomePending    Outcome = "pending"     // not finished yet
	OutcomeOK         Outcome = "ok"          // a complete 2xx answer (possibly corrupted: see Corrupted)
	OutcomeError      Outcome = "error"       // a non-2xx answer (fault, validation or capacity)
	OutcomeShed       Outcome = "shed"        // refused for capacity (429/529/503)
	OutcomeReset      Outcome = "reset"       // connection closed before headers
	OutcomeNoResponse Outcome = "no_response" // held, then closed
	OutcomeCut        Outcome = "cut"         // closed mid-answer (cut or a stall that closes)
	OutcomeMalformed  Outcome = "malformed"   // a malformed event or body was sent
	OutcomeNoDone     Outcome = "missing_done"
	OutcomeClientGone Outcome = "client_gone" // the client went away first
)

// JournalEntry is one attempt as the provider saw it.
type JournalEntry struct {
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
	End       time.Time `json:"end,omitzero"`
	RequestID string    `json:"request_id,omitempty"`
	Provider  string    `json:"provider"`
	Model     string    `json:"model"`
	Stream    bool      `json:"stream"`
	// PromptTokens and CachedTokens are the input as counted by the provider.
	PromptTokens int `json:"prompt_tokens"`
	CachedTokens int `json:"cached_tokens,omitempty"`
	// PlannedTokens is the number of output tokens planned.
	PlannedTokens int `json:"planned_tokens"`
	// Fault lists the fault kinds applied ("" none); FaultIDs their ids.
	Fault    string   `json:"fault,omitempty"`
	FaultIDs []string `json:"fault_ids,omitempty"`
	// Shed is the capacity limit that refused the request ("rpm", "tpm",
	// "concurrency"), or "".
	Shed         string           `json:"shed,omitempty"`
	Status       int              `json:"status"`
	Outcome      Outcome          `json:"outcome"`
	FinishReason llm.FinishReason `json:"finish_reason,omitempty"`
	// TokensSent is the number of output tokens that left the provider.
	TokensSent int `json:"tokens_sent"`
	// Corrupted marks content a fault spoiled while it looked like success.
	Corrupted bool `json:"corrupted,omitempty"`

	// open is set until the attempt is finished; admitted is the model
	// whose capacity it holds (nil when it was not admitted). Copies made
	// by Journal clear both.
	open     bool
	admitted *modelState
}

// Stats are the provider's counters since the last reset.
type Stats struct {
	Provider   string          `json:"provider"`
	Requests   int             `json:"requests"`
	InFlight   int             `json:"in_flight"`
	Faulted    int             `json:"faulted"`
	Corrupted  int             `json:"corrupted"`
	Shed       int             `json:"shed"`
	TokensSent int             `json:"tokens_sent"`
	ByStatus   map[int]int     `json:"by_status"`
	ByOutcome  map[Outcome]int `json:"by_outcome"`
	ByModel    map[string]int  `json:"by_model"`
	Faults     int             `json:"active_faults"`
}

// journal is a bounded log of entries addressed by Seq. Entries live in
// fixed-size blocks, so a long log grows without copying what it holds.
type journal struct {
	max    int
	blocks [][]JournalEntry // every block but the last is full
	off    int              // index of the oldest entry in blocks[0]
	n      int              // number of entries
	first  uint64           // Seq of the oldest entry
	// stray holds the open attempts whose entries were dropped (by Seq, the
	// model whose capacity they hold), so finishing them still releases it.
	stray map[uint64]*modelState
}

// journalBlock is the number of entries per block.
const journalBlock = 1024

func (j *journal) add(e JournalEntry) {
	if j.n == 0 {
		j.first = e.Seq
	}
	if j.max > 0 && j.n >= j.max {
		drop := max(j.n-j.max+1, j.max/10)
		j.dropOldest(drop)
		j.first += uint64(drop)
	}
	if k := len(j.blocks); k == 0 || len(j.blocks[k-1]) == journalBlock {
		j.blocks = append(j.blocks, make([]JournalEntry, 0, journalBlock))
	}
	last := &j.blocks[len(j.blocks)-1]
	*last = append(*last, e)
	j.n++
}

// dropOldest forgets the k oldest entries (k <= j.n).
func (j *journal) dropOldest(k int) {
	j.spill(k)
	j.n -= k
	if j.n == 0 {
		j.blocks, j.off = nil, 0
		return
	}
	j.off += k
	for j.off >= journalBlock {
		j.blocks[0] = nil
		j.blocks = j.blocks[1:]
		j.off -= journalBlock
	}
}

// reset forgets every entry (open attempts can still be finished).
func (j *journal) reset() {
	j.spill(j.n)
	j.blocks, j.off, j.n = nil, 0, 0
}

// spill moves the open attempts among the k oldest entries to stray.
func (j *journal) spill(k int) {
	for i := range k {
		e := j.get(j.first + uint64(i))
		if e.open {
			if j.stray == nil {
				j.stray = map[uint64]*modelState{}
			}
			j.stray[e.Seq] = e.admitted
		}
	}
}

// finish marks the attempt seq finished and returns its entry (nil when it
// was dropped) and the model whose capacity it held; ok is false when it
// was finished already or never journaled.
func (j *journal) finish(seq uint64) (e *JournalEntry, admitted *modelState, ok bool) {
	if e = j.get(seq); e != nil {
		if !e.open {
			return nil, nil, false
		}
		admitted = e.admitted
		e.open, e.admitted = false, nil
		return e, admitted, true
	}
	if admitted, ok = j.stray[seq]; ok {
		delete(j.stray, seq)
	}
	return nil, admitted, ok
}

func (j *journal) get(seq uint64) *JournalEntry {
	if seq < j.first || seq-j.first >= uint64(j.n) {
		return nil
	}
	i := j.off + int(seq-j.first)
	return &j.blocks[i/journalBlock][i%journalBlock]
}

// each calls yield with a copy of every entry, oldest first, until it
// returns false.
func (j *journal) each(yield func(JournalEntry) bool) {
	for i, b := range j.blocks {
		if i == 0 {
			b = b[j.off:]
		}
		for _, e := range b {
			e.open, e.admitted = false, nil
			if !yield(e) {
				return
			}
		}
	}
}

// all returns a copy of the entries, oldest first; nil when there are none.
func (j *journal) all() []JournalEntry {
	if j.n == 0 {
		return nil
	}
	out := make([]JournalEntry, 0, j.n)
	for i, b := range j.blocks {
		if i == 0 {
			b = b[j.off:]
		}
		out = append(out, b...)
	}
	for i := range out {
		out[i].open, out[i].admitted = false, nil
	}
	return out
}
