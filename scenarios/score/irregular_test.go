package score

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/brownout-dev/brownout/events"
)

// Scoring of irregular logs, renamed ids, percentiles, offsets and the
// simulated journal.

// TestScoreIDRenaming: a request's id is only a name. Renaming every id
// (here so that ids no longer come in increasing order) changes no score.
func TestScoreIDRenaming(t *testing.T) {
	b := &logb{}
	b.fault("f", "a:m", 10*time.Second, 20*time.Second)
	b.traffic(0, 30*time.Second, func(d time.Duration) (string, []att) {
		if d >= 10*time.Second && d < 15*time.Second {
			return events.OutcomeDegraded, []att{fail("a:m"), ok("b:m")}
		}
		return events.OutcomeServed, []att{ok("a:m")}
	})
	b.journal = []JournalEntry{{Time: at(time.Second), RequestID: "r10", Target: "a:m", Outcome: "ok", Corrupted: true}}
	want := b.score(30 * time.Second)
	rename := func(id string) string { return fmt.Sprintf("%d-%s", 1000-len(id)*10-int(id[len(id)-1]-'0'), id) }
	for i := range b.evs {
		if b.evs[i].RequestID != "" {
			b.evs[i].RequestID = rename(b.evs[i].RequestID)
		}
	}
	b.journal[0].RequestID = rename(b.journal[0].RequestID)
	got := b.score(30 * time.Second)
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Result{})); d != "" {
		t.Errorf("renamed ids change the scores (-before +after):\n%s", d)
	}
	if got.Overall.BadServed != 1 || got.Overall.Retry.Attempts != 350 {
		t.Errorf("bad served %d attempts %d, want 1 and 350", got.Overall.BadServed, got.Overall.Retry.Attempts)
	}
}

// TestScoreIrregularLogs: logs whose request events do not nest (a
// request.end with no request.start, an attempt ending after its request,
// an id used twice) are scored like any other.
func TestScoreIrregularLogs(t *testing.T) {
	tests := []struct {
		name string
		evs  []events.Event
		// want
		requests, served, failed, attempts int
		totalP50                           time.Duration
	}{
		{
			name: "end without start",
			evs: []events.Event{
				{Time: at(time.Second), Kind: events.RequestEnd, RequestID: "r", Outcome: events.OutcomeServed, Target: "a:m", Duration: 300 * time.Millisecond},
			},
			requests: 1, served: 1, totalP50: 300 * time.Millisecond,
		},
		{
			name: "attempt ends after its request",
			evs: []events.Event{
				{Time: at(0), Kind: events.RequestStart, RequestID: "r"},
				{Time: at(0), Kind: events.AttemptStart, RequestID: "r", Target: "a:m"},
				{Time: at(time.Second), Kind: events.RequestEnd, RequestID: "r", Outcome: events.OutcomeFailed},
				{Time: at(2 * time.Second), Kind: events.AttemptEnd, RequestID: "r", Target: "a:m", Class: "timeout"},
			},
			requests: 1, failed: 1, attempts: 1,
		},
		{
			name: "attempt before its request",
			evs: []events.Event{
				{Time: at(0), Kind: events.AttemptStart, RequestID: "r", Target: "a:m"},
				{Time: at(0), Kind: events.RequestStart, RequestID: "r"},
				{Time: at(time.Second), Kind: events.AttemptEnd, RequestID: "r", Target: "a:m", Class: "ok"},
				{Time: at(time.Second), Kind: events.RequestEnd, RequestID: "r", Outcome: events.OutcomeServed},
			},
			requests: 1, served: 1, attempts: 1, totalP50: time.Second,
		},
		{
			name: "id used twice",
			evs: []events.Event{
				{Time: at(0), Kind: events.RequestStart, RequestID: "r"},
				{Time: at(0), Kind: events.AttemptStart, RequestID: "r", Target: "a:m"},
				{Time: at(time.Second), Kind: events.AttemptEnd, RequestID: "r", Target: "a:m", Class: "rate_limited"},
				{Time: at(time.Second), Kind: events.RequestEnd, RequestID: "r", Outcome: events.OutcomeFailed},
				{Time: at(2 * time.Second), Kind: events.RequestStart, RequestID: "r"},
				{Time: at(2 * time.Second), Kind: events.AttemptStart, RequestID: "r", Target: "a:m"},
				{Time: at(4 * time.Second), Kind: events.AttemptEnd, RequestID: "r", Target: "a:m", Class: "ok"},
				{Time: at(4 * time.Second), Kind: events.RequestEnd, RequestID: "r", Outcome: events.OutcomeServed},
			},
			requests: 2, served: 1, failed: 1, attempts: 2, totalP50: 2 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Events: tt.evs, Start: t0, End: at(10 * time.Second)}
			res := Score(in)
			if d := cmp.Diff(res, feedScore(in), cmpopts.IgnoreUnexported(Result{})); d != "" {
				t.Errorf("fed scores differ (-Score +feed):\n%s", d)
			}
			a, r := res.Overall.Availability, res.Overall.Retry
			if a.Requests != tt.requests || a.Served != tt.served || a.Failed != tt.failed || r.Attempts != tt.attempts {
				t.Errorf("requests %d served %d failed %d attempts %d, want %d %d %d %d",
					a.Requests, a.Served, a.Failed, r.Attempts, tt.requests, tt.served, tt.failed, tt.attempts)
			}
			if got := res.Overall.Latency.BaselineTotal.P50; got != tt.totalP50 {
				t.Errorf("total p50 = %v, want %v", got, tt.totalP50)
			}
		})
	}
}

