package score

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMeasuredBlackBox: what a black box's journals and answers show
// decides which scores were measured.
func TestMeasuredBlackBox(t *testing.T) {
	start := t0
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	reqs := func(target string) []events.Event {
		var out []events.Event
		for i := range 4 {
			id := fmt.Sprintf("r%d", i)
			out = append(out,
				events.Event{Time: at(i * 100), Kind: events.RequestStart, RequestID: id, Route: "chat"},
				events.Event{Time: at(i*100 + 50), Kind: events.RequestEnd, RequestID: id, Route: "chat", Target: target, Outcome: events.OutcomeServed})
		}
		return out
	}
	journal := func(ids bool) []JournalEntry {
		var out []JournalEntry
		for i := range 4 {
			j := JournalEntry{Time: at(i*100 + 10), Target: "openai:gpt-4o", Outcome: "ok", InputTokens: 100, OutputTokens: 10}
			if ids {
				j.RequestID = fmt.Sprintf("r%d", i)
			}
			out = append(out, j)
		}
		return out
	}
	prices := map[string]Price{"openai:gpt-4o": {InputPerMTok: 2, OutputPerMTok: 10}}
	primary := map[string]string{"chat": "openai:gpt-4o"}
	for _, tc := range []struct {
		name string
		in   Input
		not  map[string]string // score -> why
	}{
		{"ids forwarded", Input{Events: reqs(""), Journal: journal(true), Prices: prices, Primary: primary},
			map[string]string{"alerts": WhyBlackBoxEvents, "flaps": WhyBlackBoxEvents, "detected_by": WhyBlackBoxEvents, "false_alarms": WhyBlackBoxEvents}},
		{"no ids, model named", Input{Events: reqs("openai:gpt-4o"), Journal: journal(false), Prices: prices, Primary: primary},
			map[string]string{"alerts": WhyBlackBoxEvents, "flaps": WhyBlackBoxEvents, "detected_by": WhyBlackBoxEvents, "false_alarms": WhyBlackBoxEvents,
				"bad_served": whyNoRequestIDs, "quality": whyNoRequestIDs, "retry_amplification": whyNoRequestIDs, "peak_retry_amplification": whyNoRequestIDs}},
		{"no ids, nothing named, no prices", Input{Events: reqs(""), Journal: journal(false), Primary: primary},
			map[string]string{"alerts": WhyBlackBoxEvents, "flaps": WhyBlackBoxEvents, "detected_by": WhyBlackBoxEvents, "false_alarms": WhyBlackBoxEvents,
				"bad_served": whyNoRequestIDs, "quality": whyNoRequestIDs, "retry_amplification": whyNoRequestIDs, "peak_retry_amplification": whyNoRequestIDs,
				"degraded": whyNoServingTgt, "cost_multiplier": whyNoPrices}},
		{"no primary", Input{Events: reqs(""), Journal: journal(true), Prices: prices},
			map[string]string{"alerts": WhyBlackBoxEvents, "flaps": WhyBlackBoxEvents, "detected_by": WhyBlackBoxEvents, "false_alarms": WhyBlackBoxEvents, "degraded": whyNoPrimary}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Start, tc.in.End, tc.in.BlackBox = start, at(1000), true
			res := Score(tc.in)
			got := map[string]string{}
			for k, m := range res.Measured {
				if !m.Measured {
					got[k] = m.Why
				}
			}
			assert.Equal(t, tc.not, got)
			assert.Len(t, res.Measured, len(scoreNames))
		})
	}
}

// TestJudgeNotMeasured: an expectation on a score the run did not measure
// fails, whatever the figure.
func TestJudgeNotMeasured(t *testing.T) {
	zero := 0.0
	s := &Expect{BadServed: &NumberBound{Max: &zero}}
	res := &Result{Measured: map[string]Measure{"bad_served": {Why: whyNoRequestIDs}}}
	v := s.Judge(res)
	require.Len(t, v, 1)
	assert.Equal(t, Verdict{Name: "bad_served", Want: "<= 0", Got: "not measured: " + whyNoRequestIDs}, v[0])
	res.Measured["bad_served"] = Measure{Measured: true}
	assert.True(t, s.Judge(res)[0].Pass)
}

// TestBlackBoxDegraded: a black box's answer from a target other than its
// route's primary is degraded, by the journals (request id) or, without
// ids, by the target the answer's model named.
func TestBlackBoxDegraded(t *testing.T) {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name     string
		named    string // request.end target (from the answer's model)
		ids      bool   // the journal has request ids
		degraded int
	}{
		{"journal", "", true, 2},
		{"journal over the model field", "openai:gpt-4o", true, 2},
		{"model field", "openai:gpt-4o-mini", false, 4},
		{"neither", "", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var evs []events.Event
			var js []JournalEntry
			for i := range 4 {
				id := fmt.Sprintf("r%d", i)
				evs = append(evs,
					events.Event{Time: at(i * 100), Kind: events.RequestStart, RequestID: id, Route: "chat"},
					events.Event{Time: at(i*100 + 50), Kind: events.RequestEnd, RequestID: id, Route: "chat", Target: tc.named, Outcome: events.OutcomeServed})
				// Requests 0 and 1: a 429 on the primary, then the fallback.
				tgts := []string{"openai:gpt-4o"}
				if i < 2 {
					tgts = []string{"openai:gpt-4o", "openai:gpt-4o-mini"}
				}
				for k, tg := range tgts {
					j := JournalEntry{Time: at(i*100 + 10*(k+1)), Target: tg, Outcome: "ok", OutputTokens: 5}
					if k+1 < len(tgts) {
						j.Outcome = "error"
					}
					if tc.ids {
						j.RequestID = id
					}
					js = append(js, j)
				}
			}
			res := Score(Input{Events: evs, Journal: js, Start: t0, End: at(1000), BlackBox: true,
				Primary: map[string]string{"chat": "openai:gpt-4o"}})
			a := res.Overall.Availability
			assert.Equal(t, tc.degraded, a.Degraded)
			assert.Equal(t, 4-tc.degraded, a.Served)
		})
	}
}

// TestJournalAppendJSON holds the journal's hand-written JSON lines to
// encoding/json's.
func TestJournalAppendJSON(t *testing.T) {
	loc := time.FixedZone("X", -3*3600-30*60)
	for _, j := range []JournalEntry{
		{},
		{Time: t0.Add(1234567891 * time.Nanosecond), RequestID: "req-1", Target: "openai:gpt-4o", Outcome: "ok", OutputTokens: 40, InputTokens: 311, CachedTokens: 128},
		{Time: time.Date(2026, 12, 1, 19, 0, 0, 500, loc), RequestID: "a\"b\\c<d>&\u2028\x01é\xff", Target: "x:y", Fault: "truncate", Outcome: "cut", Corrupted: true},
		{Time: time.Now(), RequestID: "live", Outcome: "client_gone", OutputTokens: -1},
	} {
		want, err := json.Marshal(j)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(j.appendJSON(nil)))
	}
}
