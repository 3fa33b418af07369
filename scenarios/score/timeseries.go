package score

import (
	"slices"
	"time"

	"github.com/brownout-dev/brownout/events"
)

// Series is the run over time, in fixed buckets, for charts: requests per
// serving target, user success rate (over the SLO window), p95 time to first
// token, cumulative cost against the counterfactual, and breaker states.
type Series struct {
	Step    time.Duration `json:"step_ns"`
	Targets []string      `json:"targets"` // order of Point.ByTarget
	Points  []Point       `json:"points"`
	// Breakers are the breaker and health states of each target as spans.
	Breakers []StateSpan `json:"breakers,omitempty"`
	// Timeline holds the notable events (everything but requests and
	// attempts), capped at MaxTimeline.
	Timeline []events.Event `json:"timeline,omitempty"`
}

// MaxTimeline caps Series.Timeline.
const MaxTimeline = 2000

// Point is one bucket of the series. T is its start as an offset from the run's start.
type Point struct {
	T        time.Duration `json:"t_ns"`
	Requests int           `json:"requests"`  // user requests that ended in the bucket
	ByTarget []int         `json:"by_target"` // successful requests by serving target (Series.Targets order)
	Failed   int           `json:"failed"`
	Degraded int           `json:"degraded"`
	// Success is the success rate over the SLO window ending at the bucket's end
	// (-1 when the window holds no request).
	Success float64 `json:"success"`
	// Good is the share of good requests (every per-request part of the
	// SLO met: the SLI) over the same window (-1 when it holds none).
	Good float64 `json:"good"`
	// P95TTFT is the p95 time to first token of the streamed requests
	// served in the bucket (0 when none): a non-streamed answer has no
	// first token apart from its whole.
	P95TTFT time.Duration `json:"p95_ttft_ns"`
	// Cost and Counterfactual are cumulative up to the bucket's end.
	Cost           float64 `json:"cost"`
	Counterfactual float64 `json:"counterfactual"`
}

// StateSpan is a target's breaker (Kind "breaker") or health (Kind "health")
// state over [From, To), as offsets from the run's start.
type StateSpan struct {
	Target string        `json:"target"`
	Kind   string        `json:"kind"`
	State  string        `json:"state"`
	From   time.Duration `json:"from_ns"`
	To     time.Duration `json:"to_ns"`
}

// seriesStep picks a bucket size giving at most ~300 points.
func seriesStep(d time.Duration) time.Duration {
	for _, s := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute} {
		if d/s <= 300 {
			return s
		}
	}
	return 10 * time.Minute
}

func (s *scorer) timeseries() Series {
	dur := s.end.Sub(s.start)
	step, n := s.step, s.npts
	ser := Series{Step: step, Targets: append([]string(nil), s.tgtNames...)}
	ser.Points = make([]Point, n)
	cf := make([]float64, n)
	byTarget := make([]int, n*len(ser.Targets))
	for i := range ser.Points {
		ser.Points[i].T = time.Duration(i) * step
		ser.Points[i].ByTarget = byTarget[i*len(ser.Targets) : (i+1)*len(ser.Targets) : (i+1)*len(ser.Targets)]
	}
	bucket := s.point
	// TTFTs of served requests by bucket (counted by sums), placed in one
	// array: bucket b's are ttfts[ttftAt[b]:ttftAt[b+1]].
	ttftAt := s.ttftAt
	for b := range n {
		ttftAt[b+1] += ttftAt[b]
	}
	ttfts := make([]time.Duration, ttftAt[n])
	fill := slices.Clone(ttftAt[:n])
	goods := make([]int, n)
	for i := range s.reqs {
		r := &s.reqs[i]
		if !r.ended {
			continue
		}
		b := bucket(r.end)
		p := &ser.Points[b]
		p.Requests++
		if r.good {
			goods[b]++
		}
		switch r.outcome {
		case outFailed:
			p.Failed++
		default:
			if r.outcome == outDegraded {
				p.Degraded++
			}
			if r.tgt >= 0 {
				p.ByTarget[s.tgtPos[r.tgt]]++
			}
			if r.stream && r.ttft > 0 {
				ttfts[fill[b]] = r.ttft
				fill[b]++
			}
		}
		cf[b] += s.counterfactualOf(r)
	}
	cost := s.ptCost
	// Windowed success rate over the SLO window, by buckets.
	win := max(int(s.slo.Window/step), 1)
	var okSum, allSum, goodSum int
	var cumCost, cumCF float64
	for i := range ser.Points {
		p := &ser.Points[i]
		okSum += p.Requests - p.Failed
		allSum += p.Requests
		goodSum += goods[i]
		if i >= win {
			q := &ser.Points[i-win]
			okSum -= q.Requests - q.Failed
			allSum -= q.Requests
			goodSum -= goods[i-win]
		}
		p.Success, p.Good = -1, -1
		if allSum > 0 {
			p.Success = float64(okSum) / float64(allSum)
			p.Good = float64(goodSum) / float64(allSum)
		}
		if ds := ttfts[ttftAt[i]:ttftAt[i+1]]; len(ds) > 0 {
			p.P95TTFT = selectNth(ds, RankOf(0.95, len(ds)))
		}
		cumCost += cost[i]
		cumCF += cf[i]
		p.Cost, p.Counterfactual = cumCost, cumCF
	}
	// Breaker and health spans.
	type key struct{ target, kind string }
	open := map[key]StateSpan{}
	var keys []key
	for _, tr := range s.trans {
		k := key{tr.target, "breaker"}
		if tr.kind == events.HealthChange {
			k.kind = "health"
		}
		at := tr.t.Sub(s.start)
		if sp, ok := open[k]; ok {
			sp.To = at
			if sp.To > sp.From {
				ser.Breakers = append(ser.Breakers, sp)
			}
		} else {
			keys = append(keys, k)
			// Before its first transition the target was in the "from" state.
			if tr.from != "" && at > 0 {
				ser.Breakers = append(ser.Breakers, StateSpan{Target: k.target, Kind: k.kind, State: tr.from, From: 0, To: at})
			}
		}
		open[k] = StateSpan{Target: k.target, Kind: k.kind, State: tr.to, From: at}
	}
	for _, k := range keys {
		sp := open[k]
		sp.To = dur
		if sp.To > sp.From {
			ser.Breakers = append(ser.Breakers, sp)
		}
	}
	slices.SortStableFunc(ser.Breakers, func(a, b StateSpan) int {
		if a.Target != b.Target {
			if a.Target < b.Target {
				return -1
			}
			return 1
		}
		return int(a.From - b.From)
	})
	ser.Timeline = s.timeline
	return ser
}
