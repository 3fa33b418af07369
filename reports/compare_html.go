package reports

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// WriteCompareHTML writes a bake-off as one self-contained HTML file: the
// scores side by side and the contestants' runs overlaid on shared charts
// (user success rate against the SLO, p95 time to first token, degraded
// answers per second), fault windows shaded.
func WriteCompareHTML(w io.Writer, c *scenarios.Comparison) error {
	t := newCompareTable(c)
	data := compareHTMLData{C: c, Names: t.names, Seeds: seedsOf(c)}
	for _, r := range t.rows {
		hr := compareHTMLRow{Label: strings.TrimSpace(r.label), Section: r.values == nil}
		for i, v := range r.values {
			cls := ""
			if i < len(r.pass) {
				cls = map[int8]string{1: "pass", -1: "fail"}[r.pass[i]]
			}
			hr.Cells = append(hr.Cells, compareHTMLCell{V: v, Class: cls})
		}
		data.Rows = append(data.Rows, hr)
	}
	data.Span = len(t.names) + 1
	for i := range t.names {
		data.Colors = append(data.Colors, markup(palette[i%len(palette)])) // a constant colour
	}
	for _, s := range overlayCharts(c) {
		data.Charts = append(data.Charts, markup(s)) // built by plot with every text escaped
	}
	data.Verdict = "PASS"
	if !c.Pass {
		data.Verdict = "FAIL"
	}
	var p htmlPage
	data.write(&p)
	_, err := io.WriteString(w, p.b.String())
	return err
}

type compareHTMLData struct {
	C       *scenarios.Comparison
	Verdict string
	Seeds   string // seedsOf
	Names   []string
	Rows    []compareHTMLRow
	Span    int      // columns of the table
	Colors  []markup // each contestant's line colour
	Charts  []markup
}

type compareHTMLRow struct {
	Label   string
	Section bool
	Cells   []compareHTMLCell
}

type compareHTMLCell struct{ V, Class string }

// overlayCharts draws each contestant's series as one line per chart, in
// the palette's order.
func overlayCharts(c *scenarios.Comparison) []string {
	if len(c.Contestants) == 0 {
		return nil
	}
	first := c.Contestants[0].Result
	xmax := first.Duration.Seconds()
	for _, cr := range c.Contestants {
		xmax = math.Max(xmax, cr.Result.Elapsed.Seconds())
	}
	legend := make([]legendItem, len(c.Contestants))
	for i, cr := range c.Contestants {
		legend[i] = legendItem{color: palette[i%len(palette)], label: cr.Name}
	}
	series := func(r *score.Result, v func(p score.Point, step float64) float64) ([]float64, []float64) {
		s := r.Series
		step := s.Step.Seconds()
		ts, vs := make([]float64, len(s.Points)), make([]float64, len(s.Points))
		for i, p := range s.Points {
			ts[i], vs[i] = p.T.Seconds()+step/2, v(p, step)
		}
		return ts, vs
	}
	// top is the highest value of v over every contestant.
	top := func(v func(p score.Point, step float64) float64) float64 {
		hi := 0.0
		for _, cr := range c.Contestants {
			_, vs := series(cr.Result, v)
			for _, x := range vs {
				if !math.IsNaN(x) {
					hi = math.Max(hi, x)
				}
			}
		}
		return hi
	}
	chart := func(title string, yt ticks, v func(p score.Point, step float64) float64, decorate func(*plot)) string {
		p := newPlot(title, plotH, xmax, legend)
		p.axes(yt)
		for _, f := range first.Faults {
			p.shade(f.Start.Sub(first.Start).Seconds(), f.End.Sub(first.Start).Seconds(), f.Step+" · "+f.Target, f.Step+" · "+f.Target, f.Step)
		}
		if decorate != nil {
			decorate(p)
		}
		for i, cr := range c.Contestants {
			ts, vs := series(cr.Result, v)
			p.line(ts, vs, fmt.Sprintf("c%d", i%len(palette)), cr.Name)
		}
		return p.String()
	}
	// The good-request rate (the SLI): a contestant that serves wrong or
	// slow answers with a 200 shows here, where a success rate hides it.
	success := func(p score.Point, _ float64) float64 {
		if p.Good < 0 {
			return math.NaN()
		}
		return p.Good
	}
	lo := 1.0
	for _, cr := range c.Contestants {
		_, vs := series(cr.Result, success)
		for _, x := range vs {
			if !math.IsNaN(x) {
				lo = math.Min(lo, x)
			}
		}
	}
	lo = math.Min(lo, first.SLO.SuccessRate)
	ttft := func(p score.Point, _ float64) float64 {
		if p.P95TTFT <= 0 {
			return math.NaN()
		}
		return p.P95TTFT.Seconds()
	}
	degraded := func(p score.Point, step float64) float64 { return float64(p.Degraded) / step }
	bound, boundLabel := ttftObjective(first.SLO.TTFT)
	return []string{
		chart(fmt.Sprintf("Good requests, the SLI (success and every per-request part of the SLO), %s window", fmtDur(first.SLO.Window)), percentTicks(1-1.25*(1-lo)), success,
			func(p *plot) { p.hline(first.SLO.SuccessRate, "SLO "+fmtPct(first.SLO.SuccessRate), "slo") }),
		chart(ttftTitle(first), durationTicks(math.Max(top(ttft), bound.Seconds())*1.05), ttft, func(p *plot) {
			if bound > 0 {
				p.hline(bound.Seconds(), boundLabel, "slo")
			}
		}),
		chart("Degraded answers per second", rateTicks(top(degraded)*1.05), degraded, nil),
	}
}

