package score

import (
	"slices"
)

// Price is a target's price per million tokens.
type Price struct {
	InputPerMTok       float64 `json:"input_per_mtok"`
	OutputPerMTok      float64 `json:"output_per_mtok"`
	CachedInputPerMTok float64 `json:"cached_input_per_mtok"`
}

// Cost returns the price of a usage (in includes cached).
func (p Price) Cost(in, cached, out int) float64 {
	unc := max(in-cached, 0)
	return (float64(unc)*p.InputPerMTok + float64(cached)*p.CachedInputPerMTok + float64(out)*p.OutputPerMTok) / 1e6
}

func (s *scorer) primaryFor(route string) string {
	if p, ok := s.in.Primary[route]; ok {
		return p
	}
	return s.in.PrimaryTarget
}

// counterfactualOf prices a served request's answering usage at its route's
// primary price (0 when it was not served).
func (s *scorer) counterfactualOf(r *reqRec) float64 {
	if r.served < 0 {
		return 0
	}
	a := &s.atts[r.served]
	if s.routeHas[r.rt] {
		return s.routeP[r.rt].Cost(a.in, a.cache, a.out)
	}
	return a.cost
}

// warmupPenalty: per target, the cost of input tokens that missed the prompt
// cache beyond the target's warm hit ratio (its hit ratio over the later half
// of its attempts).
func (s *scorer) warmupPenalty() float64 {
	// The attempts of each target, in order, in one array.
	at := make([]int, len(s.names.names)+1) // target t's are idx[at[t]:at[t+1]]
	for t := range len(s.names.names) {
		at[t+1] = at[t] + s.tt[t].warm
	}
	idx := make([]int32, at[len(s.names.names)])
	fill := slices.Clone(at)
	for i := range s.atts {
		if a := &s.atts[i]; a.ended && a.in > 0 {
			idx[fill[a.tgt]] = int32(i)
			fill[a.tgt]++
		}
	}
	pen := 0.0
	for p, t := range s.tgtNames {
		t0 := s.tgtIdx[p]
		as := idx[at[t0]:at[t0+1]]
		pr, ok := s.in.Prices[t]
		if len(as) < 2 || !ok || pr.InputPerMTok <= pr.CachedInputPerMTok {
			continue
		}
		var in, cached int
		for _, i := range as[len(as)/2:] {
			in += s.atts[i].in
			cached += s.atts[i].cache
		}
		h := float64(cached) / float64(in)
		for _, i := range as {
			a := &s.atts[i]
			if miss := h*float64(a.in) - float64(a.cache); miss > 0 {
				pen += miss * (pr.InputPerMTok - pr.CachedInputPerMTok) / 1e6
			}
		}
	}
	return pen
}
