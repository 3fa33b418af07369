package score

import "time"

// EndFacts is what a user request got, as GoodEnd judges it.
type EndFacts struct {
	OK, Stream, Corrupted bool
	TTFT, Dur             time.Duration
}

// GoodEnd reports whether a request that ended with f met every part of
// slo judged per request: it succeeded, was not a corrupted answer (when
// correctness is part of the SLO) and kept to the per-request latency
// bound of its kind (TTFT for streams, total time otherwise). The scores
// judge recorded requests by the same rule (scorer.isGood).
func GoodEnd(slo *SLO, f EndFacts) bool {
	if !f.OK || (slo.Correctness && f.Corrupted) {
		return false
	}
	if f.Stream {
		return slo.TTFT.Max <= 0 || f.TTFT <= slo.TTFT.Max
	}
	return slo.Latency.Max <= 0 || f.Dur <= slo.Latency.Max
}
