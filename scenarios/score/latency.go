package score

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// RankOf returns the nearest-rank index of quantile q among n values.
func RankOf(q float64, n int) int {
	i := int(math.Ceil(q*float64(n))) - 1
	return min(max(i, 0), n-1)
}

// percentiles returns the nearest-rank percentiles of ds, reordering ds.
func percentiles(ds []time.Duration) Percentiles {
	p := Percentiles{N: len(ds)}
	if len(ds) == 0 {
		return p
	}
	ranks := []int{RankOf(0.50, len(ds)), RankOf(0.95, len(ds)), RankOf(0.99, len(ds))}
	var v [3]time.Duration
	if len(ds) >= histSelectMin {
		histSelect(ds, ranks, v[:])
	} else {
		// Each selection leaves the smaller values before the rank, so
		// the next (lower) rank is looked for in that part only.
		v[2] = selectNth(ds, ranks[2])
		v[1] = selectNth(ds[:ranks[2]+1], ranks[1])
		v[0] = selectNth(ds[:ranks[1]+1], ranks[0])
	}
	p.P50, p.P95, p.P99 = v[0], v[1], v[2]
	return p
}

// histSelectMin is the size from which histSelect beats selectNth.
const histSelectMin = 1 << 13

// histSelect sets out[i] to the value of rank ranks[i] (ascending) in ds,
// in three passes: the range of ds, a histogram of 2^16 equal-width buckets
// over it, and a gathering of the few buckets that hold the ranks, which
// are then searched with selectNth. ds is left as it was.
func histSelect(ds []time.Duration, ranks []int, out []time.Duration) {
	lo, hi := ds[0], ds[0]
	for _, v := range ds {
		lo, hi = min(lo, v), max(hi, v)
	}
	shift := max(bits.Len64(uint64(hi)-uint64(lo))-16, 0)
	key := func(v time.Duration) int { return int((uint64(v) - uint64(lo)) >> shift) }
	hist := make([]int32, key(hi)+1)
	for _, v := range ds {
		hist[key(v)]++
	}
	// The bucket of each rank and the rank within it.
	bk := make([]int, len(ranks))
	within := make([]int, len(ranks))
	b, below := 0, 0 // values in buckets before b
	for i, r := range ranks {
		for below+int(hist[b]) <= r {
			below += int(hist[b])
			b++
		}
		bk[i], within[i] = b, r-below
	}
	// Gather the values of those buckets (at most three), each bucket in
	// one slice.
	vals := make([][]time.Duration, len(ranks))
	for i := range ranks {
		if i > 0 && bk[i] == bk[i-1] {
			continue
		}
		vals[i] = make([]time.Duration, 0, hist[bk[i]])
	}
	for _, v := range ds {
		k := key(v)
		for i := range bk {
			if k == bk[i] {
				vals[i] = append(vals[i], v)
				break
			}
		}
	}
	for i := range ranks {
		j := i
		for j > 0 && bk[j] == bk[j-1] {
			j--
		}
		out[i] = selectNth(vals[j], within[i])
	}
}

// selectNth reorders ds so that ds[k] is the value a sort would put there,
// with no greater value before it and no smaller one after it, and returns
// it. Expected linear time; it falls back to sorting on inputs that defeat
// its pivots.
func selectNth(ds []time.Duration, k int) time.Duration {
	lo, hi := 0, len(ds) // the k-th is in ds[lo:hi]
	budget := 2 * bits.Len(uint(len(ds)))
	for hi-lo > 16 {
		if budget--; budget < 0 {
			slices.Sort(ds[lo:hi])
			return ds[k]
		}
		// Median of three as the pivot.
		m := lo + (hi-lo)/2
		a, b, c := ds[lo], ds[m], ds[hi-1]
		pv := max(min(a, b), min(max(a, b), c))
		// Three-way partition: [lo,lt) < pv, [lt,gt) == pv, [gt,hi) > pv.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch v := ds[i]; {
			case v < pv:
				ds[lt], ds[i] = v, ds[lt]
				lt++
				i++
			case v > pv:
				gt--
				ds[gt], ds[i] = v, ds[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return pv
		}
	}
	slices.Sort(ds[lo:hi])
	return ds[k]
}

// latency compares the latencies of t with the baseline (requests started
// outside every fault window).
func (s *scorer) latency(t *tally) Latency {
	l := Latency{
		BaselineTTFT: s.baseTTFT, FaultTTFT: percentiles(t.ttft),
		BaselineInterToken: s.baseITL, FaultInterToken: percentiles(t.itl),
		BaselineTotal: s.baseTotal, FaultTotal: percentiles(t.total),
	}
	failed := make([]time.Duration, 0, len(s.baseFailed)+len(t.failed))
	failed = append(append(failed, s.baseFailed...), t.failed...)
	l.Failed = percentiles(failed)
	l.TTFTPenalty = ratio(float64(l.FaultTTFT.P95), float64(l.BaselineTTFT.P95))
	l.TotalPenalty = ratio(float64(l.FaultTotal.P95), float64(l.BaselineTotal.P95))
	l.InterTokenPenalty = ratio(float64(l.FaultInterToken.P95), float64(l.BaselineInterToken.P95))
	return l
}
