package gateway

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
)

// Memory is bounded in bytes, not counts: every inference request takes
// from one gateway-wide budget (limits.max_inflight_bytes) the memory it
// will hold — its body, its decoded form (the decoded-size estimate of
// inbound_scan.go, which bounds it from above) and, for a stream, the
// buffers held while it is relayed — before the body is read, and gives it
// back when it ends. Beyond the budget a request is refused with 503 and
// Retry-After in its API's shape, before a byte of its body is read. The
// upstream answers a request holds (a non-streamed body, a stream's text
// kept for continuation) are counted as they arrive (exchange.hold): an
// admitted request is not cut for them, but new requests are refused while
// they fill the budget.

// streamHoldBytes is what a relayed stream holds beyond its request: the
// upstream connection's buffers, the stream decoder's and encoder's, and
// the answer kept for continuation (most answers; a longer one grows past
// it, up to its target's max_response_bytes).
const streamHoldBytes = 64 << 10

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
		n += streamHoldBytes
	}
	return n
}
