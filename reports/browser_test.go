package reports

import (
	"bytes"
	"context"
	"encoding/json"
	stdhtml "html"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// chromium finds a headless browser. CI installs Debian's chromium and sets
// BROWNOUT_REQUIRE_CHROMIUM=1 so that a missing browser fails instead of
// skipping.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("BROWNOUT_REQUIRE_CHROMIUM") != "" {
		t.Fatal("no chromium on PATH and BROWNOUT_REQUIRE_CHROMIUM is set")
	}
	t.Skip("no chromium on PATH")
	return ""
}

// TestHTMLRendersInChromium renders the report in headless Chromium with the
// network off and checks the screenshot: the charts drew their stacked areas
// (the primary's blue), the fault shading, the breaker bands (open red and
// closed green), not a blank page.
func TestHTMLRendersInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, fixture()))
	require.NoError(t, os.WriteFile(page, buf.Bytes(), 0o644))
	shot := filepath.Join(dir, "shot.png")

	runChromium(t, bin, dir, "--window-size=1100,1800", "--screenshot="+shot, "file://"+page)

	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	if os.Getenv("BROWNOUT_KEEP_SCREENSHOT") != "" {
		_ = os.WriteFile(os.Getenv("BROWNOUT_KEEP_SCREENSHOT"), mustRead(t, shot), 0o644)
	}

	count := func(r0, g0, b0 int) int {
		n := 0
		bounds := img.Bounds()
		for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
			for x := bounds.Min.X; x < bounds.Max.X; x++ {
				if near(img, x, y, r0, g0, b0) {
					n++
				}
			}
		}
		return n
	}
	// A stacked area is its target's colour at 85% over the chart's
	// background (#fcfcfd); lines are the colour itself.
	area := func(r0, g0, b0 int) int {
		over := func(c, bg int) int { return (85*c + 15*bg) / 100 }
		return count(over(r0, 0xfc), over(g0, 0xfc), over(b0, 0xfd))
	}
	require.Greater(t, area(0x3b, 0x6f, 0xd6), 2000, "stacked area of the first target")
	require.Greater(t, area(0xe0, 0x8a, 0x1e), 2000, "stacked area of the second target")
	require.Greater(t, count(0x3b, 0x6f, 0xd6), 500, "the success and cost lines")
	require.Greater(t, count(0xd6, 0x27, 0x28), 500, "open breaker band")
	require.Greater(t, count(0x8f, 0xd1, 0x9e), 2000, "closed breaker band")
}

func near(img image.Image, x, y, r0, g0, b0 int) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	d := func(a uint32, b int) int {
		v := int(a>>8) - b
		if v < 0 {
			return -v
		}
		return v
	}
	return d(r, r0) < 24 && d(g, g0) < 24 && d(b, b0) < 24
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

// runChromium runs headless Chromium with the network off and returns its
// standard output.
func runChromium(t *testing.T, bin, dir string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + filepath.Join(dir, "profile")}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "chromium: %s", stderr.String())
	return stdout.Bytes()
}

// measureScript, added to a report, writes the box Chromium drew for every
// text of every chart into <pre id="measure"> as JSON.
const measureScript = `<script>
(function(){
  function box(r){return {x0:r.left,y0:r.top,x1:r.right,y1:r.bottom}}
  var out=[];
  document.querySelectorAll('svg.chart').forEach(function(svg){
    var texts=[];
    svg.querySelectorAll('text').forEach(function(t){
      texts.push({class:t.getAttribute('class')||'',text:t.textContent,box:box(t.getBoundingClientRect())});
    });
    out.push({title:svg.getAttribute('aria-label'),box:box(svg.getBoundingClientRect()),texts:texts});
  });
  var pre=document.createElement('pre');pre.id='measure';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
})();
</script>`

type domBox struct{ X0, Y0, X1, Y1 float64 }

type domChart struct {
	Title string
	Box   domBox
	Texts []struct {
		Class, Text string
		Box         domBox
	}
}

