package events

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func anyString(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.Just(""),
		rapid.SampledFrom([]string{"openai:gpt-4o", "a<b>&c", "quote\"back\\slash", "tab\tnl\nbs\bff\f\r\x01\x1f\x7f", "\u2028\u2029", "é日本", "\xff\xfe", "x\xc3"}),
		rapid.String(),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	).Draw(t, label)
}

func anyFloat(t *rapid.T, label string) float64 {
	return rapid.OneOf(
		rapid.Just(0.0),
		rapid.SampledFrom([]float64{1e-7, 1e-6, 9.99e-7, 1e21, 1e20, -1e21, 0.1, 123456.789, 5e-324, math.MaxFloat64, math.Copysign(0, -1)}),
		rapid.Float64(),
	).Draw(t, label)
}

// appendJSON writes exactly what encoding/json writes for every event,
// and refuses what it refuses.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	locs := []*time.Location{time.UTC, time.FixedZone("P", -7*3600), time.FixedZone("Q", 5*3600+1800)}
	rapid.Check(t, func(t *rapid.T) {
		e := Event{
			Seq:          rapid.Uint64().Draw(t, "seq"),
			Time:         time.Unix(rapid.Int64Range(-70000000000, 300000000000).Draw(t, "sec"), rapid.Int64Range(0, 999999999).Draw(t, "ns")).In(rapid.SampledFrom(locs).Draw(t, "loc")),
			Kind:         Kind(anyString(t, "kind")),
			RequestID:    anyString(t, "id"),
			Route:        anyString(t, "route"),
			Target:       anyString(t, "target"),
			Tier:         anyString(t, "tier"),
			Attempt:      rapid.Int().Draw(t, "attempt"),
			Stream:       rapid.Bool().Draw(t, "stream"),
			Client:       anyString(t, "client"),
			Replica:      rapid.IntRange(0, 12).Draw(t, "replica"),
			Status:       rapid.Int().Draw(t, "status"),
			Class:        anyString(t, "class"),
			Outcome:      anyString(t, "outcome"),
			TTFT:         time.Duration(rapid.Int64().Draw(t, "ttft")),
			Duration:     time.Duration(rapid.Int64().Draw(t, "dur")),
			InputTokens:  rapid.Int().Draw(t, "in"),
			OutputTokens: rapid.Int().Draw(t, "out"),
			CachedTokens: rapid.Int().Draw(t, "cached"),
			Cost:         anyFloat(t, "cost"),
			From:         anyString(t, "from"),
			To:           anyString(t, "to"),
			Reason:       anyString(t, "reason"),
			Name:         anyString(t, "name"),
			Severity:     anyString(t, "sev"),
			Sink:         anyString(t, "sink"),
			OK:           rapid.Bool().Draw(t, "ok"),
			Value:        anyFloat(t, "value"),
		}
		want, werr := json.Marshal(&e)
		got, gerr := appendJSON(nil, &e)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("error: encoding/json %v, appendJSON %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("appendJSON:\n%s\nencoding/json:\n%s", got, want)
		}
	})
}

// One encoder writing a sequence of events (times in the same second or
// not, in several zones, strings repeated or not) writes each as
// encoding/json does: what it remembers from one event never leaks into
// the next.
func TestJSONEncoderSequence(t *testing.T) {
	locs := []*time.Location{time.UTC, time.FixedZone("P", -7*3600), time.FixedZone("Z0", 0), time.FixedZone("Q", 5*3600+1800)}
	rapid.Check(t, func(t *rapid.T) {
		var enc jsonEncoder
		base := rapid.Int64Range(-70000000000, 300000000000).Draw(t, "base")
		strs := rapid.SampledFrom([]string{"", "chat", "openai:gpt-4o", "a<b>", "é"})
		for i := range rapid.IntRange(1, 40).Draw(t, "n") {
			e := Event{
				Seq:  uint64(i) + 1,
				Time: time.Unix(base+rapid.Int64Range(0, 2).Draw(t, "sec"), rapid.SampledFrom([]int64{0, 1, 100, 120000000, 999999999}).Draw(t, "ns")).In(rapid.SampledFrom(locs).Draw(t, "loc")),
				Kind: Kind(strs.Draw(t, "kind")), Route: strs.Draw(t, "route"), Target: strs.Draw(t, "target"),
				Tier: strs.Draw(t, "tier"), Class: strs.Draw(t, "class"), Outcome: strs.Draw(t, "outcome"),
				RequestID: strs.Draw(t, "id"), Cost: rapid.SampledFrom([]float64{0, 0.5, math.NaN()}).Draw(t, "cost"),
			}
			if rapid.Bool().Draw(t, "year10000") {
				e.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
			}
			want, werr := json.Marshal(&e)
			got, gerr := enc.append(nil, &e)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("event %d: error: encoding/json %v, encoder %v", i, werr, gerr)
			}
			if werr == nil && !bytes.Equal(got, want) {
				t.Fatalf("event %d: encoder:\n%s\nencoding/json:\n%s", i, got, want)
			}
		}
	})
}

// WriteJSONL and Packed.WriteJSONL write the same lines, which ReadJSONL
// reads back.
func TestWriteJSONLPackedSame(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := []Event{
		{Seq: 1, Time: t0, Kind: RequestStart, RequestID: "r1", Route: "chat", Stream: true},
		{Seq: 2, Time: t0.Add(time.Second), Kind: AttemptEnd, RequestID: "r1", Target: "a:m", Status: 429, Class: "rate_limited", Cost: 0.0025},
		{Seq: 3, Time: t0.Add(2 * time.Second), Kind: AlertFired, Name: "fallback <high>", Severity: "page", Value: 0.3},
	}
	var p Packed
	for _, e := range evs {
		p.Append(&e)
	}
	var a, b strings.Builder
	if err := WriteJSONL(&a, evs); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("slice:\n%s\npacked:\n%s", a.String(), b.String())
	}
	back, err := ReadJSONL(strings.NewReader(a.String()))
	if err != nil || len(back) != len(evs) || back[2].Name != "fallback <high>" || back[1].Cost != 0.0025 {
		t.Fatalf("read back %+v, %v", back, err)
	}
}

func BenchmarkWriteJSONL(b *testing.B) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := make([]Event, 1000)
	for i := range evs {
		evs[i] = Event{Seq: uint64(i) + 1, Time: t0.Add(time.Duration(i) * time.Millisecond), Kind: AttemptEnd, RequestID: "req-123456",
			Route: "chat", Target: "openai:gpt-4o", Status: 200, Class: "ok", Stream: true, TTFT: 350 * time.Millisecond,
			Duration: 1200 * time.Millisecond, InputTokens: 210, OutputTokens: 97, Cost: 0.0012}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteJSONL(io.Discard, evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}
