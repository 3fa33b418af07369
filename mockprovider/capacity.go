package mockprovider

import (
	"math"
	"time"
)

// bucket is a token bucket of size per minute, refilled continuously. Time is
// an argument; a time earlier than the last seen one refills nothing.
type bucket struct {
	size   float64
	tokens float64
	last   time.Time
}

func newBucket(perMinute int) *bucket {
	if perMinute <= 0 {
		return nil
	}
	return &bucket{size: float64(perMinute), tokens: float64(perMinute)}
}

func (b *bucket) advance(now time.Time) {
	if b.last.IsZero() {
		b.last = now
		return
	}
	if dt := now.Sub(b.last); dt > 0 {
		b.tokens = math.Min(b.size, b.tokens+b.size*dt.Minutes())
		b.last = now
	}
}

// wait returns how long until n tokens are available (0 if they are now).
func (b *bucket) wait(n float64) time.Duration {
	if n > b.size {
		n = b.size
	}
	if b.tokens >= n {
		return 0
	}
	return time.Duration((n - b.tokens) / b.size * float64(time.Minute))
}

// resetIn returns how long until the bucket is full again.
func (b *bucket) resetIn() time.Duration {
	return time.Duration((b.size - b.tokens) / b.size * float64(time.Minute))
}

func (b *bucket) remaining() int { return max(int(b.tokens), 0) }

// limiter is one Capacity in force: buckets and the in-flight count.
type limiter struct {
	maxConc  int
	inflight int
	rpm, tpm *bucket
}

func newLimiter(c Capacity) *limiter {
	if c == (Capacity{}) {
		return nil
	}
	return &limiter{maxConc: c.MaxConcurrency, rpm: newBucket(c.RPM), tpm: newBucket(c.TPM)}
}

// shed reasons.
const (
	shedConcurrency = "concurrency"
	shedRPM         = "rpm"
	shedTPM         = "tpm"
)

// check returns the shed reason and retry delay, or "" when the request fits.
func (l *limiter) check(now time.Time, tokens int) (string, time.Duration) {
	if l == nil {
		return "", 0
	}
	if l.maxConc > 0 && l.inflight >= l.maxConc {
		return shedConcurrency, time.Second
	}
	if l.rpm != nil {
		l.rpm.advance(now)
		if w := l.rpm.wait(1); w > 0 {
			return shedRPM, w
		}
	}
	if l.tpm != nil {
		l.tpm.advance(now)
		if w := l.tpm.wait(float64(tokens)); w > 0 {
			return shedTPM, w
		}
	}
	return "", 0
}

// take admits a request that check accepted.
func (l *limiter) take(tokens int) {
	if l == nil {
		return
	}
	l.inflight++
	if l.rpm != nil {
		l.rpm.tokens--
	}
	if l.tpm != nil {
		l.tpm.tokens -= math.Min(float64(tokens), l.tpm.size)
	}
}

func (l *limiter) release() {
	if l != nil && l.inflight > 0 {
		l.inflight--
	}
}