// TestPercentiles compares the selection with sorting, on both sides of
// histSelectMin and on awkward values.
func TestPercentiles(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func(i int) time.Duration{
		"uniform":    func(int) time.Duration { return time.Duration(rnd.Int64N(int64(time.Minute))) },
		"few values": func(int) time.Duration { return time.Duration(rnd.IntN(5)) * time.Second },
		"all equal":  func(int) time.Duration { return time.Second },
		"ascending":  func(i int) time.Duration { return time.Duration(i) },
		"descending": func(i int) time.Duration { return time.Duration(-i) },
		"heavy tail": func(int) time.Duration {
			if rnd.IntN(100) == 0 {
				return time.Duration(rnd.Int64N(math.MaxInt64))
			}
			return time.Duration(rnd.Int64N(int64(time.Second)))
		},
		"extremes": func(i int) time.Duration {
			return []time.Duration{math.MinInt64, math.MaxInt64, 0, -1, 1}[i%5]
		},
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 3, 16, 17, 100, 1000, histSelectMin - 1, histSelectMin, 20000} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				ds := make([]time.Duration, n)
				for i := range ds {
					ds[i] = gen(i)
				}
				sorted := slices.Clone(ds)
				slices.Sort(sorted)
				at := func(q float64) time.Duration { return sorted[max(int(math.Ceil(q*float64(n)))-1, 0)] }
				want := Percentiles{N: n, P50: at(0.5), P95: at(0.95), P99: at(0.99)}
				if got := percentiles(ds); got != want {
					t.Errorf("percentiles = %+v, want %+v", got, want)
				}
			})
		}
	}
}

// TestOffset: off is t.Sub(start), with or without monotonic clock
// readings, near and far.
func TestOffset(t *testing.T) {
	now := time.Now() // has a monotonic reading
	starts := []time.Time{t0, now, now.Round(0), {}, time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), t0.In(time.FixedZone("x", 3600))}
	for _, st := range starts {
		s := newScorerBase(Input{Start: st, End: st.Add(time.Hour)})
		times := []time.Time{st, st.Add(1), st.Add(-1), st.Add(time.Hour + 7), st.Add(-time.Hour), now, now.Round(0),
			{}, time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
			st.Add(math.MaxInt64), st.Add(math.MinInt64), st.AddDate(280, 0, 0), st.AddDate(-290, 0, 0), t0.In(time.FixedZone("y", -7200))}
		for _, tm := range times {
			if got, want := s.off(tm), int64(tm.Sub(st)); got != want {
				t.Errorf("start %v: off(%v) = %d, want %d", st, tm, got, want)
			}
		}
	}
}

// The cases of issue 14, each a hand-built log whose old score misled.
