package reports

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/brownout-dev/brownout/scenarios"
)

// Run is one stored result and where it came from.
type Run struct {
	Label  string // the run's directory relative to the trend root
	Path   string
	When   time.Time // result.json's modification time
	Result *scenarios.Result
}

// LoadRuns finds every result.json under dir. Runs are ordered by the file's
// modification time, then path: a quarterly archive copied with its times
// preserved, or named by date, sorts as it happened.
func LoadRuns(dir string) ([]Run, error) {
	var runs []Run
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "result.json" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var r scenarios.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		label, _ := filepath.Rel(dir, filepath.Dir(path))
		runs = append(runs, Run{Label: filepath.ToSlash(label), Path: path, When: info.ModTime(), Result: &r})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no result.json under %s", dir)
	}
	slices.SortStableFunc(runs, func(a, b Run) int {
		if c := a.When.Compare(b.When); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return runs, nil
}

// TrendPoint is one run's headline scores.
type TrendPoint struct {
	Label        string
	Pass         bool
	TTD, TTM     time.Duration // worst over the run's fault steps; -1 when not detected / mitigated
	Flaps        int
	Availability float64
	Cost         float64
}

// Trend groups runs by scenario name, in run order.
func Trend(runs []Run) map[string][]TrendPoint {
	out := map[string][]TrendPoint{}
	for _, run := range runs {
		r := run.Result
		tp := TrendPoint{Label: run.Label, Pass: r.Pass && !r.Aborted, Flaps: r.Overall.Flaps, Availability: r.Overall.Availability.Success, Cost: r.Overall.Cost.Total}
		for _, f := range r.Faults {
			switch {
			case !f.Detected:
				tp.TTD = -1
			case tp.TTD >= 0 && f.TTD > tp.TTD:
				tp.TTD = f.TTD
			}
			switch {
			case f.Impact && !f.Mitigated:
				tp.TTM = -1
			case tp.TTM >= 0 && f.TTM > tp.TTM:
				tp.TTM = f.TTM
			}
		}
		out[r.Scenario] = append(out[r.Scenario], tp)
	}
	return out
}

func trendDur(d time.Duration, missing string) string {
	if d < 0 {
		return missing
	}
	return fmtDur(d)
}

// WriteTrend writes the trend as a table per scenario.
func WriteTrend(w io.Writer, trend map[string][]TrendPoint) error {
	var b strings.Builder
	for _, name := range sortedKeys(trend) {
		fmt.Fprintf(&b, "%s\n", name)
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  run\tverdict\tTTD\tTTM\tflaps\tavailability\tcost")
		for _, p := range trend[name] {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.Label, verdictWord(p.Pass), trendDur(p.TTD, "not detected"), trendDur(p.TTM, "not mitigated"), p.Flaps, fmtPct(p.Availability), fmtMoney(p.Cost))
		}
		_ = tw.Flush()
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTrendHTML writes a self-contained HTML page with, per scenario, the
// table and a chart of TTD, TTM and availability across runs.
func WriteTrendHTML(w io.Writer, trend map[string][]TrendPoint) error {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>brownout game-day trend</title><style>
body{font:14px/1.45 system-ui,sans-serif;max-width:1040px;margin:0 auto;padding:16px 24px}table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #e5e5e5;padding:4px 8px;text-align:left}th{background:#f6f7f9}
svg.chart{width:100%;height:auto;border:1px solid #eee;background:#fcfcfd;margin:8px 0}
svg .title{font-size:13px;font-weight:600}svg .grid{stroke:#e6e6e6}svg .ylabel{font-size:10px;fill:#666;text-anchor:end}svg .xlabel{font-size:10px;fill:#666;text-anchor:middle}
svg polyline{fill:none;stroke-width:2}svg .ttd{stroke:#9b59b6}svg .ttm{stroke:#17a2b8}svg .legend{font-size:11px}
</style></head><body><h1>Game-day trend</h1>`)
	for _, name := range sortedKeys(trend) {
		pts := trend[name]
		fmt.Fprintf(&b, "<h2>%s</h2>", html.EscapeString(name))
		ymax := 0.0
		xs := make([]float64, len(pts))
		ttd := make([]float64, len(pts))
		ttm := make([]float64, len(pts))
		for i, p := range pts {
			xs[i] = float64(i)
			ttd[i], ttm[i] = math.NaN(), math.NaN()
			if p.TTD >= 0 {
				ttd[i] = p.TTD.Seconds()
				ymax = math.Max(ymax, ttd[i])
			}
			if p.TTM >= 0 {
				ttm[i] = p.TTM.Seconds()
				ymax = math.Max(ymax, ttm[i])
			}
		}
		pl := newPlot("Time to detect and to mitigate per run (seconds)", plotH, math.Max(float64(len(pts)-1), 1), niceCeil(ymax*1.1))
		pl.axes(func(v float64) string { return fmt.Sprintf("%gs", round2(v)) })
		pl.line(xs, ttd, "ttd", "TTD")
		pl.line(xs, ttm, "ttm", "TTM")
		pl.legend([]legendItem{{"#9b59b6", "TTD"}, {"#17a2b8", "TTM"}})
		b.WriteString(pl.String())
		b.WriteString("<table><tr><th>run</th><th>verdict</th><th>TTD</th><th>TTM</th><th>flaps</th><th>availability</th><th>cost</th></tr>")
		for _, p := range pts {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td></tr>",
				html.EscapeString(p.Label), verdictWord(p.Pass), trendDur(p.TTD, "not detected"), trendDur(p.TTM, "not mitigated"), p.Flaps, fmtPct(p.Availability), fmtMoney(p.Cost))
		}
		b.WriteString("</table>")
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
