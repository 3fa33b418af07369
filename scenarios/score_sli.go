package scenarios

import (
	"time"
)

func (s *scorer) binOf(t time.Time) int { return s.binAt(s.off(t)) }

func (s *scorer) binAt(off int64) int {
	i := int(off / int64(bin))
	return min(max(i, 0), s.nbins-1)
}

// prefix holds the prefix sums of a per-bin count.
type prefix []int32

func (p prefix) sum(from, to int) float64 { // bins [from, to)
	from = max(from, 0)
	to = min(to, len(p)-1)
	if to <= from {
		return 0
	}
	return float64(p[to] - p[from])
}

// counts turns per-bin counts into their prefix sums, in place: bins must
// have one spare slot at the end.
func counts(bins []int32) prefix {
	var run int32
	for i, v := range bins {
		bins[i] = run
		run += v
	}
	return prefix(bins)
}

// newBins returns zeroed per-bin counts with the spare slot counts needs.
func (s *scorer) newBins() []int32 { return make([]int32, s.nbins+1) }

// rates fills in the rates of a's counts.
func rates(a Availability) Availability {
	if a.Requests > 0 {
		n := float64(a.Requests)
		a.ServedRate = float64(a.Served) / n
		a.DegradedRate = float64(a.Degraded) / n
		a.FailedRate = float64(a.Failed) / n
		a.Success = float64(a.Served+a.Degraded) / n
	}
	return a
}

// tally accumulates what the scores read from a set of requests, taken in
// log order.
type tally struct {
	avail              Availability // counts; rates by rates
	requests, attempts int
	reqBins, attBins   []int32 // request starts and their attempts by bin, when kept
	spend              float64 // summed cost
	bad                int
	// Of ended requests: TTFTs and durations of those that succeeded,
	// durations of those that failed.
	ttft, total, failed []time.Duration
}

// point returns the series point that t (an offset) falls in.
func (s *scorer) point(t int64) int {
	return min(max(int(t/int64(s.step)), 0), s.npts-1)
}

// count adds r to the request, attempt and availability counts.
func (t *tally) count(r *reqRec) {
	t.requests++
	t.attempts += int(r.attempts)
	if !r.ended {
		return
	}
	t.avail.Requests++
	switch r.outcome {
	case outServed:
		t.avail.Served++
	case outDegraded:
		t.avail.Degraded++
	default:
		t.avail.Failed++
	}
}

// collect adds r's latencies.
func (t *tally) collect(r *reqRec) {
	if !r.ended {
		return
	}
	if r.outcome == outFailed {
		t.failed = append(t.failed, r.dur)
		return
	}
	if r.ttft > 0 {
		t.ttft = append(t.ttft, r.ttft)
	}
	t.total = append(t.total, r.dur)
}

func (t *tally) spendPerRequest() float64 {
	if t.requests == 0 {
		return 0
	}
	return t.spend / float64(t.requests)
}

// sums makes the one pass over the requests that the overall scores and
// the baseline need.
func (s *scorer) sums() {
	nBase := 0
	for i := range s.reqs {
		if !s.reqs[i].inFault {
			nBase++
		}
	}
	n := len(s.reqs)
	all := &s.all
	all.reqBins, all.attBins = s.newBins(), s.newBins()
	base, fault := &s.base, &s.fault
	base.ttft, base.total = make([]time.Duration, 0, nBase), make([]time.Duration, 0, nBase)
	fault.ttft, fault.total = make([]time.Duration, 0, n-nBase), make([]time.Duration, 0, n-nBase)
	okB, totB := s.newBins(), s.newBins()
	s.ttftAt = make([]int, s.npts+1)
	evals := s.in.hasEvals()
	for i := range s.reqs {
		r := &s.reqs[i]
		all.count(r)
		if r.ended && r.outcome != outFailed {
			if r.ttft > 0 {
				s.ttftAt[s.point(r.end)+1]++
			}
			if r.tgt >= 0 {
				t := &s.tt[r.tgt]
				t.served++
				if r.bad {
					t.bad++
				}
				if !evals && r.target != 0 && r.served >= 0 {
					t.n++
					if !r.bad {
						t.pass++
					}
				}
			}
		}
		if r.start >= 0 && r.start <= s.endOff {
			s.put(all.reqBins, r.start, 1)
			s.put(all.attBins, r.start, r.attempts)
		}
		if r.served >= 0 {
			s.cf += s.counterfactualOf(r)
		}
		if r.ended {
			s.put(totB, r.end, 1)
			if r.outcome != outFailed {
				s.put(okB, r.end, 1)
			}
		}
		t := base
		if r.inFault {
			t = fault
		}
		t.requests++
		t.spend += r.cost
		t.collect(r)
	}
	s.okEnd, s.allEnd = counts(okB), counts(totB)
	s.baseFailed = base.failed // read by every latency, never reordered
	s.baseTTFT, s.baseTotal = percentiles(base.ttft), percentiles(base.total)
}

// window tallies the requests started in f.
func (s *scorer) window(f faultWin) tally {
	t := tally{reqBins: s.newBins(), attBins: s.newBins()}
	for i := range s.reqs {
		r := &s.reqs[i]
		if r.start < f.from || r.start >= f.to {
			continue
		}
		t.count(r)
		t.spend += r.cost
		s.put(t.reqBins, r.start, 1)
		s.put(t.attBins, r.start, r.attempts)
		if r.bad {
			t.bad++
		}
		t.collect(r)
	}
	return t
}

// retry scores t's attempts; its bins hold the requests started in
// [from, to).
func (s *scorer) retry(t *tally, from, to time.Time) Retry {
	rt := Retry{Requests: t.requests, Attempts: t.attempts}
	rt.Amplification = ratio(float64(rt.Attempts), float64(rt.Requests))
	// Peak over sliding 10s windows of request start times.
	reqS, attS := counts(t.reqBins), counts(t.attBins)
	w := int(peakWindow / bin)
	lo, hi := s.binOf(from), s.binOf(to)
	for k := lo + 1; k <= hi+1; k++ {
		n := reqS.sum(k-w, k)
		if n < peakMinRequests {
			continue
		}
		if a := attS.sum(k-w, k) / n; a > rt.PeakAmplification+1e-12 {
			rt.PeakAmplification = a
			rt.PeakAt = s.start.Add(time.Duration(k) * bin)
		}
	}
	if rt.PeakAmplification == 0 {
		rt.PeakAmplification = rt.Amplification
	}
	return rt
}
