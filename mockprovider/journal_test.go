package mockprovider

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/brownout-dev/brownout/llm"
)

// refJournal is the plain journal the compact one must behave as: whole
// entries in a slice.
type refJournal struct {
	max   int
	es    []refEntry
	stray map[uint64]int16
}

type refEntry struct {
	e        JournalEntry
	open     bool
	admitted int16
}

func (r *refJournal) add(e JournalEntry, admitted int16) {
	if r.max > 0 && len(r.es) >= r.max {
		drop := max(len(r.es)-r.max+1, r.max/10)
		for _, x := range r.es[:drop] {
			if x.open {
				r.stray[x.e.Seq] = x.admitted
			}
		}
		r.es = append([]refEntry(nil), r.es[drop:]...)
	}
	r.es = append(r.es, refEntry{e: e, open: true, admitted: admitted})
}

func (r *refJournal) find(seq uint64) *refEntry {
	for i := range r.es {
		if r.es[i].e.Seq == seq {
			return &r.es[i]
		}
	}
	return nil
}

func (r *refJournal) finish(seq uint64, end time.Time, o Outcome, sent, status int, corrupted bool, fin llm.FinishReason) (int16, bool, bool) {
	x := r.find(seq)
	if x == nil {
		a, ok := r.stray[seq]
		delete(r.stray, seq)
		return a, false, ok
	}
	if !x.open {
		return 0, false, false
	}
	a := x.admitted
	x.open, x.admitted = false, admittedNone
	if x.e.Shed != "" {
		o = OutcomeShed
	}
	x.e.End, x.e.Outcome, x.e.TokensSent, x.e.Status, x.e.Corrupted = end, o, sent, status, corrupted
	if fin != "" {
		x.e.FinishReason = fin
	}
	return a, x.e.Shed != "", true
}

func (r *refJournal) all() []JournalEntry {
	if len(r.es) == 0 {
		return nil
	}
	out := make([]JournalEntry, len(r.es))
	for i, x := range r.es {
		out[i] = x.e
	}
	return out
}

// TestJournalCompact: the compact journal gives back exactly what a plain
// one holds, whatever the values: times with monotonic readings, in other
// locations or far apart, zero times, more distinct strings and fault-id
// lists than its tables hold, counts beyond int32, shared and equal
// fault-id lists; and it releases capacity as the plain one does.
func TestJournalCompact(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	shared := []string{"f1"}
	rapid.Check(t, func(rt *rapid.T) {
		limit := rapid.IntRange(0, 60).Draw(rt, "max")
		j := &journal{max: limit, provider: "p", strs: strTable{max: rapid.IntRange(0, 6).Draw(rt, "strs")},
			ids: idsTable{max: rapid.IntRange(0, 3).Draw(rt, "ids")}}
		ref := &refJournal{max: limit, stray: map[uint64]int16{}}
		drawTime := func(label string) time.Time {
			switch rapid.IntRange(0, 9).Draw(rt, label) {
			case 0:
				return time.Now() // a monotonic reading
			case 1:
				return base.Add(time.Duration(rapid.Int64Range(0, 1e12).Draw(rt, label+"-d"))).In(time.FixedZone("X", 3600))
			case 2:
				return time.Time{}
			case 3:
				return time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Hour) // offsets saturate
			case 4:
				return base.Local()
			default:
				return base.Add(time.Duration(rapid.Int64Range(-1e10, 1e13).Draw(rt, label+"-d")))
			}
		}
		str := func(label string, n int) string {
			k := rapid.IntRange(0, n).Draw(rt, label)
			if k == 0 {
				return ""
			}
			return fmt.Sprintf("%s%d", label, k)
		}
		count := func(label string) int {
			if rapid.IntRange(0, 20).Draw(rt, label+"-big") == 0 {
				return math.MaxInt32 + rapid.IntRange(1, 10).Draw(rt, label)
			}
			return rapid.IntRange(0, 5000).Draw(rt, label)
		}
		faultIDs := func() []string {
			switch rapid.IntRange(0, 4).Draw(rt, "ids") {
			case 0:
				return nil
			case 1:
				return []string{}
			case 2:
				return shared
			case 3:
				return []string{"f1"} // equal to shared, another array
			}
			return []string{str("id", 6), str("id", 6)}
		}
		seq := uint64(rapid.IntRange(1, 1000).Draw(rt, "seq0"))
		var planned []uint64
		for range rapid.IntRange(1, 200).Draw(rt, "ops") {
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0, 1:
				e := JournalEntry{Seq: seq, Time: drawTime("time"), RequestID: str("r", 1000), Provider: "p",
					Model: str("model", 10), Stream: rapid.Bool().Draw(rt, "stream"), PromptTokens: count("prompt"),
					CachedTokens: count("cached"), PlannedTokens: count("planned"), Fault: str("fault", 10),
					FaultIDs: faultIDs(), Shed: str("shed", 2), Status: count("status"), Outcome: OutcomePending,
					FinishReason: llm.FinishReason(str("finish", 3))}
				admitted := int16(rapid.IntRange(-2, 3).Draw(rt, "admitted"))
				j.add(&e, admitted)
				ref.add(e, admitted)
				planned = append(planned, seq)
				seq++
			case 2:
				if len(planned) == 0 {
					continue
				}
				s := planned[rapid.IntRange(0, len(planned)-1).Draw(rt, "which")]
				end, o := drawTime("end"), Outcome(str("outcome", 8))
				sent, status, corrupted := count("sent"), count("status2"), rapid.Bool().Draw(rt, "corrupted")
				fin := llm.FinishReason(str("finish", 4))
				a1, s1, ok1 := j.finish(s, end, o, sent, status, corrupted, fin)
				a2, s2, ok2 := ref.finish(s, end, o, sent, status, corrupted, fin)
				if a1 != a2 || s1 != s2 || ok1 != ok2 {
					rt.Fatalf("finish %d: (%d %v %v), want (%d %v %v)", s, a1, s1, ok1, a2, s2, ok2)
				}
			case 3:
				if len(planned) == 0 {
					continue
				}
				s := planned[rapid.IntRange(0, len(planned)-1).Draw(rt, "which")]
				fault, ids := str("fault", 12), faultIDs()
				set := func(e *JournalEntry) { e.Fault, e.FaultIDs, e.Corrupted = fault, ids, true }
				j.update(s, set)
				if x := ref.find(s); x != nil {
					set(&x.e)
				}
			}
			if got, want := j.all(), ref.all(); !reflect.DeepEqual(got, want) {
				rt.Fatalf("journal differs:\n got %+v\nwant %+v", got, want)
			}
			if j.n != len(ref.es) {
				rt.Fatalf("n = %d, want %d", j.n, len(ref.es))
			}
		}
	})
}

