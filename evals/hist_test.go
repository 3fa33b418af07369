package evals

import (
	"testing"

	"pgregory.net/rapid"
)

// The array-backed histograms hold what the maps they replace held: same
// reads after any sequence of increments, decrements, scalings and decays,
// for counts in the arrays, past them and negative.
func TestHistogramsMatchMaps(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var win winHist
		var base baseHist
		winRef := map[int32]int32{}
		baseRef := map[int32]float64{}
		values := rapid.SliceOfN(rapid.OneOf(
			rapid.Int32Range(0, 300),
			rapid.Int32Range(denseTokens-3, denseTokens+3),
			rapid.Int32Range(-2, 0),
			rapid.Int32Range(1000, 5000),
		), 1, 40).Draw(rt, "values")
		n := rapid.IntRange(1, 300).Draw(rt, "n")
		for range n {
			v := rapid.SampledFrom(values).Draw(rt, "v")
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op < 3:
				win.inc(v)
				winRef[v]++
			case op < 5:
				win.dec(v)
				if k := winRef[v] - 1; k > 0 {
					winRef[v] = k
				} else {
					delete(winRef, v)
				}
			case op < 7:
				base.inc(v)
				baseRef[v]++
			case op < 8:
				f := rapid.Float64Range(0, 1).Draw(rt, "scale")
				base.scale(f)
				for k, x := range baseRef {
					baseRef[k] = x * f
				}
			default:
				f := rapid.Float64Range(0.3, 1).Draw(rt, "decay")
				base.decay(f)
				for k, x := range baseRef {
					if x *= f; x < 0.01 {
						delete(baseRef, k)
					} else {
						baseRef[k] = x
					}
				}
			}
			if base.len() != len(baseRef) {
				rt.Fatalf("baseline holds %d counts, the map %d", base.len(), len(baseRef))
			}
			for _, v := range values {
				if got, want := win.get(v), winRef[v]; got != want {
					rt.Fatalf("window[%d] = %d, want %d", v, got, want)
				}
				if got, want := base.get(v), baseRef[v]; got != want {
					rt.Fatalf("baseline[%d] = %v, want %v", v, got, want)
				}
			}
		}
	})
}
