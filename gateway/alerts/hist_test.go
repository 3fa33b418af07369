package alerts

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// histIndex (a search in precomputed bounds) puts every duration in the
// bucket the logarithm gives: around each bucket bound, at the extremes and
// anywhere else.
func TestHistIndexMatchesLog(t *testing.T) {
	check := func(d time.Duration) {
		if got, want := histIndex(d), histIndexLog(d); got != want {
			t.Fatalf("histIndex(%d) = %d, histIndexLog = %d", int64(d), got, want)
		}
		if got, want := histSearch(d), histIndexLog(d); got != want {
			t.Fatalf("histSearch(%d) = %d, histIndexLog = %d", int64(d), got, want)
		}
	}
	for k := range 63 {
		for _, d := range []time.Duration{1<<k - 1, 1 << k, 1<<k + 1} {
			check(d)
		}
	}
	for _, d := range []time.Duration{math.MinInt64, -1, 0, 1, time.Millisecond, time.Millisecond + 1, time.Hour, math.MaxInt64} {
		check(d)
	}
	for i := 1; i < histBuckets; i++ {
		for k := time.Duration(-2000); k <= 2000; k++ {
			check(histFrom[i] + k)
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		d := time.Duration(rapid.Int64Range(0, int64(10*time.Minute)).Draw(rt, "d"))
		if got, want := histIndex(d), histIndexLog(d); got != want {
			rt.Fatalf("histIndex(%d) = %d, histIndexLog = %d", int64(d), got, want)
		}
	})
}