// TestChartLabelsInChromium renders reports of game days with several
// faults (on one target, on three targets at once) and reads back, from
// the DOM, the box of every text of every chart: no two overlap, each lies
// inside its chart, and the axis ticks are round — time in 1-2-5 seconds,
// 15 s, 30 s, minutes; rates in whole numbers; percentages, durations and
// money in 1, 2 or 5 times a power of ten.
func TestChartLabelsInChromium(t *testing.T) {
	bin := chromium(t)
	results := map[string]*score.Result{"fixture": fixture()}
	for _, name := range []string{"compound-incident", "flapping-provider", "total-outage", "primary-429-storm"} {
		s, err := scenarios.Load("../examples/gamedays/" + name + ".yaml")
		require.NoError(t, err)
		res, err := scenarios.Run(context.Background(), s, scenarios.Options{Mode: score.ModeSim})
		require.NoError(t, err)
		results[name] = res
	}
	for name, r := range results {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var buf bytes.Buffer
			require.NoError(t, WriteHTML(&buf, r))
			page := filepath.Join(dir, "report.html")
			html := strings.Replace(buf.String(), "</body>", measureScript+"</body>", 1)
			require.NoError(t, os.WriteFile(page, []byte(html), 0o644))
			dom := runChromium(t, bin, dir, "--window-size=1100,1800", "--dump-dom", "file://"+page)
			m := regexp.MustCompile(`(?s)<pre id="measure">(.*?)</pre>`).FindSubmatch(dom)
			require.NotNil(t, m, "no measurements in the DOM")
			var charts []domChart
			require.NoError(t, json.Unmarshal([]byte(stdhtml.UnescapeString(string(m[1]))), &charts))
			require.Len(t, charts, 5)
			faultLabels := 0
			for _, c := range charts {
				const eps = 0.5
				for i, a := range c.Texts {
					assert.True(t, a.Box.X0 >= c.Box.X0-eps && a.Box.X1 <= c.Box.X1+eps && a.Box.Y0 >= c.Box.Y0-eps && a.Box.Y1 <= c.Box.Y1+eps,
						"%s: %q sticks out of its chart", c.Title, a.Text)
					for _, b := range c.Texts[i+1:] {
						overlap := a.Box.X0 < b.Box.X1-eps && b.Box.X0 < a.Box.X1-eps && a.Box.Y0 < b.Box.Y1-eps && b.Box.Y0 < a.Box.Y1-eps
						assert.False(t, overlap, "%s: %q (%s) overlaps %q (%s)", c.Title, a.Text, a.Class, b.Text, b.Class)
					}
					if a.Class == "faultlabel" {
						faultLabels++
					}
				}
				checkRoundTicks(t, c)
			}
			assert.Positive(t, faultLabels, "fault windows are labelled")
		})
	}
}

// checkRoundTicks checks a chart's tick labels: evenly spaced by a round step.
func checkRoundTicks(t *testing.T, c domChart) {
	t.Helper()
	var xs, ys []string
	for _, tx := range c.Texts {
		switch tx.Class {
		case "xlabel":
			xs = append(xs, tx.Text)
		case "ylabel":
			ys = append(ys, tx.Text)
		}
	}
	require.GreaterOrEqual(t, len(xs), 3, "%s: x ticks", c.Title)
	secs := make([]float64, len(xs))
	for i, x := range xs {
		d, err := time.ParseDuration(x)
		require.NoError(t, err, "%s: x tick %q", c.Title, x)
		secs[i] = d.Seconds()
	}
	assert.Contains(t, timeSteps, evenStep(t, c.Title, secs), "%s: time step of %v", c.Title, xs)
	if len(ys) == 0 {
		return
	}
	vals := make([]float64, len(ys))
	for i, y := range ys {
		var err error
		switch {
		case strings.HasSuffix(y, "/s"):
			vals[i], err = strconv.ParseFloat(strings.TrimSuffix(y, "/s"), 64)
			assert.Equal(t, math.Trunc(vals[i]), vals[i], "%s: rate tick %q is a whole number", c.Title, y)
		case strings.HasSuffix(y, "%"):
			vals[i], err = strconv.ParseFloat(strings.TrimSuffix(y, "%"), 64)
		case strings.HasPrefix(y, "$"):
			vals[i], err = strconv.ParseFloat(strings.TrimPrefix(y, "$"), 64)
		default:
			var d time.Duration
			d, err = time.ParseDuration(y)
			vals[i] = d.Seconds()
		}
		require.NoError(t, err, "%s: y tick %q", c.Title, y)
	}
	step := evenStep(t, c.Title, vals)
	mant := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9))
	assert.True(t, slices.ContainsFunc([]float64{1, 2, 5}, func(m float64) bool { return math.Abs(m-mant) < 1e-6 }),
		"%s: y step %g of %v is not 1, 2 or 5 times a power of ten", c.Title, step, ys)
}

// evenStep returns the step between evenly spaced values (ascending or
// descending, as y ticks are drawn bottom up).
func evenStep(t *testing.T, title string, vals []float64) float64 {
	t.Helper()
	step := math.Abs(vals[1] - vals[0])
	for i := 2; i < len(vals); i++ {
		assert.InDelta(t, step, math.Abs(vals[i]-vals[i-1]), step*1e-6, "%s: uneven ticks %v", title, vals)
	}
	return step
}