// TestJournalCompactBlocks: entries cross blocks and the oldest are dropped
// block by block; times offset from the base come back exactly.
func TestJournalCompactBlocks(t *testing.T) {
	j := &journal{max: 2500, provider: "p"}
	ref := &refJournal{max: 2500, stray: map[uint64]int16{}}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5000 {
		e := JournalEntry{Seq: uint64(i + 1), Time: base.Add(time.Duration(i) * time.Millisecond), RequestID: fmt.Sprint("req-", i),
			Provider: "p", Model: []string{"a", "b"}[i%2], Outcome: OutcomePending, Status: 200}
		j.add(&e, int16(i%5-2))
		ref.add(e, int16(i%5-2))
		if i%3 == 0 {
			j.finish(e.Seq, e.Time.Add(time.Second), OutcomeOK, 10, 200, false, llm.FinishStop)
			ref.finish(e.Seq, e.Time.Add(time.Second), OutcomeOK, 10, 200, false, llm.FinishStop)
		}
	}
	if got, want := j.all(), ref.all(); len(got) < 2000 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for _, b := range j.blocks {
		if b.more != nil {
			t.Fatal("an entry overflowed")
		}
	}
	// Dropped attempts still open release what they held, once.
	for seq := uint64(1); seq <= 5000; seq++ {
		a1, s1, ok1 := j.finish(seq, base, OutcomeOK, 1, 200, false, "")
		a2, s2, ok2 := ref.finish(seq, base, OutcomeOK, 1, 200, false, "")
		if a1 != a2 || s1 != s2 || ok1 != ok2 {
			t.Fatalf("finish %d: (%d %v %v), want (%d %v %v)", seq, a1, s1, ok1, a2, s2, ok2)
		}
	}
	if len(j.stray) != 0 {
		t.Fatalf("%d strays left", len(j.stray))
	}
}

// TestJournalClockTimes: a server's clock readings (with a monotonic
// reading) come back exactly and are kept beside compact entries, not as
// whole entries.
func TestJournalClockTimes(t *testing.T) {
	j := &journal{max: 5000, provider: "p"}
	ref := &refJournal{max: 5000, stray: map[uint64]int16{}}
	for i := range 3000 {
		e := JournalEntry{Seq: uint64(i + 1), Time: time.Now(), RequestID: fmt.Sprint("req-", i), Provider: "p",
			Model: "m", Outcome: OutcomePending, Status: 200}
		j.add(&e, admittedNone)
		ref.add(e, admittedNone)
		if i%2 == 0 {
			end := time.Now()
			j.finish(e.Seq, end, OutcomeOK, 10, 200, false, llm.FinishStop)
			ref.finish(e.Seq, end, OutcomeOK, 10, 200, false, llm.FinishStop)
		}
	}
	if got, want := j.all(), ref.all(); !reflect.DeepEqual(got, want) {
		t.Fatal("journal differs")
	}
	for _, b := range j.blocks {
		if b.more != nil || b.times == nil {
			t.Fatalf("entries overflowed (%v) or times were not kept (%v)", b.more != nil, b.times == nil)
		}
	}
}
