package reports

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// A small SVG plotting kit: time on x (seconds from the run's start), one
// linear y axis. Go's charting libraries either need JavaScript and a CDN
// (go-echarts) or do not draw stacked areas and state bands cleanly (gonum
// plot), so the report draws its few chart shapes itself; see svg_test.go.

const (
	plotW       = 960.0
	plotH       = 200.0
	marginLeft  = 64.0
	marginRight = 16.0
	marginTop   = 26.0
	marginBot   = 26.0
)

type plot struct {
	b          strings.Builder
	title      string
	h          float64
	xmax       float64
	ymin, ymax float64
}

func newPlot(title string, h, xmax, ymax float64) *plot {
	if xmax <= 0 {
		xmax = 1
	}
	if ymax <= 0 {
		ymax = 1
	}
	p := &plot{h: h, xmax: xmax, ymax: ymax, title: title}
	fmt.Fprintf(&p.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" class="chart" role="img" aria-label="%s">`, plotW, h, html.EscapeString(title))
	fmt.Fprintf(&p.b, `<text x="%g" y="16" class="title">%s</text>`, marginLeft, html.EscapeString(title))
	return p
}

func (p *plot) x(t float64) float64 {
	return marginLeft + (plotW-marginLeft-marginRight)*clamp(t/p.xmax, 0, 1)
}

func (p *plot) y(v float64) float64 {
	top, bot := marginTop, p.h-marginBot
	return bot - (bot-top)*clamp((v-p.ymin)/(p.ymax-p.ymin), 0, 1)
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= v {
			return m * e
		}
	}
	return 10 * e
}

// axes draws the frame, four y gridlines labelled with yfmt and time ticks.
func (p *plot) axes(yfmt func(float64) string) {
	x0, x1 := p.x(0), p.x(p.xmax)
	for i := 0; i <= 4; i++ {
		v := p.ymin + (p.ymax-p.ymin)*float64(i)/4
		y := p.y(v)
		fmt.Fprintf(&p.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, x0, y, x1, y)
		fmt.Fprintf(&p.b, `<text x="%.1f" y="%.1f" class="ylabel">%s</text>`, x0-6, y+4, html.EscapeString(yfmt(v)))
	}
	step := niceCeil(p.xmax / 8)
	for t := 0.0; t <= p.xmax+1e-9; t += step {
		x := p.x(t)
		fmt.Fprintf(&p.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="tick"/>`, x, p.h-marginBot, x, p.h-marginBot+4)
		fmt.Fprintf(&p.b, `<text x="%.1f" y="%.1f" class="xlabel">%s</text>`, x, p.h-8, fmtSeconds(t))
	}
}

func fmtSeconds(t float64) string {
	if t >= 60 && math.Mod(t, 60) == 0 {
		return fmt.Sprintf("%gm", t/60)
	}
	if t >= 60 {
		return fmt.Sprintf("%dm%02ds", int(t)/60, int(t)%60)
	}
	return fmt.Sprintf("%gs", t)
}

// shade marks a time window (a fault) across the plot area; the label is
// drawn only when withLabel is set (charts with little room keep it as a tooltip).
func (p *plot) shade(t0, t1 float64, label string, withLabel bool) {
	x0, x1 := p.x(t0), p.x(t1)
	fmt.Fprintf(&p.b, `<rect x="%.1f" y="%g" width="%.1f" height="%g" class="fault"><title>%s</title></rect>`,
		x0, marginTop, math.Max(x1-x0, 1), p.h-marginTop-marginBot, html.EscapeString(label))
	if withLabel {
		fmt.Fprintf(&p.b, `<text x="%.1f" y="%g" class="faultlabel">%s</text>`, x0+3, marginTop+11, html.EscapeString(label))
	}
}

// vline marks a moment with a labelled vertical line.
func (p *plot) vline(t float64, label, class string) {
	x := p.x(t)
	fmt.Fprintf(&p.b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" class="%s"/>`, x, marginTop, x, p.h-marginBot, class)
	fmt.Fprintf(&p.b, `<text x="%.1f" y="%g" class="%s-label">%s</text>`, x+3, p.h-marginBot-4, class, html.EscapeString(label))
}

// hline draws a labelled horizontal reference line at v.
func (p *plot) hline(v float64, label, class string) {
	y := p.y(v)
	fmt.Fprintf(&p.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="%s"/>`, p.x(0), y, p.x(p.xmax), y, class)
	fmt.Fprintf(&p.b, `<text x="%.1f" y="%.1f" class="%s-label">%s</text>`, p.x(p.xmax)-4, y-4, class, html.EscapeString(label))
}

// line draws a polyline; points with NaN y break the line.
func (p *plot) line(ts, vs []float64, class, label string) {
	var seg []string
	flush := func() {
		if len(seg) > 0 {
			fmt.Fprintf(&p.b, `<polyline points="%s" class="%s"><title>%s</title></polyline>`, strings.Join(seg, " "), class, html.EscapeString(label))
			seg = seg[:0]
		}
	}
	for i := range ts {
		if math.IsNaN(vs[i]) {
			flush()
			continue
		}
		seg = append(seg, fmt.Sprintf("%.1f,%.1f", p.x(ts[i]), p.y(vs[i])))
	}
	flush()
}

// area fills between lo and hi over ts (a step of a stacked chart).
func (p *plot) area(ts, lo, hi []float64, color, label string) {
	if len(ts) == 0 {
		return
	}
	pts := make([]string, 0, 2*len(ts))
	for i := range ts {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.x(ts[i]), p.y(hi[i])))
	}
	for i := len(ts) - 1; i >= 0; i-- {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.x(ts[i]), p.y(lo[i])))
	}
	fmt.Fprintf(&p.b, `<polygon points="%s" fill="%s" class="area"><title>%s</title></polygon>`, strings.Join(pts, " "), color, html.EscapeString(label))
}

// band draws a horizontal state band in row (0-based) of height rowH.
func (p *plot) band(row int, rowH, t0, t1 float64, color, label string) {
	x0, x1 := p.x(t0), p.x(t1)
	y := marginTop + float64(row)*rowH
	fmt.Fprintf(&p.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`,
		x0, y+2, math.Max(x1-x0, 1), rowH-4, color, html.EscapeString(label))
}

// rowLabel writes a label at the start of a band row, over the band.
func (p *plot) rowLabel(row int, rowH float64, label string) {
	y := marginTop + float64(row)*rowH + rowH/2 + 4
	fmt.Fprintf(&p.b, `<text x="%g" y="%.1f" class="rowlabel">%s</text>`, marginLeft+4, y, html.EscapeString(label))
}

type legendItem struct{ color, label string }

// legend draws coloured keys on the title line, after the title.
func (p *plot) legend(items []legendItem) {
	x := marginLeft + 7.5*float64(len([]rune(p.title))) + 24
	for _, it := range items {
		fmt.Fprintf(&p.b, `<rect x="%.1f" y="7" width="10" height="10" fill="%s"/><text x="%.1f" y="16" class="legend">%s</text>`,
			x, it.color, x+14, html.EscapeString(it.label))
		x += 24 + 7*float64(len([]rune(it.label)))
	}
}

func (p *plot) String() string { return p.b.String() + "</svg>" }

// palette gives stable, distinguishable colours for targets.
var palette = []string{"#3b6fd6", "#e08a1e", "#2e9e6a", "#9b59b6", "#c0392b", "#17a2b8", "#7f8c8d", "#d4ac0d"}
