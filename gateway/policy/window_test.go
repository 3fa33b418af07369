package policy

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// refWindow is the window without the cached newest bucket: every time is
// divided into its bucket (its slot; sums is the window's, which reads only
// the buckets).
type refWindow struct {
	window
}

func (w *refWindow) slot(now time.Time) int {
	return w.bucket(max(now.UnixNano()/w.width, w.cur))
}

// The window counts exactly like the plain division per sample, whatever
// the order of the times (backwards too, and before 1970) and the resets.
func TestWindowMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.Int64Range(1, int64(time.Minute)).Draw(t, "window"))
		w := newWindow(d)
		ref := refWindow{window{width: w.width, cur: w.cur}}
		base := rapid.SampledFrom([]int64{0, t0.UnixNano(), -int64(time.Hour)}).Draw(t, "base")
		now := base
		for i := range rapid.IntRange(1, 200).Draw(t, "steps") {
			if rapid.Bool().Draw(t, "small") {
				// Within a bucket or into the next: the cached newest bucket's edge.
				now += rapid.Int64Range(0, 2*w.width).Draw(t, "small_step")
			} else {
				now += rapid.Int64Range(-int64(d)/5, int64(d)/3).Draw(t, "step")
			}
			at := time.Unix(0, now)
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				w.reset()
				ref.a, ref.b = [nBuckets]float64{}, [nBuckets]float64{}
				for s := range ref.idx {
					ref.idx[s] = -1 << 62
				}
			case 1, 2:
				ga, gb := w.sums(at)
				ra, rb := ref.sums(at)
				if ga != ra || gb != rb {
					t.Fatalf("step %d: sums at %d = %v, %v; reference %v, %v", i, now, ga, gb, ra, rb)
				}
			default:
				w.add(at, 1, 2)
				s := ref.slot(at)
				ref.a[s]++
				ref.b[s] += 2
			}
		}
		ga, gb := w.sums(time.Unix(0, now))
		ra, rb := ref.sums(time.Unix(0, now))
		if ga != ra || gb != rb {
			t.Fatalf("final sums %v, %v; reference %v, %v", ga, gb, ra, rb)
		}
	})
}
