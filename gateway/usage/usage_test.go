package usage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/internal/golden"
)

func load(t *testing.T) []Record {
	t.Helper()
	f, err := os.Open("testdata/tuesday.jsonl")
	require.NoError(t, err)
	defer f.Close()
	recs, err := Read(f)
	require.NoError(t, err)
	return recs
}

func TestReportGolden(t *testing.T) {
	recs := load(t)
	from := time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC)
	to := from.Add(time.Hour)
	for _, by := range []By{ByTarget, ByRoute, ByTier} {
		t.Run(string(by), func(t *testing.T) {
			rows, err := Report(recs, Query{From: from, To: to, By: by})
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, WriteTable(&buf, by, rows))
			golden.Check(t, filepath.Join("testdata", "report-"+string(by)+".golden"), buf.Bytes())
		})
	}
}

func TestReportRange(t *testing.T) {
	recs := load(t)
	from := time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC)
	rows, err := Report(recs, Query{From: from, To: from.Add(time.Hour), By: ByTarget})
	require.NoError(t, err)
	byKey := map[string]Row{}
	for _, r := range rows {
		byKey[r.Key] = r
	}
	// r0 (before) and r4 (at To, exclusive) are out of range.
	assert.Equal(t, 2, byKey["openai:gpt-4o"].Attempts)
	assert.Equal(t, 2, byKey["openai:gpt-4o"].FailedAttempts)
	assert.InDelta(t, 0.003, byKey["openai:gpt-4o"].Cost, 1e-12, "a failed attempt that streamed tokens is paid for")
	assert.Equal(t, 2, byKey["anthropic:claude-sonnet-4"].Requests)
	_, err = Report(recs, Query{By: "provider"})
	assert.ErrorContains(t, err, `cannot group by "provider"`)
}

func TestFromEvent(t *testing.T) {
	at := time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		ev   events.Event
		want Record
	}{
		{"served", events.Event{Time: at, Kind: events.AttemptEnd, RequestID: "r", Route: "chat", Target: "openai:gpt-4o", Tier: "primary", Attempt: 1, Class: "ok", Status: 200, InputTokens: 10, OutputTokens: 5, Cost: 0.1},
			Record{Time: at, RequestID: "r", Route: "chat", Target: "openai:gpt-4o", Tier: "primary", Attempt: 1, Class: "ok", Outcome: Served, Status: 200, InputTokens: 10, OutputTokens: 5, Cost: 0.1}},
		{"failed but paid", events.Event{Time: at, Kind: events.AttemptEnd, RequestID: "r", Route: "chat", Target: "openai:gpt-4o", Attempt: 2, Class: "cut_mid_stream", Status: 200, InputTokens: 10, OutputTokens: 3, CachedTokens: 4, Cost: 0.05},
			Record{Time: at, RequestID: "r", Route: "chat", Target: "openai:gpt-4o", Attempt: 2, Class: "cut_mid_stream", Outcome: Failed, Status: 200, InputTokens: 10, OutputTokens: 3, CachedTokens: 4, Cost: 0.05}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, FromEvent(tt.ev)) })
	}
}

func TestWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u.jsonl")
	w, err := OpenFile(path)
	require.NoError(t, err)
	in := load(t)
	for i := range in {
		w.Write(&in[i])
	}
	require.NoError(t, w.Close())
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out, err := Read(f)
	require.NoError(t, err)
	assert.Equal(t, in, out)

	_, err = Read(bytes.NewBufferString("{}\nnot json\n"))
	assert.ErrorContains(t, err, "line 2")
}
