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

	"github.com/brownout-dev/brownout/scenarios/score"
)

// Run is one stored result and where it came from.
type Run struct {
	Label  string // the run's directory relative to the trend root
	Path   string
	When   time.Time // result.json's modification time
	Result *score.Result
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
		var r score.Result
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
	// Steps are the run's fault steps, each on its own (a worst over
	// steps hides which one moved).
	Steps []TrendStep
	// Schema is the run's result schema (score.SchemaVersion when it
	// was written): scores of different schemas follow different rules.
	Schema int
}

// schemaNote warns when a series mixes result schemas: its scores were
// computed by different rules (schema 2 measures TTM on the good-request
// rate and counts only detections caused after a step's start), so a move
// between them may be the rules', not the gateway's. "" when it does not.
func schemaNote(pts []TrendPoint) string {
	var vs []int
	for _, p := range pts {
		if !slices.Contains(vs, p.Schema) {
			vs = append(vs, p.Schema)
		}
	}
	if len(vs) < 2 {
		return ""
	}
	slices.Sort(vs)
	var parts []string
	for _, v := range vs {
		var labels []string
		for _, p := range pts {
			if p.Schema == v {
				labels = append(labels, p.Label)
			}
		}
		parts = append(parts, fmt.Sprintf("schema %d: %s", v, strings.Join(labels, ", ")))
	}
	return "warning: these runs were scored by different result schemas (" + strings.Join(parts, "; ") +
		"); scores across them are not comparable: re-run or re-score the older runs"
}

// TrendStep is one fault step's TTD and TTM in a run; -1 when not detected
// / mitigated.
type TrendStep struct {
	Step, Target string
	TTD, TTM     time.Duration
}

// Trend groups runs by scenario and mode ("name (sim)"), in run order:
// simulated and live scores are never mixed in one series.
func Trend(runs []Run) map[string][]TrendPoint {
	out := map[string][]TrendPoint{}
	for _, run := range runs {
		r := run.Result
		tp := TrendPoint{Label: run.Label, Pass: r.Pass && !r.Aborted, Flaps: r.Overall.Flaps, Availability: r.Overall.Availability.Success, Cost: r.Overall.Cost.Total,
			Schema: max(r.Schema, 1)} // results before the field was written are schema 1
		for _, f := range r.Faults {
			st := TrendStep{Step: f.Step, Target: f.Target, TTD: f.TTD, TTM: f.TTM}
			if !f.Detected {
				st.TTD = -1
			}
			if f.Impact && !f.Mitigated {
				st.TTM = -1
			}
			tp.Steps = append(tp.Steps, st)
			if f.NotExercised {
				continue
			}
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
		mode := r.Mode
		if mode == "" {
			mode = score.ModeSim
		}
		key := fmt.Sprintf("%s (%s)", r.Scenario, mode)
		out[key] = append(out[key], tp)
	}
	return out
}

// stepColumns are the (step, target) pairs of a series' runs, in first-seen
// order.
func stepColumns(pts []TrendPoint) [][2]string {
	var cols [][2]string
	for _, p := range pts {
		for _, st := range p.Steps {
			k := [2]string{st.Step, st.Target}
			if !slices.Contains(cols, k) {
				cols = append(cols, k)
			}
		}
	}
	return cols
}

// stepCell prints a run's TTD/TTM of one step, "–" when the run lacks it.
func stepCell(p TrendPoint, col [2]string) string {
	for _, st := range p.Steps {
		if st.Step == col[0] && st.Target == col[1] {
			return trendDur(st.TTD, "not detected") + " / " + trendDur(st.TTM, "not mitigated")
		}
	}
	return "–"
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
		if note := schemaNote(trend[name]); note != "" {
			fmt.Fprintf(&b, "  %s\n", note)
		}
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		cols := stepColumns(trend[name])
		head := "  run\tverdict\tflaps\tavailability\tcost"
		for _, c := range cols {
			head += "\t" + c[0] + " " + c[1] + " TTD / TTM"
		}
		fmt.Fprintln(tw, head)
		for _, p := range trend[name] {
			line := fmt.Sprintf("  %s\t%s\t%d\t%s\t%s", p.Label, verdictWord(p.Pass), p.Flaps, fmtPct(p.Availability), fmtMoney(p.Cost))
			for _, c := range cols {
				line += "\t" + stepCell(p, c)
			}
			fmt.Fprintln(tw, line)
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
		if note := schemaNote(pts); note != "" {
			fmt.Fprintf(&b, `<p class="warning">%s</p>`, html.EscapeString(note))
		}
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
		pl := newPlot("Time to detect and to mitigate per run", plotH, math.Max(float64(len(pts)-1), 1), []legendItem{{"#9b59b6", "TTD"}, {"#17a2b8", "TTM"}})
		pl.xlabel = func(v float64) string {
			if i := int(v); i < len(pts) {
				return pts[i].Label
			}
			return ""
		}
		pl.axes(durationTicks(ymax * 1.05))
		pl.line(xs, ttd, "ttd", "TTD")
		pl.line(xs, ttm, "ttm", "TTM")
		b.WriteString(pl.String())
		cols := stepColumns(pts)
		b.WriteString("<table><tr><th>run</th><th>verdict</th><th>TTD</th><th>TTM</th><th>flaps</th><th>availability</th><th>cost</th>")
		for _, c := range cols {
			fmt.Fprintf(&b, "<th>%s %s TTD / TTM</th>", html.EscapeString(c[0]), html.EscapeString(c[1]))
		}
		b.WriteString("</tr>")
		for _, p := range pts {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td>",
				html.EscapeString(p.Label), verdictWord(p.Pass), trendDur(p.TTD, "not detected"), trendDur(p.TTM, "not mitigated"), p.Flaps, fmtPct(p.Availability), fmtMoney(p.Cost))
			for _, c := range cols {
				fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(stepCell(p, c)))
			}
			b.WriteString("</tr>")
		}
		b.WriteString("</table>")
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
