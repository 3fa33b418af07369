package mockprovider

import (
	"encoding/binary"
	"math"
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

// journal is a bounded log of attempts addressed by Seq. A long simulated
// run journals millions of attempts, so entries are kept compact and free
// of pointers: a jentry holds its times as offsets from the journal's base
// time and its strings as indices into a table of the distinct values (a
// journal sees a handful of models, faults, outcomes and finish reasons);
// the request id, the caller's string, is kept beside it. The garbage
// collector scans one pointer per entry instead of a dozen, and journaling
// allocates nothing but a block per journalBlock entries. Times an offset
// cannot restore exactly (a server's clock readings carry a monotonic
// reading) are kept whole beside the entry; an entry with a value past a
// full table or a count beyond int32 is kept whole in its block's
// overflow. Both are allocated per block when first needed; every path
// gives back exactly the values journaled.
type journal struct {
	max      int
	provider string    // the Provider of every entry
	blocks   []*jblock // every block but the last is full
	off      int       // index of the oldest entry in blocks[0]
	n        int       // number of entries
	first    uint64    // Seq of the oldest entry
	// stray holds the open attempts whose entries were dropped (by Seq, the
	// model whose capacity they hold, see jentry.admitted), so finishing
	// them still releases it.
	stray map[uint64]int16
	// base is the time entries' times are offsets from: the time of the
	// first entry added to an empty journal.
	base time.Time
	// loc, baseSec and baseNsec are the base's location and Unix time;
	// plain says whether the base has no monotonic reading and is in range.
	loc      *time.Location
	baseSec  int64
	baseNsec int64
	plain    bool
	strs     strTable
	ids      idsTable
	// hints are the table indices last used per field: consecutive
	// entries mostly repeat them, and a hit costs one string comparison.
	// hDone is the outcome's hint when attempts finish.
	hModel, hFault, hShed, hOutcome, hFinish, hDone uint16
}

// journalBlock is the number of entries per block.
const journalBlock = 1024

// jblock holds journalBlock entries in parallel slices: the compact
// entries (no pointers: the collector does not scan them), the request
// ids, and the overflow.
type jblock struct {
	e   []jentry
	rid []string
	// times holds the Time and End of entries with jTimes, more the
	// entries with jMore; each is nil until needed, then journalBlock long.
	times [][2]time.Time
	more  []JournalEntry
}

// jentry is one attempt, compact. With jTimes set, times[i] of its block
// holds its Time and End (at and end are unused); with jMore set, more[i]
// holds the entry (only open and admitted are read here).
type jentry struct {
	at, end                             int64 // offsets from journal.base; End is zero without jEnded
	prompt, cached, planned, sent       int32
	status                              int32
	model, fault, shed, outcome, finish uint16 // strTable indices
	ids                                 uint16 // idsTable index
	admitted                            int16  // see admittedNone
	flags                               uint8
}

// jentry flags.
const (
	jOpen      = 1 << iota // not finished yet
	jStream                // Stream
	jCorrupted             // Corrupted
	jEnded                 // end is set (End is zero otherwise)
	jMore                  // the entry lives in its block's more
	jTimes                 // Time and End live in its block's times
)

// Values of jentry.admitted besides an index into Model.models.
const (
	admittedNone  = -1 // no capacity held
	admittedOther = -2 // the provider's capacity and a model unknown to the spec (PlanProxy)
)

// setBase makes t the base of the entries' times (the journal is empty).
// Only a time without a monotonic clock reading, in the range offsets
// cover, can be a base; with any other, every time goes to the overflow
// until the journal is empty again.
func (j *journal) setBase(t time.Time) {
	j.base, j.loc = t, t.Location()
	j.baseSec, j.baseNsec = t.Unix(), int64(t.Nanosecond())
	j.plain = t.Round(0) == t && j.baseSec >= -maxOffsetSec && j.baseSec <= maxOffsetSec
}

// maxOffsetSec bounds the Unix seconds of the times offsets hold (about
// 1843 to 2096), so that the difference of two in nanoseconds fits in an
// int64.
const maxOffsetSec = 4e9

// offset returns t as an offset from the base in nanoseconds, and whether
// base.Add of the offset restores t exactly: t has no monotonic clock
// reading (which an offset cannot restore), the base's location and Unix
// seconds in the range the base's are.
func (j *journal) offset(t time.Time) (int64, bool) {
	if !j.plain || t.Location() != j.loc || t.Round(0) != t {
		return 0, false
	}
	sec := t.Unix()
	if sec < -maxOffsetSec || sec > maxOffsetSec {
		return 0, false
	}
	return (sec-j.baseSec)*1e9 + int64(t.Nanosecond()) - j.baseNsec, true
}

// fits32 reports whether v is an int32.
func fits32(v int) bool { return v == int(int32(v)) }

// add journals a new, open attempt: e's fields as they are, and the model
// whose capacity it holds.
func (j *journal) add(e *JournalEntry, admitted int16) {
	if j.n == 0 {
		j.first = e.Seq
		j.setBase(e.Time)
	}
	if j.max > 0 && j.n >= j.max {
		drop := max(j.n-j.max+1, j.max/10)
		j.dropOldest(drop)
		j.first += uint64(drop)
		if j.n == 0 {
			j.first = e.Seq
			j.setBase(e.Time)
		}
	}
	if k := len(j.blocks); k == 0 || len(j.blocks[k-1].e) == journalBlock {
		j.blocks = append(j.blocks, &jblock{e: make([]jentry, 0, journalBlock), rid: make([]string, 0, journalBlock)})
	}
	b := j.blocks[len(j.blocks)-1]
	b.e = append(b.e, jentry{admitted: admitted, flags: jOpen})
	b.rid = append(b.rid, e.RequestID)
	j.n++
	j.put(b, len(b.e)-1, e)
}

// put stores e in slot i of b, keeping the slot's open flag and admitted
// model.
func (j *journal) put(b *jblock, i int, e *JournalEntry) {
	x := &b.e[i]
	keep := x.flags & jOpen
	at, inTime := j.offset(e.Time)
	var end int64
	ended := e.End != (time.Time{})
	if ended && inTime {
		end, inTime = j.offset(e.End)
	}
	ok := fits32(e.PromptTokens) && fits32(e.CachedTokens) && fits32(e.PlannedTokens) &&
		fits32(e.TokensSent) && fits32(e.Status) && e.RequestID == b.rid[i] && e.Provider == j.provider
	var model, fault, shed, outcome, finish, ids uint16
	if ok {
		model = j.strs.index(e.Model, j.hModel)
		fault = j.strs.index(e.Fault, j.hFault)
		shed = j.strs.index(e.Shed, j.hShed)
		outcome = j.strs.index(string(e.Outcome), j.hOutcome)
		finish = j.strs.index(string(e.FinishReason), j.hFinish)
		j.hModel, j.hFault, j.hShed, j.hOutcome, j.hFinish = model, fault, shed, outcome, finish
		ids = j.ids.index(e.FaultIDs)
		ok = model != noRoom && fault != noRoom && shed != noRoom && outcome != noRoom && finish != noRoom && ids != noRoom
	}
	if !ok {
		if b.more == nil {
			b.more = make([]JournalEntry, journalBlock)
		}
		b.more[i] = *e
		x.flags = keep | jMore
		return
	}
	*x = jentry{at: at, end: end, prompt: int32(e.PromptTokens), cached: int32(e.CachedTokens),
		planned: int32(e.PlannedTokens), sent: int32(e.TokensSent), status: int32(e.Status),
		model: model, fault: fault, shed: shed, outcome: outcome, finish: finish, ids: ids,
		admitted: x.admitted, flags: keep}
	if e.Stream {
		x.flags |= jStream
	}
	if e.Corrupted {
		x.flags |= jCorrupted
	}
	if ended {
		x.flags |= jEnded
	}
	if !inTime {
		j.keepTimes(b, i, e.Time, e.End)
	} else if b.times != nil {
		b.times[i] = [2]time.Time{}
	}
	if b.more != nil {
		b.more[i] = JournalEntry{}
	}
}

// keepTimes keeps the times of slot i of b whole.
func (j *journal) keepTimes(b *jblock, i int, t, end time.Time) {
	if b.times == nil {
		b.times = make([][2]time.Time, journalBlock)
	}
	b.times[i] = [2]time.Time{t, end}
	b.e[i].flags |= jTimes
}

// entry returns the entry in slot i of b, whose Seq is seq.
func (j *journal) entry(b *jblock, i int, seq uint64) JournalEntry {
	var e JournalEntry
	j.decode(b, i, seq, &e)
	return e
}

// decode sets every field of e to the entry in slot i of b, whose Seq is
// seq (without building a copy: readers of long journals call it per entry).
func (j *journal) decode(b *jblock, i int, seq uint64, e *JournalEntry) {
	x := &b.e[i]
	if x.flags&jMore != 0 {
		*e = b.more[i]
		return
	}
	e.Seq = seq
	switch {
	case x.flags&jTimes != 0:
		e.Time, e.End = b.times[i][0], b.times[i][1]
	case x.flags&jEnded != 0:
		e.Time, e.End = j.time(x.at), j.time(x.end)
	default:
		e.Time, e.End = j.time(x.at), time.Time{}
	}
	e.RequestID = b.rid[i]
	e.Provider = j.provider
	e.Model = j.strs.at(x.model)
	e.Stream = x.flags&jStream != 0
	e.PromptTokens = int(x.prompt)
	e.CachedTokens = int(x.cached)
	e.PlannedTokens = int(x.planned)
	e.Fault = j.strs.at(x.fault)
	e.FaultIDs = j.ids.at(x.ids)
	e.Shed = j.strs.at(x.shed)
	e.Status = int(x.status)
	e.Outcome = Outcome(j.strs.at(x.outcome))
	e.FinishReason = llm.FinishReason(j.strs.at(x.finish))
	e.TokensSent = int(x.sent)
	e.Corrupted = x.flags&jCorrupted != 0
}

// time returns the time at offset d from the base: base.Add(d), built from
// its Unix time, which is cheaper.
func (j *journal) time(d int64) time.Time {
	ns := j.baseNsec + d // no overflow: see maxOffsetSec
	sec, nsec := j.baseSec+ns/1e9, ns%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	return time.Unix(sec, nsec).In(j.loc)
}

// slot returns the block and index of seq; b is nil when the journal does
// not hold it.
func (j *journal) slot(seq uint64) (b *jblock, i int) {
	if seq < j.first || seq-j.first >= uint64(j.n) {
		return nil, 0
	}
	k := j.off + int(seq-j.first)
	return j.blocks[k/journalBlock], k % journalBlock
}

// update applies f to the entry of seq, if the journal holds it.
func (j *journal) update(seq uint64, f func(*JournalEntry)) {
	b, i := j.slot(seq)
	if b == nil {
		return
	}
	e := j.entry(b, i, seq)
	f(&e)
	j.put(b, i, &e)
}

// dropOldest forgets the k oldest entries (k <= j.n).
func (j *journal) dropOldest(k int) {
	j.strayOldest(k)
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

// reset forgets every entry (open attempts can still be finished) and the
// string tables.
func (j *journal) reset() {
	j.strayOldest(j.n)
	j.blocks, j.off, j.n = nil, 0, 0
	j.strs, j.ids = strTable{max: j.strs.max}, idsTable{max: j.ids.max}
	j.hModel, j.hFault, j.hShed, j.hOutcome, j.hFinish, j.hDone = 0, 0, 0, 0, 0, 0
}

// strayOldest moves the open attempts among the k oldest entries to stray.
func (j *journal) strayOldest(k int) {
	seq, off := j.first, j.off
	for _, b := range j.blocks {
		if k <= 0 {
			return
		}
		es := b.e[off:min(len(b.e), off+k)]
		for i := range es {
			if x := &es[i]; x.flags&jOpen != 0 {
				if j.stray == nil {
					j.stray = map[uint64]int16{}
				}
				j.stray[seq+uint64(i)] = x.admitted
			}
		}
		seq += uint64(len(es))
		k -= len(es)
		off = 0
	}
}

// finish marks the attempt seq finished with what happened and returns the
// model whose capacity it held and whether it was shed; ok is false when
// it was finished already or never journaled. status, corrupted and
// finishReason (when not "") replace the planned ones (a proxy learns them
// from the upstream).
func (j *journal) finish(seq uint64, end time.Time, o Outcome, sent, status int, corrupted bool,
	finishReason llm.FinishReason) (admitted int16, shed, ok bool) {
	b, i := j.slot(seq)
	if b == nil {
		if admitted, ok = j.stray[seq]; ok {
			delete(j.stray, seq)
		}
		return admitted, false, ok
	}
	x := &b.e[i]
	if x.flags&jOpen == 0 {
		return 0, false, false
	}
	admitted = x.admitted
	x.flags &^= jOpen
	x.admitted = admittedNone
	if x.flags&jMore == 0 {
		if x.shed != 0 {
			o = OutcomeShed
		}
		var at int64
		ended, inTime := end != (time.Time{}), x.flags&jTimes == 0
		if ended && inTime {
			at, inTime = j.offset(end)
		}
		outcome := j.strs.index(string(o), j.hDone)
		j.hDone = outcome
		fin := x.finish
		if finishReason != "" {
			fin = j.strs.index(string(finishReason), fin) // the planned one, mostly
		}
		if outcome != noRoom && fin != noRoom && fits32(sent) && fits32(status) {
			if !inTime {
				var t time.Time // kept whole already, or restored from its offset
				if x.flags&jTimes != 0 {
					t = b.times[i][0]
				} else {
					t = j.time(x.at)
				}
				j.keepTimes(b, i, t, end)
			}
			x.end, x.outcome, x.finish, x.sent, x.status = at, outcome, fin, int32(sent), int32(status)
			x.flags &^= jCorrupted | jEnded
			if corrupted {
				x.flags |= jCorrupted
			}
			if ended {
				x.flags |= jEnded
			}
			return admitted, x.shed != 0, true
		}
		// It does not fit: the entry moves to the overflow.
		e := j.entry(b, i, seq)
		if b.more == nil {
			b.more = make([]JournalEntry, journalBlock)
		}
		b.more[i] = e
		x.flags |= jMore
	}
	e := &b.more[i]
	if e.Shed != "" {
		o = OutcomeShed
	}
	e.End, e.Outcome, e.TokensSent, e.Status, e.Corrupted = end, o, sent, status, corrupted
	if finishReason != "" {
		e.FinishReason = finishReason
	}
	return admitted, e.Shed != "", true
}

// each calls yield with every entry, oldest first, until it returns false.
func (j *journal) each(yield func(JournalEntry) bool) { j.eachFrom(0, yield) }

// eachFrom calls yield with every entry whose Seq is at least from, oldest
// first, until it returns false.
func (j *journal) eachFrom(from uint64, yield func(JournalEntry) bool) {
	seq := max(from, j.first)
	if j.n == 0 || seq-j.first >= uint64(j.n) {
		return
	}
	var e JournalEntry
	start := j.off + int(seq-j.first)
	for k := start / journalBlock; k < len(j.blocks); k++ {
		b := j.blocks[k]
		i := 0
		if k == start/journalBlock {
			i = start % journalBlock
		}
		for ; i < len(b.e); i++ {
			j.decode(b, i, seq, &e)
			if !yield(e) {
				return
			}
			seq++
		}
	}
}

// all returns a copy of the entries, oldest first; nil when there are none.
func (j *journal) all() []JournalEntry {
	if j.n == 0 {
		return nil
	}
	out := make([]JournalEntry, 0, j.n)
	for e := range j.each {
		out = append(out, e)
	}
	return out
}

// Default table bounds: a journal sees a handful of distinct values, but a
// server's models come from its clients, so the tables stop growing and
// later values go to the overflow.
const (
	maxJournalStrings = 4096
	maxJournalIDs     = 1024
)

// strTable interns the strings of a journal: s[0] is "".
type strTable struct {
	s     []string
	byKey map[string]uint16
	max   int // 0: maxJournalStrings
}

// at returns the string of index k.
func (t *strTable) at(k uint16) string {
	if k == 0 {
		return ""
	}
	return t.s[k]
}

// noRoom is the index of a value a full table cannot take.
const noRoom = math.MaxUint16

// index returns the index of v, adding it when there is room (noRoom when
// there is not); hint is the index the field had last, checked first.
func (t *strTable) index(v string, hint uint16) uint16 {
	if len(v) == 0 {
		return 0
	}
	if int(hint) < len(t.s) {
		if h := t.s[hint]; len(h) == len(v) && h == v {
			return hint
		}
	}
	return t.add(v)
}

// add is index when the hint misses.
func (t *strTable) add(v string) uint16 {
	if v == "" {
		return 0
	}
	k, ok := t.byKey[v]
	if !ok {
		limit := t.max
		if limit == 0 {
			limit = maxJournalStrings
		}
		if t.s == nil {
			t.s = []string{""}
			t.byKey = map[string]uint16{}
		}
		if len(t.s) > limit {
			return noRoom
		}
		k = uint16(len(t.s))
		t.s = append(t.s, v)
		t.byKey[v] = k
	}
	return k
}

// idsTable interns FaultIDs lists: l[0] is nil. Lists are compared by
// content; plans share their lists, so the last one is checked by
// identity first.
type idsTable struct {
	l     [][]string
	byKey map[string]uint16
	max   int // 0: maxJournalIDs
	hint  uint16
	key   []byte // scratch
}

// at returns the list of index k.
func (t *idsTable) at(k uint16) []string {
	if k == 0 {
		return nil
	}
	return t.l[k]
}

func (t *idsTable) index(ids []string) uint16 {
	if ids == nil {
		return 0
	}
	if h := t.hint; int(h) < len(t.l) {
		if l := t.l[h]; len(l) == len(ids) && (len(l) == 0 || &l[0] == &ids[0]) {
			return h
		}
	}
	// The key: a mark (a nil list has none), then each id with its length.
	key := append(t.key[:0], 1)
	for _, id := range ids {
		key = binary.AppendUvarint(key, uint64(len(id)))
		key = append(key, id...)
	}
	t.key = key
	k, ok := t.byKey[string(key)]
	if !ok {
		limit := t.max
		if limit == 0 {
			limit = maxJournalIDs
		}
		if t.l == nil {
			t.l = [][]string{nil}
			t.byKey = map[string]uint16{}
		}
		if len(t.l) > limit {
			return noRoom
		}
		k = uint16(len(t.l))
		t.l = append(t.l, ids[:len(ids):len(ids)])
		t.byKey[string(key)] = k
	}
	t.hint = k
	return k
}
