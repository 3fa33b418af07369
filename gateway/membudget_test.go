package gateway

import (
	"bytes"
	"io"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
)

// liveHeap returns the live heap after a collection.
func liveHeap() int64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestEventCopies measures what eventCopies counts: the copies of one
// large event live after it was decoded from every upstream format and
// re-encoded into every client format (the decoder's and the encoder's
// buffers, the event's data and text), and holds them to eventCopies
// times the event's size. The figures are logged (go test -v -run
// TestEventCopies ./gateway).
func TestEventCopies(t *testing.T) {
	const size = 600 << 10
	texts := map[string]string{
		"plain":   strings.Repeat("a", size),
		"escaped": strings.Repeat("a\"\n", size/3), // a decoded copy apart from the data
	}
	for _, kind := range []string{"plain", "escaped"} {
		for _, up := range codecs.Formats() {
			for _, client := range codecs.Formats() {
				t.Run(kind+"/"+string(up)+"-to-"+string(client), func(t *testing.T) {
					upc, err := codecs.Codec(up)
					require.NoError(t, err)
					outc, err := codecs.Codec(client)
					require.NoError(t, err)
					var wire bytes.Buffer
					enc := upc.NewStreamEncoder(&wire)
					require.NoError(t, enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: "r", Model: "m"}))
					require.NoError(t, enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: "hi"}))
					mark := wire.Len()
					require.NoError(t, enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: texts[kind]}))
					event := wire.Len() - mark
					dec := upc.NewStreamDecoder(bytes.NewReader(wire.Bytes()))
					out := outc.NewStreamEncoder(io.Discard)
					next := func() llm.StreamEvent { // the next text delta, relayed
						t.Helper()
						for {
							ev, err := dec.Next()
							require.NoError(t, err)
							require.NoError(t, out.Encode(ev))
							if ev.Type == llm.EventTextDelta {
								return ev
							}
						}
					}
					next() // the decoder and the encoder as a stream has them
					base := liveHeap()
					ev := next()
					grew := liveHeap() - base
					goruntime.KeepAlive(dec)
					goruntime.KeepAlive(out)
					require.Len(t, ev.Text, len(texts[kind]))
					t.Logf("event %d B: %.2f copies live", event, float64(grew)/float64(event))
					require.Less(t, grew, int64(eventCopies*event))
				})
			}
		}
	}
}

// TestStreamFixedBytesCountsTransport: the upstream connection buffers
// streamFixedBytes counts are the ones NewTransport configures, whatever
// the protocol, and a stream's request takes streamFixedBytes more than
// a non-streamed one.
func TestStreamFixedBytesCountsTransport(t *testing.T) {
	for _, p := range []Protocol{ProtocolAuto, ProtocolHTTP1, ProtocolH2C} {
		tr := NewTransport(p, TransportOptions{})
		require.Equal(t, transportReadBufferSize+transportWriteBufferSize, tr.ReadBufferSize+tr.WriteBufferSize, p)
	}
	require.Equal(t, int64(streamFixedBytes), requestBytes(0, 0, true)-requestBytes(0, 0, false))
}

// TestEventMeter: the bytes read since the last event was handed over are
// charged eventCopies times as they arrive, the largest run stays charged
// after later, smaller events, and everything goes back when the request
// ends.
func TestEventMeter(t *testing.T) {
	s := &Server{}
	x := &exchange{s: s}
	big := strings.Repeat("x", 10<<10)
	m := &eventMeter{body: capped{r: strings.NewReader(big + "small"), left: 1 << 20}, x: x}
	buf := make([]byte, 4<<10)
	read := func(n int) {
		t.Helper()
		got, err := io.ReadFull(m, buf[:n])
		require.NoError(t, err)
		require.Equal(t, n, got)
	}
	read(4 << 10)
	require.Equal(t, int64(eventCopies*4<<10), s.mem.used.Load(), "charged before the event is complete")
	read(4 << 10)
	read(2 << 10)
	require.Equal(t, int64(eventCopies*10<<10), s.mem.used.Load())
	m.delivered()
	read(5)
	require.Equal(t, int64(eventCopies*10<<10), s.mem.used.Load(), "a smaller event after it: the high-water mark stays")
	x.releaseMemory()
	require.Zero(t, s.mem.used.Load())

	// An event larger than the answer's cap (max_response_bytes) ends the
	// answer at the cap, and is charged for the cap, no more.
	m = &eventMeter{body: capped{r: strings.NewReader(big), left: 6 << 10}, x: x}
	_, err := io.ReadAll(m)
	require.ErrorIs(t, err, errAnswerTooLarge)
	require.Equal(t, int64(eventCopies*6<<10), s.mem.used.Load())
	x.releaseMemory()
}
