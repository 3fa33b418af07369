package policy

import (
	"math"
	"time"
)

// nBuckets is the resolution of every rolling window.
const nBuckets = 20

// window counts two quantities over a rolling window of nBuckets buckets.
// It advances lazily with the time it is given and copes with time going
// backwards (an old sample lands in the current bucket).
type window struct {
	width int64 // bucket width, ns
	cur   int64 // index of the newest bucket
	// hi is where the newest bucket ends (ns, exclusive) and cs its slot,
	// when cur >= 0; 0 otherwise. A time in [0, hi) lands in slot cs
	// without a division.
	hi   int64
	cs   int
	a, b [nBuckets]float64
	idx  [nBuckets]int64
}

func newWindow(d time.Duration) window {
	w := int64(d) / nBuckets
	if w <= 0 {
		w = 1
	}
	return window{width: w, cur: -1 << 62}
}

func (w *window) slot(now time.Time) int {
	ns := now.UnixNano()
	if ns >= 0 && ns < w.hi {
		return w.cs // ns/width <= cur: the newest bucket
	}
	i := max(ns/w.width, w.cur)
	s := w.bucket(i)
	w.hi, w.cs = 0, 0
	if i >= 0 && i < math.MaxInt64/w.width-1 {
		w.hi, w.cs = (i+1)*w.width, s
	}
	return s
}

// bucket makes bucket i (not before the newest) the newest and returns its
// slot, emptied when it held an older bucket.
func (w *window) bucket(i int64) int {
	w.cur = i
	s := int(i % nBuckets)
	if s < 0 {
		s += nBuckets
	}
	if w.idx[s] != i {
		w.idx[s], w.a[s], w.b[s] = i, 0, 0
	}
	return s
}

// add adds to both counters at now.
func (w *window) add(now time.Time, a, b float64) {
	s := w.slot(now)
	w.a[s] += a
	w.b[s] += b
}

// sums returns both counters over the window ending at now.
func (w *window) sums(now time.Time) (a, b float64) {
	i := now.UnixNano() / w.width
	if i < w.cur {
		i = w.cur
	}
	for s := range nBuckets {
		if d := i - w.idx[s]; d >= 0 && d < nBuckets {
			a += w.a[s]
			b += w.b[s]
		}
	}
	return a, b
}

func (w *window) reset() {
	w.hi, w.cs = 0, 0
	w.a, w.b, w.idx = [nBuckets]float64{}, [nBuckets]float64{}, [nBuckets]int64{}
	for s := range w.idx {
		w.idx[s] = -1 << 62
	}
}