func (d *compareHTMLData) write(p *htmlPage) {
	c := d.C
	p.printf(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>bake-off %v</title>
<style>
`, c.Scenario)
	p.raw(compareCSS)
	for i, col := range d.Colors {
		p.printf("svg .c%v{stroke:%v}\n", i, col)
	}
	cls := "fail"
	if c.Pass {
		cls = "pass"
	}
	p.printf(`</style></head><body>
<h1>Bake-off: %v — <span class="%v">%v</span></h1>
<p>Live, %v: the same traffic and faults against each gateway in turn, every gateway scored as a black box (from its users' answers and the mock providers' journals).</p>
<ul>`, c.Scenario, cls, d.Verdict, d.Seeds)
	for _, ct := range c.Contestants {
		p.printf("<li><b>%v</b>: %v</li>", ct.Name, ct.Where())
	}
	p.raw("</ul>\n")
	for _, ch := range d.Charts {
		p.printf("%v\n", ch)
	}
	p.raw("\n<table><tr><th>score</th>")
	for _, n := range d.Names {
		p.printf("<th>%v</th>", n)
	}
	p.raw("</tr>\n")
	for _, r := range d.Rows {
		if r.Section {
			p.printf(`<tr class="section"><td colspan="%v">%v</td></tr>`, d.Span, r.Label)
		} else {
			p.printf("<tr><td>%v</td>", r.Label)
			for _, cell := range r.Cells {
				if cell.Class != "" {
					p.printf(`<td class="%v">%v</td>`, cell.Class, cell.V)
				} else {
					p.printf("<td>%v</td>", cell.V)
				}
			}
			p.raw("</tr>")
		}
		p.raw("\n")
	}
	p.raw("</table>\n</body></html>\n")
}

// compareCSS styles the bake-off page; each contestant's colour follows.
const compareCSS = `body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1000px;color:#222}
h1{font-size:20px}.pass{color:#1e7d3c}.fail{color:#b3261e}
table{border-collapse:collapse;margin:12px 0;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
tr.section td{font-weight:600;background:#f6f6f6}
svg.chart{width:100%;height:auto;margin:8px 0}svg text{font:11px system-ui,sans-serif;fill:#444}svg .title{font-size:13px;font-weight:600;fill:#222}
svg .ylabel{text-anchor:end}svg .xlabel{text-anchor:middle}svg .legend{font-size:11px}
svg .grid{stroke:#e6e6e6}svg .tick{stroke:#999}
svg .fault{fill:#d62728;fill-opacity:.08;stroke:#d62728;stroke-opacity:.25}svg .faultlabel{font-size:10px;fill:#a33}
svg polyline{fill:none;stroke-width:1.8}
svg .slo{stroke:#2e9e6a;stroke-dasharray:6 4}svg .slo-label{font-size:10px;fill:#2e9e6a;text-anchor:end}
`
