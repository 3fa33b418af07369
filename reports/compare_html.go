package reports

import (
	"fmt"
	"html/template"
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
		data.Colors = append(data.Colors, template.CSS(palette[i%len(palette)])) // #nosec: a constant colour
	}
	for _, s := range overlayCharts(c) {
		data.Charts = append(data.Charts, template.HTML(s)) // #nosec: built by plot with every text escaped
	}
	data.Verdict = "PASS"
	if !c.Pass {
		data.Verdict = "FAIL"
	}
	return compareTmpl.Execute(w, data)
}

type compareHTMLData struct {
	C       *scenarios.Comparison
	Verdict string
	Seeds   string // seedsOf
	Names   []string
	Rows    []compareHTMLRow
	Span    int            // columns of the table
	Colors  []template.CSS // each contestant's line colour
	Charts  []template.HTML
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

var compareTmpl = template.Must(template.New("compare").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>bake-off {{.C.Scenario}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1000px;color:#222}
h1{font-size:20px}.pass{color:#1e7d3c}.fail{color:#b3261e}
table{border-collapse:collapse;margin:12px 0;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
tr.section td{font-weight:600;background:#f6f6f6}
svg.chart{width:100%;height:auto;margin:8px 0}svg text{font:11px system-ui,sans-serif;fill:#444}svg .title{font-size:13px;font-weight:600;fill:#222}
svg .ylabel{text-anchor:end}svg .xlabel{text-anchor:middle}svg .legend{font-size:11px}
svg .grid{stroke:#e6e6e6}svg .tick{stroke:#999}
svg .fault{fill:#d62728;fill-opacity:.08;stroke:#d62728;stroke-opacity:.25}svg .faultlabel{font-size:10px;fill:#a33}
svg polyline{fill:none;stroke-width:1.8}
svg .slo{stroke:#2e9e6a;stroke-dasharray:6 4}svg .slo-label{font-size:10px;fill:#2e9e6a;text-anchor:end}
{{range $i, $c := .Colors}}svg .c{{$i}}{stroke:{{$c}}}
{{end}}</style></head><body>
<h1>Bake-off: {{.C.Scenario}} — <span class="{{if .C.Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</span></h1>
<p>Live, {{.Seeds}}: the same traffic and faults against each gateway in turn, every gateway scored as a black box (from its users' answers and the mock providers' journals).</p>
<ul>{{range .C.Contestants}}<li><b>{{.Name}}</b>: {{.Where}}</li>{{end}}</ul>
{{range .Charts}}{{.}}
{{end}}
<table><tr><th>score</th>{{range .Names}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}{{if .Section}}<tr class="section"><td colspan="{{$.Span}}">{{.Label}}</td></tr>{{else}}<tr><td>{{.Label}}</td>{{range .Cells}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.V}}</td>{{end}}</tr>{{end}}
{{end}}</table>
</body></html>
`))
