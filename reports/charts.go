package reports

import (
	"fmt"
	"math"
	"time"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// charts returns the report's SVG charts over the scenario's time, in order:
// requests per second by serving target, user success rate with the SLO line,
// p95 time to first token, breaker and health states per target, and
// cumulative cost against the counterfactual. Every time chart shades the
// fault windows and marks detection and mitigation.
func charts(r *score.Result) []string {
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
	// decorate shades the fault windows (labelled when labels is set) and,
	// with marks, marks each fault's detection and mitigation.
	decorate := func(p *plot, labels, marks bool) {
		for _, f := range r.Faults {
			t0, t1 := f.Start.Sub(r.Start).Seconds(), f.End.Sub(r.Start).Seconds()
			full, short := f.Step+" · "+f.Target, f.Step
			if !labels {
				full, short = "", ""
			}
			p.shade(t0, t1, f.Step+" · "+f.Target, full, short)
		}
		if !marks {
			return
		}
		// Faults detected or mitigated at the same moment (a shared
		// fallback) share one mark.
		type mark struct {
			x     float64
			label string
		}
		drawn := map[mark]bool{}
		vline := func(at float64, label, tip, class string) {
			k := mark{math.Round(p.x(at)), label}
			if drawn[k] {
				return
			}
			drawn[k] = true
			p.vline(at, label, tip, class)
		}
		for _, f := range r.Faults {
			t0 := f.Start.Sub(r.Start).Seconds()
			if f.Detected {
				vline(t0+f.TTD.Seconds(), "TTD "+fmtDur(f.TTD), f.Step+" · "+f.Target+": TTD "+detect(f), "detect")
			}
			if f.Impact && f.Mitigated {
				vline(t0+f.TTM.Seconds(), "TTM "+fmtDur(f.TTM), f.Step+" · "+f.Target+": TTM "+mitigate(f), "mitigate")
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
		var legend []legendItem
		for ti, name := range s.Targets {
			legend = append(legend, legendItem{palette[ti%len(palette)], name})
		}
		legend = append(legend, legendItem{"#d62728", "failed"})
		p := newPlot("Requests per second by serving target", plotH, xmax, legend)
		p.axes(rateTicks(ymax * 1.05))
		decorate(p, true, false)
		lo := make([]float64, len(ts))
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
			p.area(ts, lo, hi, legend[li].color, s.Targets[li])
			lo = hi
		}
		hi := make([]float64, len(ts))
		for i := range ts {
			hi[i] = lo[i] + failed[i]
		}
		p.area(ts, lo, hi, "#d62728", "failed")
		out = append(out, p.String())
	}

	// 2. User success rate and good-request rate (the SLI) over the SLO
	// window, with the SLO line.
	{
		lo := 1.0
		vs, good := make([]float64, len(ts)), make([]float64, len(ts))
		for i, pt := range s.Points {
			if pt.Success < 0 {
				vs[i], good[i] = math.NaN(), math.NaN()
				continue
			}
			vs[i], good[i] = pt.Success, pt.Good
			lo = math.Min(lo, math.Min(pt.Success, pt.Good))
		}
		if r.SLO.SuccessRate > 0 {
			lo = math.Min(lo, r.SLO.SuccessRate)
		}
		p := newPlot(successTitle(r.SLO), plotH, xmax, nil)
		p.axes(percentTicks(1 - 1.25*(1-lo)))
		if r.SLO.SuccessRate > 0 {
			p.hline(r.SLO.SuccessRate, "SLO "+fmtPct(r.SLO.SuccessRate), "slo")
		}
		decorate(p, true, true)
		// The good rate first: where it equals the success rate, the
		// success line covers it.
		p.line(ts, good, "good", "good-request rate (every per-request part of the SLO)")
		p.line(ts, vs, "success", "success rate")
		out = append(out, p.String())
	}

	// 3. p95 time to first token, with the SLO's TTFT bound.
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
		bound, boundLabel := ttftObjective(r.SLO.TTFT)
		ymax = math.Max(ymax, bound.Seconds())
		p := newPlot(ttftTitle(r), plotH, xmax, nil)
		p.axes(durationTicks(ymax * 1.05))
		if bound > 0 {
			p.hline(bound.Seconds(), boundLabel, "slo")
		}
		decorate(p, true, true)
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
		p := newPlot("Breaker and health state per target", h, xmax,
			[]legendItem{{stateColor("closed"), "closed / healthy"}, {stateColor("half_open"), "half-open / recovering"}, {stateColor("open"), "open / unhealthy"}})
		p.xAxis()
		decorate(p, false, false)
		for _, b := range s.Breakers {
			p.band(seen[row{b.Target, b.Kind}], rowH, b.From.Seconds(), b.To.Seconds(), stateColor(b.State), b.Target+" "+b.Kind+": "+b.State)
		}
		for i, rw := range rows {
			p.rowLabel(i, rowH, rw.target+" "+rw.kind)
		}
		out = append(out, p.String())
	}

	// 5. Cumulative cost against the counterfactual.
	{
		last := s.Points[len(s.Points)-1]
		p := newPlot("Cumulative cost vs counterfactual (all traffic at the primary's price)", plotH, xmax,
			[]legendItem{{"#3b6fd6", "actual"}, {"#999999", "counterfactual"}})
		p.axes(moneyTicks(math.Max(last.Cost, last.Counterfactual) * 1.05))
		decorate(p, true, false)
		ends := make([]float64, len(ts))
		cost := make([]float64, len(ts))
		cf := make([]float64, len(ts))
		for i, pt := range s.Points {
			ends[i] = pt.T.Seconds() + step
			cost[i], cf[i] = pt.Cost, pt.Counterfactual
		}
		p.line(ends, cf, "counterfactual", "counterfactual")
		p.line(ends, cost, "cost", "actual cost")
		out = append(out, p.String())
	}
	return out
}

// successTitle names the success chart. The series keeps the success rate
// (served or degraded) per window, not the good rate, so when the SLO has
// latency or correctness parts the title says the line leaves them out.
// successTitle names the success chart: the success rate (solid) and the
// good-request rate, the SLI (dashed: success and every per-request part
// of the SLO, latency and correctness).
func successTitle(o score.SLO) string {
	return fmt.Sprintf("Success and good requests (the SLI, dashed), %s window", fmtDur(o.Window))
}

// ttftObjective is the TTFT bound the chart draws and its label: the
// SLO's p95 bound (what the chart plots), else its per-request maximum;
// 0 when the SLO bounds no TTFT.
func ttftObjective(o score.LatencyObjective) (time.Duration, string) {
	switch {
	case o.P95 > 0:
		return o.P95, "SLO p95 TTFT " + fmtDur(o.P95)
	case o.Max > 0:
		return o.Max, "SLO max TTFT " + fmtDur(o.Max)
	}
	return 0, ""
}

// ttftTitle names the TTFT chart: the series (score.Point.P95TTFT) keeps
// one p95 per bucket over the streamed requests served in it, as the
// tables do; a non-streamed answer has no first token apart from its
// whole.
func ttftTitle(*score.Result) string {
	return "p95 time to first token (streamed requests)"
}

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
