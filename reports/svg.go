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
// plot), so the report draws its few chart shapes itself.
//
// Every text a chart draws goes through one placer (labels.go) that knows
// the boxes already taken, so labels never overprint each other; axis
// ticks are round values (ticks.go).

const (
	plotW       = 960.0
	plotH       = 200.0
	marginLeft  = 64.0
	marginRight = 16.0
	marginTop   = 26.0
	marginBot   = 26.0
	legendRowH  = 14.0
)

type plot struct {
	b     strings.Builder
	title string
	// h is the SVG's height; top the plot area's top edge (below the title
	// line and any legend rows that did not fit on it).
	h, top     float64
	xmax       float64
	ymin, ymax float64
	labels     placer
	// xlabel prints an x tick; nil: time offsets in seconds.
	xlabel func(float64) string
}

// newPlot starts a chart of plot-area height h-marginTop-marginBot over
// [0, xmax] seconds, with its title and legend on the title line (wrapped
// onto more lines, which make the chart taller, when they do not fit).
func newPlot(title string, h, xmax float64, legend []legendItem) *plot {
	if xmax <= 0 {
		xmax = 1
	}
	p := &plot{title: title, xmax: xmax, ymax: 1}
	p.labels.bounds = box{0, 0, plotW, math.Inf(1)}
	var body strings.Builder
	titleW := textWidth(title, 13, true)
	p.labels.reserve(box{marginLeft, 16 - 13, marginLeft + titleW, 16 + 3})
	fmt.Fprintf(&body, `<text x="%g" y="16" class="title">%s</text>`, marginLeft, html.EscapeString(title))
	// Legend keys flow after the title, then onto lines of their own.
	x, y := marginLeft+titleW+24, 16.0
	for _, it := range legend {
		w := 14 + textWidth(it.label, 11, false)
		if x+w > plotW-marginRight {
			x, y = marginLeft, y+legendRowH
		}
		p.labels.reserve(box{x, y - 11, x + w, y + 3})
		fmt.Fprintf(&body, `<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s"/><text x="%.1f" y="%.1f" class="legend">%s</text>`,
			x, y-9, it.color, x+14, y, html.EscapeString(it.label))
		x += w + 16
	}
	extra := y - 16
	p.h, p.top = h+extra, marginTop+extra
	p.labels.bounds.y1 = p.h
	fmt.Fprintf(&p.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" class="chart" role="img" aria-label="%s">`, plotW, p.h, html.EscapeString(title))
	p.b.WriteString(body.String())
	return p
}

type legendItem struct{ color, label string }

// setY sets the y range to the first and last of ticks.
func (p *plot) setY(t ticks) {
	p.ymin, p.ymax = t.vals[0], t.vals[len(t.vals)-1]
	if p.ymax <= p.ymin {
		p.ymax = p.ymin + 1
	}
}

func (p *plot) x(t float64) float64 {
	return marginLeft + (plotW-marginLeft-marginRight)*clamp(t/p.xmax, 0, 1)
}

func (p *plot) y(v float64) float64 {
	top, bot := p.top, p.h-marginBot
	return bot - (bot-top)*clamp((v-p.ymin)/(p.ymax-p.ymin), 0, 1)
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// axes sets the y range to yt and draws the frame: a gridline and a label
// at every y tick, and the x ticks.
func (p *plot) axes(yt ticks) {
	p.setY(yt)
	x0, x1 := p.x(0), p.x(p.xmax)
	for _, v := range yt.vals {
		y := p.y(v)
		fmt.Fprintf(&p.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, x0, y, x1, y)
		label := yt.label(v)
		p.labels.reserve(anchored(x0-6, y+4, label, 10, false, "end"))
		fmt.Fprintf(&p.b, `<text x="%.1f" y="%.1f" class="ylabel">%s</text>`, x0-6, y+4, html.EscapeString(label))
	}
	p.xAxis()
}

// xAxis draws the x ticks and their labels under the plot area: round
// time offsets (see timeTicks), or p.xlabel's.
func (p *plot) xAxis() {
	xt := timeTicks(p.xmax)
	if p.xlabel != nil {
		xt = indexTicks(p.xmax, p.xlabel)
	}
	for _, t := range xt.vals {
		x := p.x(t)
		fmt.Fprintf(&p.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="tick"/>`, x, p.h-marginBot, x, p.h-marginBot+4)
		// Round times are short enough for their spacing; a run label
		// centred on its tick, else starting or ending there, else none.
		label := xt.label(t)
		p.text([]candidate{{x: x, y: p.h - 8, text: label, anchor: "middle"},
			{x: x, y: p.h - 8, text: label, anchor: "start"}, {x: x, y: p.h - 8, text: label, anchor: "end"}}, 10, "xlabel")
	}
}

// shade marks a time window (a fault) across the plot area, with tip as
// its tooltip. Its label goes on the first free lane under the top edge:
// in full, else the short form, else none ("" for both: no label).
func (p *plot) shade(t0, t1 float64, tip, label, short string) {
	x0, x1 := p.x(t0), p.x(t1)
	fmt.Fprintf(&p.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" class="fault"><title>%s</title></rect>`,
		x0, p.top, math.Max(x1-x0, 1), p.h-p.top-marginBot, html.EscapeString(tip))
	if label == "" {
		return
	}
	var cands []candidate
	for _, text := range []string{label, short} {
		for lane := range 3 {
			cands = append(cands, candidate{x: x0 + 3, y: p.top + 11 + 12*float64(lane), text: text, anchor: "start"})
		}
	}
	p.text(cands, 10, "faultlabel")
}

// vline marks a moment with a vertical line (tip its tooltip) and a label
// near the bottom: right of the line, else left of it, a lane higher each
// time, else only the tooltip.
func (p *plot) vline(t float64, label, tip, class string) {
	x := p.x(t)
	fmt.Fprintf(&p.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="%s"><title>%s</title></line>`, x, p.top, x, p.h-marginBot, class, html.EscapeString(tip))
	var cands []candidate
	for lane := range 3 {
		y := p.h - marginBot - 4 - 12*float64(lane)
		cands = append(cands, candidate{x: x + 3, y: y, text: label, anchor: "start"}, candidate{x: x - 3, y: y, text: label, anchor: "end"})
	}
	p.text(cands, 10, class+"-label")
}

// hline draws a horizontal reference line at v, labelled at its right end
// above the line (or below it when that is taken).
func (p *plot) hline(v float64, label, class string) {
	y := p.y(v)
	fmt.Fprintf(&p.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="%s"/>`, p.x(0), y, p.x(p.xmax), y, class)
	right := p.x(p.xmax) - 4
	p.text([]candidate{{x: right, y: y - 4, text: label, anchor: "end"}, {x: right, y: y + 12, text: label, anchor: "end"}}, 10, class+"-label")
}

// text draws the first candidate whose box is free (see placer); it
// reports whether one was.
func (p *plot) text(cands []candidate, size float64, class string) bool {
	c, ok := p.labels.place(cands, size, false)
	if !ok {
		return false
	}
	anchor := ""
	if c.anchor != "start" {
		anchor = ` text-anchor="` + c.anchor + `"`
	}
	fmt.Fprintf(&p.b, `<text x="%.1f" y="%.1f" class="%s"%s>%s</text>`, c.x, c.y, class, anchor, html.EscapeString(c.text))
	return true
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
	y := p.top + float64(row)*rowH
	fmt.Fprintf(&p.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`,
		x0, y+2, math.Max(x1-x0, 1), rowH-4, color, html.EscapeString(label))
}

// rowLabel writes a label at the start of a band row, over the band.
func (p *plot) rowLabel(row int, rowH float64, label string) {
	y := p.top + float64(row)*rowH + rowH/2 + 4
	p.labels.reserve(anchored(marginLeft+4, y, label, 11, true, "start"))
	fmt.Fprintf(&p.b, `<text x="%g" y="%.1f" class="rowlabel">%s</text>`, marginLeft+4, y, html.EscapeString(label))
}

func (p *plot) String() string { return p.b.String() + "</svg>" }

// palette gives stable, distinguishable colours for targets.
var palette = []string{"#3b6fd6", "#e08a1e", "#2e9e6a", "#9b59b6", "#c0392b", "#17a2b8", "#7f8c8d", "#d4ac0d"}
