package score

import (
	"time"
)

func (s *scorer) inAnyFault(t int64) bool {
	for i := range s.faults {
		if f := &s.faults[i]; t >= f.from && t < f.to {
			return true
		}
	}
	return false
}

// shareSeries returns per-bin counts of attempts by start time (okOnly:
// successful ones by end time) on target and on all targets. The series of
// every scored target are built in one pass, on first use.
func (s *scorer) shareSeries(target string, okOnly bool) (mine, all prefix) {
	if s.startBy == nil {
		s.buildShareSeries()
	}
	ti, _ := s.names.find(target) // every fault target is in names
	if okOnly {
		return s.okBy[ti], s.okAll
	}
	return s.startBy[ti], s.startAll
}

func (s *scorer) buildShareSeries() {
	// slot[t] is where target t's series are in mine, -1 for none.
	slot := make([]int, len(s.names.names))
	for i := range slot {
		slot[i] = -1
	}
	tgts := s.tgtIdx // every fault target is a scored target
	for k, ti := range tgts {
		slot[ti] = k
	}
	startAll, okAll := s.newBins(), s.newBins()
	startMine, okMine := make([][]int32, len(tgts)), make([][]int32, len(tgts))
	for k := range tgts {
		startMine[k], okMine[k] = s.newBins(), s.newBins()
	}
	for i := range s.atts {
		a := &s.atts[i]
		k := slot[a.tgt]
		if a.start >= 0 {
			b := s.binAt(a.start)
			startAll[b]++
			if k >= 0 {
				startMine[k][b]++
			}
		}
		if a.ok && a.ended && a.end >= 0 {
			b := s.binAt(a.end)
			okAll[b]++
			if k >= 0 {
				okMine[k][b]++
			}
		}
	}
	s.startAll, s.okAll = counts(startAll), counts(okAll)
	s.startBy, s.okBy = make(map[int32]prefix, len(tgts)), make(map[int32]prefix, len(tgts))
	for k, ti := range tgts {
		s.startBy[ti], s.okBy[ti] = counts(startMine[k]), counts(okMine[k])
	}
}

// baselineBins returns the bin range of f's baseline: from the end of the
// latest fault that ended before f started (or the run start) to f's start.
func (s *scorer) baselineBins(f faultWin) (int, int) {
	from := s.start
	for _, g := range s.faults {
		if !g.end.After(f.start) && g.end.After(from) {
			from = g.end
		}
	}
	return s.binOf(from), s.binOf(f.start)
}

// baselineShare is target's share of (ok) attempts before f; when that
// period has no traffic, its share over all time outside fault windows.
func (s *scorer) baselineShare(f faultWin, mine, all prefix) float64 {
	lo, hi := s.baselineBins(f)
	if n := all.sum(lo, hi); n > 0 {
		return mine.sum(lo, hi) / n
	}
	m, n, _ := s.outsideFaults(mine, all)
	return ratio(m, n)
}

// baselineLoad is the rate (per second) of attempts on f's target, of
// series mine, before f; when that period has no traffic (a fault at the
// start, a step right after another on the target), over all time outside
// fault windows: the baseline rule of baselineShare.
func (s *scorer) baselineLoad(f faultWin, mine prefix) float64 {
	lo, hi := s.baselineBins(f)
	_, all := s.shareSeries(f.target, false)
	if all.sum(lo, hi) > 0 {
		return mine.sum(lo, hi) / (float64(hi-lo) * bin.Seconds())
	}
	m, _, bins := s.outsideFaults(mine, all)
	if bins == 0 {
		return 0
	}
	return m / (float64(bins) * bin.Seconds())
}

// outsideFaults sums mine and all over the bins outside every fault
// window, and counts those bins.
func (s *scorer) outsideFaults(mine, all prefix) (m, n float64, bins int) {
	for k := 0; k < s.nbins; k++ {
		if s.inAnyFault(s.off(s.start.Add(time.Duration(k) * bin))) {
			continue
		}
		m += mine.sum(k, k+1)
		n += all.sum(k, k+1)
		bins++
	}
	return m, n, bins
}

// recover: from the fault's end, the first window end after which the
// target's share of successful attempts stays at or above 90% of its
// baseline share until the run (or the next fault on the target) ends. A
// fault whose end the next fault on its target meets within Adjacency is
// superseded; one that lasts until the run ends is cut short.
func (s *scorer) recover(fs *FaultScore, f faultWin) {
	mine, all := s.shareSeries(f.target, true)
	base := s.baselineShare(f, mine, all)
	fs.BaselineShare = base
	horizon := s.end
	for _, g := range s.faults {
		if g.target != f.target || !g.start.After(f.start) {
			continue
		}
		if g.start.Sub(f.end) <= Adjacency && g.end.After(f.end) {
			// The next step meets this one's end within a scheduling
			// tick (or overlaps it): recovery is measured on it.
			fs.Superseded = true
			return
		}
		if !g.start.Before(f.end) && g.start.Before(horizon) {
			horizon = g.start
		}
	}
	if !horizon.After(f.end) {
		// The fault lasts until the run ends (as scheduled, or because the
		// run was aborted): no time to recover in, and no later step to
		// measure recovery on.
		fs.CutShort = true
		return
	}
	if base == 0 {
		fs.Recovered = true
		return
	}
	w := int(s.slo.Window / bin)
	lo, hi := s.binOf(f.end), s.binOf(horizon)
	first := -1
	for k := lo; k <= hi; k++ {
		n := all.sum(k-w, k)
		ok := n > 0 && mine.sum(k-w, k)/n >= recoverShare*base-1e-12
		if ok && first < 0 {
			first = k
		} else if !ok {
			first = -1
		}
	}
	if first >= 0 {
		fs.Recovered = true
		fs.TTR = max(s.start.Add(time.Duration(first)*bin).Sub(f.end), 0)
	}
}
