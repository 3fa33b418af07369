package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ticks are an axis's tick values, in order, and how to print one.
type ticks struct {
	vals  []float64
	label func(float64) string
}

// timeSteps are the round steps of a time axis, in seconds: 1-2-5 below a
// second, then 1, 2, 5, 10, 15 and 30 seconds, minutes and hours, days.
var timeSteps = []float64{
	0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5,
	1, 2, 5, 10, 15, 30,
	60, 120, 300, 600, 900, 1800,
	3600, 7200, 10800, 21600, 43200, 86400,
}

// maxTimeTicks bounds the intervals of a time axis: a label such as
// "12m30s" is about 40 px wide, a chart's time axis 880 px.
const maxTimeTicks = 10

// timeTicks are the ticks of a time axis over [0, xmax] seconds: the
// smallest round step that gives at most maxTimeTicks intervals, printed
// compactly ("0s", "30s", "1m", "1m30s", "2h").
func timeTicks(xmax float64) ticks {
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if xmax/s <= maxTimeTicks+1e-9 {
			step = s
			break
		}
	}
	var vals []float64
	for i := 0; float64(i)*step <= xmax+1e-9; i++ {
		vals = append(vals, float64(i)*step)
	}
	return ticks{vals: vals, label: fmtTick}
}

// durationTicks are the ticks of a duration value axis from 0 to at least
// hi seconds: round steps as on a time axis, at most 5 intervals.
func durationTicks(hi float64) ticks {
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if hi/s <= 5 {
			step = s
			break
		}
	}
	return ticks{vals: upTo(0, hi, step), label: fmtTick}
}

// fmtTick prints a tick's time offset in seconds exactly and compactly:
// Go's notation without zero trailing units ("1m" rather than "1m0s").
func fmtTick(sec float64) string {
	s := time.Duration(math.Round(sec * 1e9)).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// niceStep is the smallest 1, 2 or 5 times a power of ten that is at least
// min and cuts span into at most n intervals.
func niceStep(span float64, n int, min float64) float64 {
	if span <= 0 {
		return math.Max(min, 1)
	}
	raw := span / float64(n)
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * e
	for _, m := range []float64{1, 2, 5} {
		if m*e >= raw*(1-1e-9) {
			step = m * e
			break
		}
	}
	return math.Max(step, min)
}

// upTo is lo, lo+step, … up to the first value at or above hi (at least
// one interval), each rounded to the step's decimals.
func upTo(lo, hi, step float64) []float64 {
	dec := decimals(step)
	vals := []float64{lo}
	for v := lo; v < hi-1e-9*step || len(vals) < 2; {
		v = roundDec(v+step, dec)
		vals = append(vals, v)
	}
	return vals
}

// decimals is how many decimals a 1-2-5 step needs.
func decimals(step float64) int {
	return max(0, -int(math.Floor(math.Log10(step)+1e-9)))
}

func roundDec(v float64, dec int) float64 {
	p := math.Pow(10, float64(dec))
	return math.Round(v*p) / p
}

// rateTicks are the ticks of a per-second rate axis from 0 to at least
// hi: whole numbers ("0/s", "5/s", "10/s"), at most 5 intervals.
func rateTicks(hi float64) ticks {
	step := niceStep(hi, 5, 1)
	return ticks{vals: upTo(0, hi, step), label: func(v float64) string { return fmt.Sprintf("%.0f/s", v) }}
}

// percentTicks are the ticks of a fraction axis from about lo to 1 (from
// 90% when lo is 1): round percentages, at most 5 intervals.
func percentTicks(lo float64) ticks {
	lo = clamp(lo, 0, 1)
	if lo >= 1 {
		lo = 0.9
	}
	step := niceStep(1-lo, 5, 0.0001)
	start := math.Max(0, math.Floor(lo/step+1e-9)*step)
	dec := decimals(step*100) + 2
	return ticks{vals: upTo(roundDec(start, dec), 1, step), label: func(v float64) string { return fmtPct(roundDec(v, dec)) }}
}

// moneyTicks are the ticks of a cost axis from 0 to at least hi.
func moneyTicks(hi float64) ticks {
	step := niceStep(hi, 5, 1e-6)
	dec := decimals(step)
	return ticks{vals: upTo(0, hi, step), label: func(v float64) string { return "$" + strconv.FormatFloat(v, 'f', dec, 64) }}
}

// indexTicks are the ticks of an axis of runs 0..n: one per run when they
// fit (at most maxTimeTicks), else every k-th.
func indexTicks(n float64, label func(float64) string) ticks {
	step := math.Max(1, math.Ceil(n/maxTimeTicks))
	var vals []float64
	for v := 0.0; v <= n+1e-9; v += step {
		vals = append(vals, v)
	}
	return ticks{vals: vals, label: label}
}
