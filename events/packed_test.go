package events

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// longID is longer than the request ids a log block holds.
var longID = strings.Repeat("x", maxIDLen+2)

func genEvent(t *rapid.T, i int) Event {
	str := rapid.SampledFrom([]string{"", "a", "chat", "openai:gpt-4o", "req-1", "req-2", "ok", "rate_limited", "é", longID, longID[1:]})
	return Event{
		Seq:          rapid.SampledFrom([]uint64{uint64(i) + 1, 0, 7, 1 << 40}).Draw(t, "seq"),
		Time:         time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rapid.Int64Range(-1e12, 1e12).Draw(t, "t"))),
		Kind:         Kind(rapid.SampledFrom([]string{string(RequestStart), string(AttemptEnd), "x"}).Draw(t, "kind")),
		RequestID:    str.Draw(t, "id"),
		Route:        str.Draw(t, "route"),
		Target:       str.Draw(t, "target"),
		Tier:         str.Draw(t, "tier"),
		Attempt:      rapid.IntRange(-3, 1000).Draw(t, "attempt"),
		Stream:       rapid.Bool().Draw(t, "stream"),
		Client:       str.Draw(t, "client"),
		Replica:      rapid.IntRange(0, 12).Draw(t, "replica"),
		Status:       rapid.SampledFrom([]int{0, 200, 429, 529}).Draw(t, "status"),
		Class:        str.Draw(t, "class"),
		Outcome:      str.Draw(t, "outcome"),
		TTFT:         time.Duration(rapid.Int64().Draw(t, "ttft")),
		Duration:     time.Duration(rapid.Int64().Draw(t, "dur")),
		InputTokens:  rapid.Int().Draw(t, "in"),
		OutputTokens: rapid.IntRange(0, 5000).Draw(t, "out"),
		CachedTokens: rapid.IntRange(0, 5000).Draw(t, "cached"),
		Cost:         rapid.Float64().Draw(t, "cost"),
		From:         str.Draw(t, "from"),
		To:           str.Draw(t, "to"),
		Reason:       str.Draw(t, "reason"),
		Name:         str.Draw(t, "name"),
		Severity:     str.Draw(t, "sev"),
		Sink:         str.Draw(t, "sink"),
		OK:           rapid.Bool().Draw(t, "ok"),
		Value:        rapid.SampledFrom([]float64{0, 1.5, -2, 1e300}).Draw(t, "value"),
	}
}

// Every event comes back equal, in order, whatever fields are set.
func TestPackedRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 300).Draw(t, "n")
		var p Packed
		want := make([]Event, 0, n)
		for i := range n {
			e := genEvent(t, i)
			want = append(want, e)
			p.Append(&e)
		}
		if p.Len() != n {
			t.Fatalf("Len = %d, want %d", p.Len(), n)
		}
		got := p.Events()
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) && a.Location() == b.Location() })); diff != "" && n > 0 {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

// A log larger than one storage block spans blocks without losing events.
func TestPackedBlocks(t *testing.T) {
	var p Packed
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 60_000 // well over one 256 KiB block
	for i := range n {
		p.Append(&Event{Seq: uint64(i) + 1, Time: t0.Add(time.Duration(i) * time.Millisecond), Kind: AttemptEnd,
			RequestID: "req-" + string(rune('a'+i%26)), Target: "openai:gpt-4o", Status: 200, Class: "ok", Cost: float64(i)})
	}
	if len(p.allBlocks()) < 2 {
		t.Fatalf("blocks = %d, want several", len(p.allBlocks()))
	}
	i := 0
	for k, e := range p.All() {
		if k != i || e.Seq != uint64(i)+1 || !e.Time.Equal(t0.Add(time.Duration(i)*time.Millisecond)) || e.Cost != float64(i) {
			t.Fatalf("event %d (position %d) = %+v", i, k, e)
		}
		i++
	}
	if i != n {
		t.Fatalf("iterated %d events, want %d", i, n)
	}
}

// Times come back in the location of the first event.
func TestPackedLocation(t *testing.T) {
	var p Packed
	loc := time.FixedZone("X", 3600)
	p.Append(&Event{Seq: 1, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, loc), Kind: RequestStart})
	p.Append(&Event{Seq: 2, Time: time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC), Kind: RequestEnd})
	evs := p.Events()
	if evs[1].Time.Location() != loc || !evs[1].Time.Equal(time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)) {
		t.Fatalf("second time = %v", evs[1].Time)
	}
}

