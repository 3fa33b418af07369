package reports

import (
	"fmt"
	"math"
	"time"

	"github.com/brownout-dev/brownout/scenarios"
)

// charts returns the report's SVG charts over the scenario's time, in order:
// requests per second by serving target, user success rate with the SLO line,
// p95 time to first token, breaker and health states per target, and
// cumulative cost against the counterfactual. Every time chart shades the
// fault windows and marks detection and mitigation.
func charts(r *scenarios.Result) []string {
	s := r.Series
	if len(s.Points) == 0 || s.Step <= 0 {
		return nil
	}
	xmax := math.Max(r.Elapsed.Seconds(), float64(len(s.Points))*s.Step.Seconds())
	if r.Duration > 0 && !r.Aborted {
		xmax = r.Duration.Seconds()
	}
	step := s.Step.Seconds()
	ts := make([]float64, len(s.Points))
	for i, p := range s.Points {
		ts[i] = p.T.Seconds() + step/2
	}
	decorate := func(p *plot, marks bool) {
		for _, f := range r.Faults {
			p.shade(f.Start.Sub(r.Start).Seconds(), f.End.Sub(r.Start).Seconds(), f.Step+" · "+f.Target, p.h >= plotH)
		}
		if !marks {
			return
		}
		for _, f := range r.Faults {
			t0 := f.Start.Sub(r.Start).Seconds()
			if f.Detected {
				p.vline(t0+f.TTD.Seconds(), "TTD "+fmtDur(f.TTD), "detect")
			}
			if f.Impact && f.Mitigated {
				p.vline(t0+f.TTM.Seconds(), "TTM "+fmtDur(f.TTM), "mitigate")
			}
		}
	}
	var out []string

	// 1. Requests per second, stacked by serving target, failed on top.
	{
		ymax := 0.0
		for _, pt := range s.Points {
			sum := float64(pt.Failed)
			for _, n := range pt.ByTarget {
				sum += float64(n)
			}
			ymax = math.Max(ymax, sum/step)
		}
		p := newPlot("Requests per second by serving target", plotH, xmax, niceCeil(ymax*1.1))
		p.axes(func(v float64) string { return fmt.Sprintf("%g/s", round2(v)) })
		decorate(p, false)
		lo := make([]float64, len(ts))
		var legend []legendItem
		layers := make([][]float64, 0, len(s.Targets)+1)
		for ti := range s.Targets {
			l := make([]float64, len(ts))
			for i, pt := range s.Points {
				if ti < len(pt.ByTarget) {
					l[i] = float64(pt.ByTarget[ti]) / step
				}
			}
			layers = append(layers, l)
		}
		failed := make([]float64, len(ts))
		for i, pt := range s.Points {
			failed[i] = float64(pt.Failed) / step
		}
		for li, l := range layers {
			hi := make([]float64, len(ts))
			for i := range ts {
				hi[i] = lo[i] + l[i]
			}
			color := palette[li%len(palette)]
			p.area(ts, lo, hi, color, s.Targets[li])
			legend = append(legend, legendItem{color, s.Targets[li]})
			lo = hi
		}
		hi := make([]float64, len(ts))
		for i := range ts {
			hi[i] = lo[i] + failed[i]
		}
		p.area(ts, lo, hi, "#d62728", "failed")
		legend = append(legend, legendItem{"#d62728", "failed"})
		p.legend(legend)
		out = append(out, p.String())
	}

	// 2. User success rate over the SLO window, with the SLO line.
	{
		lo := 1.0
		vs := make([]float64, len(ts))
		for i, pt := range s.Points {
			if pt.Success < 0 {
				vs[i] = math.NaN()
				continue
			}
			vs[i] = pt.Success
			lo = math.Min(lo, pt.Success)
		}
		lo = math.Min(lo, r.SLO.SuccessRate)
		p := newPlot(fmt.Sprintf("User success rate (%s window)", fmtDur(r.SLO.Window)), plotH, xmax, 1)
		p.ymin = math.Max(0, math.Floor(lo*10-0.5)/10)
		if p.ymin >= 1 {
			p.ymin = 0.9
		}
		p.axes(func(v float64) string { return fmtPct(round2(v*100) / 100) })
		decorate(p, true)
		if r.SLO.SuccessRate > 0 {
			p.hline(r.SLO.SuccessRate, "SLO "+fmtPct(r.SLO.SuccessRate), "slo")
		}
		p.line(ts, vs, "success", "success rate")
		out = append(out, p.String())
	}

	// 3. p95 time to first token.
	{
		ymax := 0.0
		vs := make([]float64, len(ts))
		for i, pt := range s.Points {
			if pt.P95TTFT <= 0 {
				vs[i] = math.NaN()
				continue
			}
			vs[i] = pt.P95TTFT.Seconds()
			ymax = math.Max(ymax, vs[i])
		}
		p := newPlot("p95 time to first token", plotH, xmax, niceCeil(ymax*1.1))
		p.axes(func(v float64) string { return fmtDur(time.Duration(v * float64(time.Second))) })
		decorate(p, true)
		p.line(ts, vs, "ttft", "p95 TTFT")
		out = append(out, p.String())
	}

	// 4. Breaker and health states per target.
	if len(s.Breakers) > 0 {
		type row struct{ target, kind string }
		var rows []row
		seen := map[row]int{}
		for _, b := range s.Breakers {
			k := row{b.Target, b.Kind}
			if _, ok := seen[k]; !ok {
				seen[k] = len(rows)
				rows = append(rows, k)
			}
		}
		const rowH = 22.0
		h := marginTop + marginBot + rowH*float64(len(rows))
		p := newPlot("Breaker and health state per target", h, xmax, 1)
		decorate(p, false)
		for _, b := range s.Breakers {
			p.band(seen[row{b.Target, b.Kind}], rowH, b.From.Seconds(), b.To.Seconds(), stateColor(b.State), b.Target+" "+b.Kind+": "+b.State)
		}
		for i, rw := range rows {
			p.rowLabel(i, rowH, rw.target+" "+rw.kind)
		}
		p.legend([]legendItem{{stateColor("closed"), "closed / healthy"}, {stateColor("half_open"), "half-open / recovering"}, {stateColor("open"), "open / unhealthy"}})
		// x ticks without y grid.
		step := niceCeil(xmax / 8)
		for t := 0.0; t <= xmax+1e-9; t += step {
			fmt.Fprintf(&p.b, `<text x="%.1f" y="%.1f" class="xlabel">%s</text>`, p.x(t), h-8, fmtSeconds(t))
		}
		out = append(out, p.String())
	}

	// 5. Cumulative cost against the counterfactual.
	{
		last := s.Points[len(s.Points)-1]
		p := newPlot("Cumulative cost vs counterfactual (all traffic at the primary's price)", plotH, xmax, niceCeil(math.Max(last.Cost, last.Counterfactual)*1.1))
		p.axes(func(v float64) string { return fmt.Sprintf("$%.3g", v) })
		decorate(p, false)
		ends := make([]float64, len(ts))
		cost := make([]float64, len(ts))
		cf := make([]float64, len(ts))
		for i, pt := range s.Points {
			ends[i] = pt.T.Seconds() + step
			cost[i], cf[i] = pt.Cost, pt.Counterfactual
		}
		p.line(ends, cf, "counterfactual", "counterfactual")
		p.line(ends, cost, "cost", "actual cost")
		p.legend([]legendItem{{"#3b6fd6", "actual"}, {"#999999", "counterfactual"}})
		out = append(out, p.String())
	}
	return out
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

func stateColor(state string) string {
	switch state {
	case "open", "unhealthy", "down":
		return "#d62728"
	case "half_open", "half-open", "recovering", "degraded", "demoted":
		return "#f0ad4e"
	default:
		return "#8fd19e"
	}
}
