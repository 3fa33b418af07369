package policy

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// sub agrees with time.Sub: near each other, far apart (overflowing a
// Duration), in other locations, and with monotonic readings.
func TestSubMatchesTimeSub(t *testing.T) {
	mono := time.Now() // a time with a monotonic reading
	check := func(t1, t2 time.Time) {
		t.Helper()
		if got, want := sub(t1, t2), t1.Sub(t2); got != want {
			t.Fatalf("sub(%v, %v) = %v, time.Sub %v", t1, t2, got, want)
		}
	}
	for _, x := range []time.Time{{}, t0, mono, mono.Add(time.Hour), mono.Round(0), time.Unix(0, 0), time.Unix(1<<33, 0), time.Unix(-1<<33, 999_999_999),
		time.Unix(math.MaxInt64/4, 5), t0.In(time.FixedZone("x", 3600))} {
		for _, y := range []time.Time{{}, t0, mono, mono.Add(-time.Minute), t0.Add(-time.Nanosecond), time.Unix(0, 1), time.Unix(-1<<33+1, 0)} {
			check(x, y)
			check(y, x)
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		base := time.Unix(rapid.Int64Range(-1<<40, 1<<40).Draw(rt, "sec"), rapid.Int64Range(0, 999_999_999).Draw(rt, "nsec"))
		other := base.Add(time.Duration(rapid.Int64().Draw(rt, "d")))
		if rapid.Bool().Draw(rt, "far") {
			other = time.Unix(rapid.Int64Range(-1<<40, 1<<40).Draw(rt, "sec2"), rapid.Int64Range(0, 999_999_999).Draw(rt, "nsec2"))
		}
		if got, want := sub(base, other), base.Sub(other); got != want {
			rt.Fatalf("sub(%v, %v) = %v, time.Sub %v", base, other, got, want)
		}
		if got, want := sub(other, base), other.Sub(base); got != want {
			rt.Fatalf("sub(%v, %v) = %v, time.Sub %v", other, base, got, want)
		}
	})
}