func BenchmarkPackedAppend(b *testing.B) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = "req-" + string(rune('a'+i%26)) + string(rune('a'+i/26%26))
	}
	b.ReportAllocs()
	var p Packed
	i := 0
	for b.Loop() {
		p.Append(&Event{Seq: uint64(p.Len()) + 1, Time: t0.Add(time.Duration(i) * time.Millisecond), Kind: AttemptEnd,
			RequestID: ids[i%len(ids)], Route: "chat", Target: "openai:gpt-4o", Status: 200, Class: "ok", Stream: true,
			TTFT: 350 * time.Millisecond, Duration: 1200 * time.Millisecond, InputTokens: 210, OutputTokens: 97, Cost: 0.0012})
		i++
	}
	b.ReportMetric(float64(packedSize(&p))/float64(p.Len()), "B/event")
}

func packedSize(p *Packed) int {
	n := 0
	for _, b := range p.allBlocks() {
		n += len(b)
	}
	return n
}

// Appending and reading events allocates nothing per event (an Event that
// escaped to the heap would cost 328 bytes each, millions of times in a
// simulated game day).
func TestPackedAllocs(t *testing.T) {
	var p Packed
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := Event{Time: t0, Kind: BreakerTransition, RequestID: "req-1", Route: "chat", Target: "a:m", Class: "ok",
		From: "closed", To: "open", Reason: "error_rate", Name: "n", Severity: "warn", Sink: "s", Value: 0.5, Cost: 0.01}
	for range 100 {
		e.Seq = uint64(p.Len()) + 1
		p.Append(&e)
	}
	if n := testing.AllocsPerRun(1000, func() { e.Seq = uint64(p.Len()) + 1; p.Append(&e) }); n > 0.05 {
		t.Errorf("Append: %.2f allocations per event", n)
	}
	if n := testing.AllocsPerRun(10, func() {
		for _, got := range p.All() {
			if got.Sink != "s" {
				t.Fatal("wrong event")
			}
		}
	}); n > 4 {
		t.Errorf("reading %d events: %.0f allocations", p.Len(), n)
	}
}

// requestEvents returns n events as a gateway logs them under load: about
// 200 requests in flight with unique ids, each a request.start, one or two
// attempts and a request.end, interleaved, a few instants shared.
func requestEvents(n int) []Event {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	targets := []string{"openai:gpt-4o", "anthropic:claude-sonnet", "gemini:gemini-2.5-flash"}
	tiers := []string{"primary", "fallback", "fallback"}
	type flight struct {
		id      string
		attempt int
	}
	var inFlight []flight
	out := make([]Event, 0, n)
	next, now := 0, t0
	for len(out) < n {
		now = now.Add(time.Duration(next%3) * time.Millisecond)
		if len(inFlight) < 200 || next%2 == 0 {
			id := "req-" + strconv.Itoa(next)
			next++
			inFlight = append(inFlight, flight{id: id})
			out = append(out, Event{Time: now, Kind: RequestStart, RequestID: id, Route: "chat", Stream: true},
				Event{Time: now, Kind: AttemptStart, RequestID: id, Route: "chat", Target: targets[0], Tier: tiers[0], Attempt: 1})
			continue
		}
		k := (next * 7919) % len(inFlight)
		f := &inFlight[k]
		next++
		if f.attempt == 0 && next%5 == 0 {
			f.attempt = 1
			out = append(out, Event{Time: now, Kind: AttemptEnd, RequestID: f.id, Route: "chat", Target: targets[0], Tier: tiers[0], Status: 429, Class: "rate_limited", Duration: 80 * time.Millisecond},
				Event{Time: now, Kind: AttemptStart, RequestID: f.id, Route: "chat", Target: targets[1], Tier: tiers[1], Attempt: 2})
			continue
		}
		tgt := targets[f.attempt]
		out = append(out, Event{Time: now, Kind: AttemptEnd, RequestID: f.id, Route: "chat", Target: tgt, Tier: tiers[f.attempt], Status: 200, Class: "ok", Stream: true,
			TTFT: 350 * time.Millisecond, Duration: 1200 * time.Millisecond, InputTokens: 210, OutputTokens: 97, Cost: 0.0012},
			Event{Time: now, Kind: RequestEnd, RequestID: f.id, Route: "chat", Target: tgt, Outcome: OutcomeServed, TTFT: 350 * time.Millisecond, Duration: 1300 * time.Millisecond})
		inFlight[k] = inFlight[len(inFlight)-1]
		inFlight = inFlight[:len(inFlight)-1]
	}
	for i := range out {
		out[i].Seq = uint64(i) + 1
	}
	return out[:n]
}

// BenchmarkPackedRequests appends a gateway's request events (see
// requestEvents) to a growing log.
func BenchmarkPackedRequests(b *testing.B) {
	evs := requestEvents(1 << 16)
	b.ReportAllocs()
	var p Packed
	i := 0
	for b.Loop() {
		e := &evs[i%len(evs)]
		e.Seq = uint64(p.Len()) + 1
		p.Append(e)
		i++
	}
	b.ReportMetric(float64(packedSize(&p))/float64(p.Len()), "B/event")
}
