package reports

import (
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/internal/golden"
)

// TestPlacerTakesTheFirstFreeCandidate: a label goes to the first of its
// positions whose box is free and inside the chart, and keeps that box.
func TestPlacerTakesTheFirstFreeCandidate(t *testing.T) {
	pl := placer{bounds: box{0, 0, 200, 100}}
	lanes := func(text string) []candidate {
		return []candidate{{x: 10, y: 20, text: text, anchor: "start"}, {x: 10, y: 32, text: text, anchor: "start"}}
	}
	c, ok := pl.place(lanes("first label"), 10, false)
	require.True(t, ok)
	assert.Equal(t, 20.0, c.y, "the first lane is free")
	c, ok = pl.place(lanes("second label"), 10, false)
	require.True(t, ok)
	assert.Equal(t, 32.0, c.y, "the first lane is taken: the next one")
	_, ok = pl.place(lanes("third label"), 10, false)
	assert.False(t, ok, "every lane taken: no label")
	c, ok = pl.place([]candidate{{x: 190, y: 80, text: "too long for the edge", anchor: "start"}, {x: 190, y: 80, text: "too long for the edge", anchor: "end"}}, 10, false)
	require.True(t, ok)
	assert.Equal(t, "end", c.anchor, "a label that would stick out goes the other way")
	_, ok = pl.place([]candidate{{x: 60, y: 20, text: "x", anchor: "middle"}}, 10, false)
	assert.False(t, ok, "inside the first label's box")
}

// TestTextWidthIsAnUpperBound: the estimate is no smaller than what
// Chromium measured with DejaVu Sans at 10px ("Hello 123": 47.6px) and
// grows with wide letters.
func TestTextWidthIsAnUpperBound(t *testing.T) {
	assert.InDelta(t, 48.5, textWidth("Hello 123", 10, false), 1)
	assert.GreaterOrEqual(t, textWidth("Hello 123", 10, false), 47.6)
	assert.Greater(t, textWidth("mmmm", 10, false), textWidth("iiii", 10, false))
	assert.Greater(t, textWidth("TTD", 10, true), textWidth("TTD", 10, false))
}

var svgText = regexp.MustCompile(`<text x="([-\d.]+)" y="([-\d.]+)" class="([^"]+)"(?: text-anchor="(\w+)")?>([^<]*)</text>`)

// chartTexts lists the texts of an SVG chart with their estimated boxes.
func chartTexts(svg string) (texts []string, boxes []box) {
	for _, m := range svgText.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		class, anchor, text := m[3], m[4], html.UnescapeString(m[5])
		size, bold := 10.0, false
		switch class {
		case "title":
			size, bold = 13, true
		case "legend":
			size = 11
		case "rowlabel":
			size, bold = 11, true
		}
		if anchor == "" { // the class's anchor (the stylesheet's)
			anchor = map[string]string{"xlabel": "middle", "ylabel": "end"}[class]
		}
		if anchor == "" {
			anchor = "start"
		}
		texts = append(texts, fmt.Sprintf("%s %s %s %s %q", m[1], m[2], class, anchor, text))
		boxes = append(boxes, anchored(x, y, text, size, bold, anchor))
	}
	return texts, boxes
}

// requireNoOverlap checks, on the estimated boxes, that no two texts of a
// chart overlap (the browser test checks the boxes Chromium draws).
func requireNoOverlap(t *testing.T, svg string) {
	t.Helper()
	texts, boxes := chartTexts(svg)
	for i := range boxes {
		for j := i + 1; j < len(boxes); j++ {
			shrunk := box{boxes[j].x0 + 0.01, boxes[j].y0 + 0.01, boxes[j].x1 - 0.01, boxes[j].y1 - 0.01}
			assert.False(t, boxes[i].overlaps(shrunk), "%s overlaps %s", texts[i], texts[j])
		}
	}
}

// TestChartLabelsGolden: the texts of the charts of a run with crowded
// faults — where each label went, and which stayed tooltips — and none
// overlapping.
func TestChartLabelsGolden(t *testing.T) {
	var b strings.Builder
	for _, svg := range charts(incidents()) {
		requireNoOverlap(t, svg)
		texts, _ := chartTexts(svg)
		b.WriteString(strings.Join(texts, "\n") + "\n\n")
	}
	golden.Check(t, "testdata/incidents-chart-labels.golden", []byte(b.String()))
}

// TestTrendRunLabelsDoNotCollide: a trend's x axis names its runs; names
// too long for their spacing are left out rather than overprinted.
func TestTrendRunLabelsDoNotCollide(t *testing.T) {
	var pts []TrendPoint
	for i := range 9 {
		pts = append(pts, TrendPoint{Label: fmt.Sprintf("2026-q%d-quarterly-game-day-rerun", i+1), TTD: time.Duration(i+1) * time.Second, TTM: -1})
	}
	var page strings.Builder
	require.NoError(t, WriteTrendHTML(&page, map[string][]TrendPoint{"s (sim)": pts}))
	svg := page.String()[strings.Index(page.String(), "<svg "):]
	requireNoOverlap(t, svg)
	n := strings.Count(svg, `class="xlabel"`)
	assert.True(t, n >= 2 && n < len(pts), "%d of %d run labels drawn", n, len(pts))
	assert.Contains(t, svg, ">2026-q1-quarterly-game-day-rerun</text>")
}
