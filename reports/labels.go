package reports

// Label placement: a chart's texts must not overprint each other. Every
// text's box is estimated from its characters (textWidth) and kept by a
// placer; a label that may move (a fault's name, a TTD mark) takes the
// first of its candidate positions whose box is free and inside the chart.
// The browser test holds the estimates to the boxes Chromium draws.

// box is a rectangle in SVG user units: x0 <= x1, y0 <= y1.
type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

func (a box) inside(b box) bool {
	return a.x0 >= b.x0 && a.x1 <= b.x1 && a.y0 >= b.y0 && a.y1 <= b.y1
}

// candidate is one position a label may take: its baseline point, the text
// and its text-anchor ("start", "middle" or "end").
type candidate struct {
	x, y   float64
	text   string
	anchor string
}

// placer keeps the boxes of the texts drawn so far.
type placer struct {
	bounds box
	taken  []box
}

// labelPad is the room kept left and right of a movable label (lanes are
// one line apart, so none above and below).
const labelPad = 2.0

// reserve records a text drawn at a fixed place.
func (pl *placer) reserve(b box) { pl.taken = append(pl.taken, b) }

// place returns the first candidate whose box (with labelPad beside it) is
// inside the bounds and overlaps nothing taken, and takes it.
func (pl *placer) place(cands []candidate, size float64, bold bool) (candidate, bool) {
	for _, c := range cands {
		b := anchored(c.x, c.y, c.text, size, bold, c.anchor)
		padded := box{b.x0 - labelPad, b.y0, b.x1 + labelPad, b.y1}
		if !b.inside(pl.bounds) || pl.hits(padded) {
			continue
		}
		pl.reserve(b)
		return c, true
	}
	return candidate{}, false
}

func (pl *placer) hits(b box) bool {
	for _, t := range pl.taken {
		if t.overlaps(b) {
			return true
		}
	}
	return false
}

// anchored is the box of text drawn at baseline (x, y) with the anchor:
// from the ascent above the baseline to the descent below it.
func anchored(x, y float64, text string, size float64, bold bool, anchor string) box {
	w := textWidth(text, size, bold)
	switch anchor {
	case "middle":
		x -= w / 2
	case "end":
		x -= w
	}
	return box{x, y - 0.95*size, x + w, y + 0.25*size}
}

// textWidth estimates the width of text at a font size in pixels, from the
// advance widths of DejaVu Sans (the widest of the common sans-serif faces
// a browser falls back to), with a margin: an upper bound for the charts'
// font stack.
func textWidth(text string, size float64, bold bool) float64 {
	units := 0
	for _, r := range text {
		units += glyphUnits(r)
	}
	w := float64(units) / 2048 * size * 1.03
	if bold {
		w *= 1.12
	}
	return w
}

// glyphUnits is a character's advance in DejaVu Sans (2048 units per em).
func glyphUnits(r rune) int {
	switch {
	case r >= '0' && r <= '9':
		return 1303
	case r >= 'a' && r <= 'z':
		return lowerUnits[r-'a']
	case r >= 'A' && r <= 'Z':
		return upperUnits[r-'A']
	}
	switch r {
	case ' ', '.', ',', '·':
		return 651
	case ':', ';', '/', '|', '\\':
		return 690
	case '\'', '"', '!':
		return 942
	case '(', ')', '[', ']':
		return 799
	case '-':
		return 739
	case '_', '–':
		return 1024
	case '%':
		return 1946
	case 'µ', '$', '{', '}':
		return 1303
	case '@', 'W', '—':
		return 2048
	}
	return 1716 // × → + = # < > and the rest
}

var lowerUnits = [26]int{1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995, 1298, 1253, 1300, 1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075}

var upperUnits = [26]int{1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604, 604, 1343, 1141, 1767, 1532, 1612, 1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403}
