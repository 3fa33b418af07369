package events

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestJSONLRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var l Log
	l.Emit(Event{Time: t0, Kind: AttemptEnd, RequestID: "r1", Target: "openai:gpt-4o", Status: 429, Class: "rate_limited", TTFT: 120 * time.Millisecond})
	l.Emit(Event{Time: t0.Add(time.Second), Kind: AlertDelivered, Name: "fallback_rate_high", Sink: "oncall"})
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, l.Events()))
	got, err := ReadJSONL(&buf)
	require.NoError(t, err)
	if d := cmp.Diff(l.Events(), got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	require.Equal(t, uint64(2), got[1].Seq)
}

func TestReadJSONLNamesLine(t *testing.T) {
	_, err := ReadJSONL(bytes.NewBufferString("{\"seq\":1}\n{oops\n"))
	require.ErrorContains(t, err, "line 2")
}

func TestBusDropsForSlowSubscriber(t *testing.T) {
	var b Bus
	ch, cancel := b.Subscribe(1)
	defer cancel()
	b.Emit(Event{Kind: FaultStart})
	b.Emit(Event{Kind: FaultEnd})
	require.Equal(t, uint64(1), b.Dropped())
	e := <-ch
	require.Equal(t, FaultStart, e.Kind)
	require.Equal(t, uint64(1), e.Seq)
}
