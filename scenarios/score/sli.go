package score

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
		a.GoodRate = float64(a.Good) / n
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
	// Of ended requests that succeeded: the TTFTs and mean inter-token
	// times of streamed ones, the total times of the others; durations of
	// those that failed.
	ttft, itl, total, failed []time.Duration
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
	if r.good {
		t.avail.Good++
	}
	switch r.outcome {
	case outServed:
		t.avail.Served++
	case outDegraded:
		t.avail.Degraded++
	default:
		t.avail.Failed++
	}
}

// collect adds r's latencies: streamed and non-streamed requests apart.
func (t *tally) collect(s *scorer, r *reqRec) {
	if !r.ended {
		return
	}
	if r.outcome == outFailed {
		t.failed = append(t.failed, r.dur)
		return
	}
	if !r.stream {
		t.total = append(t.total, r.dur)
		return
	}
	if r.ttft > 0 {
		t.ttft = append(t.ttft, r.ttft)
	}
	if d, ok := s.interToken(r); ok {
		t.itl = append(t.itl, d)
	}
}

// interToken is the mean time between tokens of a streamed request's
// answer: its serving attempt's time after the first token over the tokens
// that followed it.
func (s *scorer) interToken(r *reqRec) (time.Duration, bool) {
	if r.served < 0 {
		return 0, false
	}
	a := &s.atts[r.served]
	if a.out < 2 || a.ttft <= 0 {
		return 0, false
	}
	return (time.Duration(a.end-a.start) - a.ttft) / time.Duration(a.out-1), true
}

// isGood reports whether an ended request met every part of the SLO that
// is judged per request (GoodEnd, the rule stop_when applies during a run).
func (s *scorer) isGood(r *reqRec) bool {
	return r.ended && GoodEnd(&s.slo, EndFacts{OK: r.outcome != outFailed, Stream: r.stream,
		Corrupted: r.bad, TTFT: r.ttft, Dur: r.dur})
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
	okB, goodB, totB := s.newBins(), s.newBins(), s.newBins()
	correctB, fastB := s.newBins(), s.newBins()
	pct := s.slo.TTFT.P95 > 0 || s.slo.Latency.P95 > 0
	if pct {
		s.ttftBins, s.totalBins = make([][]time.Duration, s.nbins), make([][]time.Duration, s.nbins)
	}
	s.ttftAt = make([]int, s.npts+1)
	evals := s.in.hasEvals()
	for i := range s.reqs {
		r := &s.reqs[i]
		r.good = s.isGood(r)
		all.count(r)
		if r.ended && r.outcome != outFailed {
			if r.stream && r.ttft > 0 {
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
				if pct && r.end >= 0 {
					b := s.binAt(r.end)
					if r.stream && r.ttft > 0 {
						s.ttftBins[b] = append(s.ttftBins[b], r.ttft)
					} else if !r.stream {
						s.totalBins[b] = append(s.totalBins[b], r.dur)
					}
				}
			}
			if r.good {
				s.put(goodB, r.end, 1)
			}
			ok := r.outcome != outFailed
			if ok && !r.bad {
				s.put(correctB, r.end, 1)
			}
			if ok && GoodEnd(&SLO{TTFT: s.slo.TTFT, Latency: s.slo.Latency}, EndFacts{OK: true, Stream: r.stream, TTFT: r.ttft, Dur: r.dur}) {
				s.put(fastB, r.end, 1)
			}
		}
		t := base
		if r.inFault {
			t = fault
		}
		t.requests++
		t.spend += r.cost
		t.collect(s, r)
	}
	s.okEnd, s.goodEnd, s.allEnd = counts(okB), counts(goodB), counts(totB)
	s.correctEnd, s.fastEnd = counts(correctB), counts(fastB)
	s.baseFailed = base.failed // read by every latency, never reordered
	s.baseTTFT, s.baseITL, s.baseTotal = percentiles(base.ttft), percentiles(base.itl), percentiles(base.total)
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
		t.collect(s, r)
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

// sliBad reports whether the SLI window of w bins ending at bin edge k
// breaks the SLO: its share of good requests (by end time) is below the
// success rate, or a declared 95th percentile is over its bound.
func (s *scorer) sliBad(k, w int) bool {
	tot := s.allEnd.sum(k-w, k)
	if tot > 0 && s.goodEnd.sum(k-w, k)/tot < s.slo.SuccessRate-1e-12 {
		return true
	}
	return overP95(s.ttftBins, k-w, k, s.slo.TTFT.P95) || overP95(s.totalBins, k-w, k, s.slo.Latency.P95)
}

// SLO parts, by their names in BreachByPart.
const (
	PartSuccess     = "success"     // the share of requests that succeeded
	PartCorrectness = "correctness" // ... and were not corrupted answers
	PartLatency     = "latency"     // ... and kept to the per-request latency bound (ttft.max, latency.max)
	PartTTFTP95     = "ttft_p95"    // the window's p95 time to first token
	PartLatencyP95  = "latency_p95" // the window's p95 total time
)

// breachByPart is how long each declared part of the SLO was broken over
// the bin edges (lo, hi]: the share of requests meeting it below the
// success rate, or a window p95 over its bound. The good-request SLI
// (BreachTime) breaks when any part does; this says which did. Success is
// always a part; the others only when the SLO declares them.
func (s *scorer) breachByPart(lo, hi int) map[string]time.Duration {
	w := max(int(s.slo.Window/bin), 1)
	out := map[string]time.Duration{PartSuccess: 0}
	if s.slo.Correctness {
		out[PartCorrectness] = 0
	}
	if s.slo.TTFT.Max > 0 || s.slo.Latency.Max > 0 {
		out[PartLatency] = 0
	}
	if s.slo.TTFT.P95 > 0 {
		out[PartTTFTP95] = 0
	}
	if s.slo.Latency.P95 > 0 {
		out[PartLatencyP95] = 0
	}
	below := func(p *prefix, k int) bool {
		tot := s.allEnd.sum(k-w, k)
		return tot > 0 && p.sum(k-w, k)/tot < s.slo.SuccessRate-1e-12
	}
	for k := lo + 1; k <= hi; k++ {
		for part := range out {
			var bad bool
			switch part {
			case PartSuccess:
				bad = below(&s.okEnd, k)
			case PartCorrectness:
				bad = below(&s.correctEnd, k)
			case PartLatency:
				bad = below(&s.fastEnd, k)
			case PartTTFTP95:
				bad = overP95(s.ttftBins, k-w, k, s.slo.TTFT.P95)
			case PartLatencyP95:
				bad = overP95(s.totalBins, k-w, k, s.slo.Latency.P95)
			}
			if bad {
				out[part] += bin
			}
		}
	}
	return out
}

// overP95 reports whether the 95th percentile of the samples in bins
// [from, to) is over bound (never when bound is 0 or there are none).
func overP95(bins [][]time.Duration, from, to int, bound time.Duration) bool {
	if bound <= 0 {
		return false
	}
	var ds []time.Duration
	for b := max(from, 0); b < min(to, len(bins)); b++ {
		ds = append(ds, bins[b]...)
	}
	return len(ds) > 0 && percentiles(ds).P95 > bound
}
