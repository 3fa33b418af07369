package gateway

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/brownout-dev/brownout/llm/sse"
)

// Memory is bounded in bytes, not counts: every inference request takes
// from one gateway-wide budget (limits.max_inflight_bytes) the memory it
// will hold — its body, its decoded form (the decoded-size estimate of
// inbound_scan.go, which bounds it from above) and, for a stream, the
// buffers every relayed stream holds whatever its events (streamFixedBytes)
// — before the body is read, and gives it back when it ends. Beyond the
// budget a request is refused with 503 and Retry-After in its API's shape,
// before a byte of its body is read. What grows with the upstream's answer
// is counted as it arrives (exchange.hold): a non-streamed body, a stream's
// text kept for continuation, and a stream's event buffers, charged while
// an event is still arriving (eventMeter) at the largest event's size for
// the rest of the stream, since the buffers keep their capacity. An
// admitted request is not cut for them, but new requests are refused
// while they fill the budget.

// Buffers of net/http's HTTP/1 server that a client's stream holds while
// it is relayed, not configurable (net/http/server.go: a connection's
// bufio.Reader, 4096 bytes, and bufio.Writer, 4<<10, in newConn's serve;
// a response's buffer before chunking, bufferBeforeChunkingSize = 2048).
const (
	clientConnBuffers = 4096 + 4<<10
	clientRespBuffer  = 2048
)

// eventCopies is how many copies of an event a relayed stream holds at
// once, counted per byte of the event as it arrives (eventMeter):
//
//   - the event reader's line buffer, where a line longer than its window
//     is assembled, and its data buffer (sse.Reader's line and data): both
//     keep their capacity for the rest of the stream;
//   - the event's Data string (sse.Event), and the codec's decoded text,
//     a second copy when the JSON string has escapes (the fast parsers)
//     or is decoded by encoding/json ([]byte(data), then the string);
//   - the client encoder's buffers that re-encode the delta, kept for the
//     stream too: the encoded delta, the chunk framing it and sse.Writer's
//     buffer (OpenAI's encoder holds all three, the first two in one
//     buffer; the others one or two).
//
// Seven copies at most (OpenAI into OpenAI, escaped text), each with the
// slack of a buffer grown by append (Go grows a large slice by a quarter):
// eight. Measured (TestEventCopies: 600 KiB of text, plain and escaped,
// every upstream format into every client format), the copies live after
// the event was relayed came to 3.7 to 6.8 times the event's bytes, the
// decoder's up to 3.7 of them. Not counted: the garbage an assembling
// buffer leaves behind as it grows (decoding allocated 7 to 11 times the
// event in all), which the next collection frees, as for every other
// allocation.
const eventCopies = 8

// streamFixedBytes is what a relayed stream holds beyond its request
// whatever its events: the upstream connection's read and write buffers
// (NewTransport), the event reader's window (sse.ReadBufferSize), the
// client connection's and response's buffers, and the copies of the part
// of an event that was already in the reader's window when the previous
// event was handed over (eventMeter counts from there). What grows with
// the answer is counted as it arrives (exchange.hold): the copies of the
// largest event (eventMeter) and the text kept for continuation.
const streamFixedBytes = transportReadBufferSize + transportWriteBufferSize + sse.ReadBufferSize +
	clientConnBuffers + clientRespBuffer + eventCopies*sse.ReadBufferSize

// byteBudget is the gateway's in-flight byte budget.
type byteBudget struct {
	used atomic.Int64
}

// take takes n bytes of a budget of max; it refuses (false) when they do
// not fit, unless nothing is in flight (one request always proceeds, so
// that a budget below one request's size does not stop the gateway).
func (b *byteBudget) take(n, max int64) bool {
	for {
		cur := b.used.Load()
		if cur > 0 && cur+n > max {
			return false
		}
		if b.used.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// give returns n bytes.
func (b *byteBudget) give(n int64) { b.used.Add(-n) }

// machineMemory returns the memory this process may use: the least of the
// cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes), the Go
// runtime's memory limit (GOMEMLIMIT) and the machine's physical memory;
// 0 when none is known.
func machineMemory() int64 {
	var best int64
	consider := func(n int64) {
		if n > 0 && (best == 0 || n < best) {
			best = n
		}
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(f); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n < 1<<60 {
				consider(n) // "max" (v2) and v1's huge number mean no limit
			}
		}
	}
	if l := debug.SetMemoryLimit(-1); l > 0 && l < 1<<62 {
		consider(l)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				f := strings.Fields(rest)
				if len(f) == 2 && f[1] == "kB" {
					if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						consider(n << 10)
					}
				}
				break
			}
		}
	}
	return best
}

// DefaultInflightBytes returns limits.max_inflight_bytes' default: a
// quarter of the memory this process may use (machineMemory), 1 GiB when
// it is unknown, and never less than 256 MiB.
func DefaultInflightBytes() int64 {
	m := machineMemory()
	if m == 0 {
		return 1 << 30
	}
	return max(m/4, 256<<20)
}

// requestBytes is what a request of bodyLen bytes whose decoded form is
// estimated at decoded bytes takes from the byte budget.
func requestBytes(bodyLen int64, decoded int64, stream bool) int64 {
	n := bodyLen + decoded
	if stream {
		n += streamFixedBytes
	}
	return n
}

// eventMeter reads a stream's upstream body and charges the request's
// byte budget (exchange.hold) for the copies of the event in progress
// (eventCopies) as its bytes arrive, before the decoder returns it: an
// upstream cannot fill the decoder's buffers uncharged. It counts the
// bytes read since the decoder last handed over an event (delivered);
// the largest such run stays charged until the request ends, as the
// buffers keep their capacity. A run also holds what followed the event
// in the same read and what the decoder skips (comments, ignored events),
// so it bounds the event from above; the part of an event read before the
// previous one was handed over (one reader window at most) is in
// streamFixedBytes. A later attempt of the request (a retry, a fall-back)
// has a decoder and a meter of its own; its charge adds to the earlier
// one's, and both are given back when the request ends.
//
// One event is bounded by the decoder (sse.DefaultMaxEventSize, 1 MiB)
// and by the answer it is part of: the meter reads through the answer's
// cap (capped, the target's max_response_bytes), so a target whose cap is
// below 1 MiB bounds its events, their buffers and their charge too,
// without the decoder being told. It holds the cap by value: one
// allocation per attempt, as capped alone was, and none per read or
// event.
type eventMeter struct {
	body capped
	x    *exchange
	run  int64 // bytes read since the last event was handed over
	peak int64 // the largest run, charged
}

func (m *eventMeter) Read(p []byte) (int, error) {
	n, err := m.body.Read(p)
	m.run += int64(n)
	if m.run > m.peak {
		m.x.hold(int(eventCopies * (m.run - m.peak)))
		m.peak = m.run
	}
	return n, err
}

// delivered notes that the decoder handed over an event (or an error):
// the bytes read until now are in it or in the reader's window.
func (m *eventMeter) delivered() { m.run = 0 }
