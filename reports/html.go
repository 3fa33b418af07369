package reports

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// WriteHTML writes the report as one self-contained HTML file: inline CSS,
// inline SVG charts, a few lines of inline script for the timeline filter,
// and no network access of any kind.
func WriteHTML(w io.Writer, r *score.Result) error {
	data := htmlData{R: r, Verdict: runVerdict(r), Overall: overallRows(r),
		Faults: faultTable(r), FalseAlarms: falseAlarmTable(r), FalseAlarmsAbout: falseAlarmsAbout, Targets: targetTable(r), Demotions: demotionTable(r),
		Expectations: failingFirst(r.Expectations),
		Timeline:     groupTimeline(r.Start, r.Series.Timeline), Kinds: timelineKinds(r.Series.Timeline), KindTotals: notableKinds(r), TimelineNote: timelineNote(r),
		PageRows: htmlTimelinePage}
	for _, s := range charts(r) {
		data.Charts = append(data.Charts, markup(s)) // built by plot with every text escaped
	}
	if r.PromAlerts != nil {
		data.PromAlerts, data.PromAlertsAbout = promAlertsTable(r), promAlertsAbout(r)
	}
	data.Alerts.Cols = []column{{Long: "alert"}, {Long: "severity"}, {Long: "fired"}, {Long: "delivered"}, {Long: "undelivered"}}
	for _, al := range r.Alerts {
		data.Alerts.Rows = append(data.Alerts.Rows, []string{al.Name, al.Severity, fmt.Sprint(al.Fired), countMap(al.Delivered), countMap(al.Undelivered)})
	}
	var p htmlPage
	data.write(&p)
	_, err := io.WriteString(w, p.b.String())
	return err
}

// htmlTimelinePage is how many timeline rows a page of report.html shows
// at once; without script (or in print) every row shows.
const htmlTimelinePage = 200

type htmlData struct {
	R                          *score.Result
	Verdict                    string
	Expectations               []score.Verdict
	Charts                     []markup
	Overall                    [][2]string
	Faults, Targets, Demotions table
	FalseAlarms                table
	FalseAlarmsAbout           string
	Alerts                     table
	PromAlerts                 table
	PromAlertsAbout            string
	Timeline                   []timelineRow
	Kinds                      []kindCount
	KindTotals                 map[string]int // every notable event of the run per kind
	PageRows                   int
	TimelineNote               string
}

// markup is HTML that htmlPage writes as it is: the charts, built by plot
// with every text escaped.
type markup string

// htmlPage builds an HTML page. Its printf escapes every argument that is
// not markup, so text from a scenario or a run cannot become markup.
//
// The pages are written by hand, not with html/template: executing a
// template calls reflect's MethodByName, which makes the linker keep every
// exported method of every type in the binary (a third of its size).
type htmlPage struct{ b strings.Builder }

// printf formats with %v verbs only; each argument that is not markup is
// printed as fmt.Sprint prints it, then escaped.
func (p *htmlPage) printf(format string, args ...any) {
	for i, a := range args {
		if m, ok := a.(markup); ok {
			args[i] = string(m)
		} else {
			args[i] = html.EscapeString(fmt.Sprint(a))
		}
	}
	fmt.Fprintf(&p.b, format, args...)
}

func (p *htmlPage) raw(s string) { p.b.WriteString(s) }

// section writes t under an h2 title and, when about is not empty, a
// line that says what it shows; nothing when t has no rows.
func (p *htmlPage) section(title, about string, t table) {
	if len(t.Rows) == 0 {
		return
	}
	p.printf("<h2>%v</h2>\n", title)
	if about != "" {
		p.printf("<p class=\"meta\">%v</p>\n", about)
	}
	p.table(t)
}

// table writes t with a header row of its columns' long names.
func (p *htmlPage) table(t table) {
	p.raw("<table><tr>")
	for _, c := range t.Cols {
		p.printf("<th>%v</th>", c.Long)
	}
	p.raw("</tr>\n")
	for _, row := range t.Rows {
		p.raw("<tr>")
		for _, v := range row {
			p.printf("<td>%v</td>", v)
		}
		p.raw("</tr>\n")
	}
	p.raw("</table>")
}

func (d *htmlData) write(p *htmlPage) {
	r := d.R
	p.printf(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Game day: %v — %v</title>
<style>
`, r.Scenario, d.Verdict)
	p.raw(reportCSS)
	p.raw("</style></head><body>\n")
	p.printf(`<h1>Game day: %v <span class="verdict %v">%v</span></h1>
<p class="meta">mode %v · seed %v · ran %v of %v · SLO %v`, r.Scenario, d.Verdict, d.Verdict, r.Mode, r.Seed, fmtDur(r.Elapsed), fmtDur(r.Duration), sloParts(r.SLO))
	if r.BlackBox {
		p.raw(" · black-box (traffic-shift detection)")
	}
	if r.Aborted {
		p.printf(" · <strong>aborted: %v</strong>", r.AbortReason)
	}
	p.raw("</p>\n\n<h2 id=\"expectations\">Expectations</h2>\n")
	if len(d.Expectations) > 0 {
		p.raw("<table><tr><th></th><th>expectation</th><th>step</th><th>target</th><th>want</th><th>got</th></tr>\n")
		for _, v := range d.Expectations {
			verdict := markup(`fail">FAIL`)
			if v.Pass {
				verdict = `pass">PASS`
			}
			p.printf("<tr><td class=\"%v</td><td>%v</td><td>%v</td><td>%v</td><td>%v</td><td>%v</td></tr>\n", verdict, v.Name, v.Step, v.Target, v.Want, v.Got)
		}
		p.raw("</table>")
	} else {
		p.raw("<p>The scenario states no expectations.</p>")
	}
	p.raw("\n\n<h2>Over time</h2>\n")
	for _, c := range d.Charts {
		p.printf("%v\n", c)
	}
	if len(d.Charts) == 0 {
		p.raw("<p>No time series in this result.</p>")
	}
	p.raw("\n\n<h2>Overall</h2>\n<table>")
	for _, kv := range d.Overall {
		p.printf("<tr><th>%v</th><td>%v</td></tr>", kv[0], kv[1])
	}
	p.raw("</table>\n\n")
	p.section("False alarms", d.FalseAlarmsAbout, d.FalseAlarms)
	p.raw("\n\n")
	p.section("Fault steps", "", d.Faults)
	p.raw("\n\n")
	if len(d.Targets.Rows) > 0 {
		p.section("Targets", "", d.Targets)
		p.raw("\n")
		p.section("Demotions and flaps per target", "Demotions are breaker openings and unhealthy markings: re-detections within a fault, oscillations after one, false positives outside every fault. Flaps are oscillations plus false positives.", d.Demotions)
	}
	p.raw("\n\n")
	p.section("Alerts", "", d.Alerts)
	p.raw("\n\n")
	p.section("Prometheus alerts", d.PromAlertsAbout, d.PromAlerts)
	p.raw("\n\n<h2>Event timeline</h2>\n")
	if d.TimelineNote != "" {
		p.printf("<p class=\"cut\"><strong>Not the whole run:</strong> this timeline holds %v.</p>", d.TimelineNote)
	}
	p.raw(`
<p class="meta">Consecutive events that read the same are one row with a count; per-request events (tier.served, budget.exhausted, stream.*) are one row per target and detail between two other events. Every row result.json holds is here: filter by text or kind, and page through them.</p>
<div id="controls"><input id="filter" type="search" placeholder="filter: target, name, reason…">
`)
	for _, k := range d.Kinds {
		p.printf(`<label class="kind"><input type="checkbox" class="kindbox" value="%v" checked> %v (%v`, k.Kind, k.Kind, k.Count)
		if t := d.KindTotals[k.Kind]; t > k.Count {
			p.printf(" of %v", t)
		}
		p.raw(")</label>")
	}
	p.raw(`
<div id="pager"><button type="button" id="prev">← earlier</button> <span id="page"></span> <button type="button" id="next">later →</button></div></div>
<table id="timeline"><tr><th>at</th><th>kind</th><th>count</th><th>target</th><th>detail</th></tr>
`)
	for _, t := range d.Timeline {
		p.printf("<tr data-kind=\"%v\"><td>%v</td><td>%v</td><td>%v</td><td>%v</td><td>%v</td></tr>\n", t.Kind, t.At(), t.Kind, t.Times(), t.Target, t.Detail)
	}
	p.raw("</table>\n\n")
	if r.Source != "" {
		p.raw("<h2>Scenario file")
		if r.File != "" {
			p.printf(" (%v)", r.File)
		}
		p.printf("</h2>\n<pre>%v</pre>", r.Source)
	}
	p.printf("\n\n<script>\n"+timelineScript+"</script>\n</body></html>\n", d.PageRows)
}

// reportCSS styles report.html.
const reportCSS = `body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1040px;padding:16px 24px;color:#1d232a;background:#fff}
h1{font-size:22px;margin:8px 0}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.verdict{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:600}
.PASS{background:#2e9e6a}.FAIL{background:#c0392b}.ABORTED{background:#b9770e}
.meta{color:#555}
table{border-collapse:collapse;width:100%;margin:6px 0;font-size:13px}
th,td{border-bottom:1px solid #e5e5e5;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f7f9;font-weight:600}
td.pass{color:#2e9e6a;font-weight:600}td.fail{color:#c0392b;font-weight:600}
td:first-child,#timeline td:nth-child(-n+4){white-space:nowrap}
svg.chart{width:100%;height:auto;display:block;margin:10px 0 4px;background:#fcfcfd;border:1px solid #eee}
svg .title{font-size:13px;font-weight:600;fill:#222}
svg .grid{stroke:#e6e6e6}svg .tick{stroke:#999}
svg .ylabel{font-size:10px;fill:#666;text-anchor:end}svg .xlabel{font-size:10px;fill:#666;text-anchor:middle}
svg .rowlabel{font-size:11px;fill:#111;font-weight:600}svg .legend{font-size:11px;fill:#333}
svg .fault{fill:#d62728;fill-opacity:.08;stroke:#d62728;stroke-opacity:.25}
svg .faultlabel{font-size:10px;fill:#a33}
svg .area{fill-opacity:.85;stroke:none}
svg polyline{fill:none;stroke-width:1.8}
svg .success{stroke:#3b6fd6}svg .good{stroke:#2ca02c;stroke-dasharray:6 3}svg .ttft{stroke:#e08a1e}svg .cost{stroke:#3b6fd6}svg .counterfactual{stroke:#999;stroke-dasharray:5 4}
svg .slo{stroke:#2e9e6a;stroke-dasharray:6 4}svg .slo-label{font-size:10px;fill:#2e9e6a;text-anchor:end}
svg .detect{stroke:#9b59b6;stroke-width:1.5}svg .detect-label{font-size:10px;fill:#9b59b6}
svg .mitigate{stroke:#17a2b8;stroke-width:1.5;stroke-dasharray:3 3}svg .mitigate-label{font-size:10px;fill:#17a2b8}
pre{background:#f6f7f9;padding:10px;overflow:auto;font-size:12px;border:1px solid #eee}
#filter{margin:6px 0;padding:4px 6px;width:260px}
#pager{margin:6px 0;font-size:12px}.cut{background:#fff4e5;border:1px solid #f0ad4e;padding:6px 10px}
label.kind{margin-right:10px;font-size:12px;white-space:nowrap}
@media print{body{max-width:none;padding:0}#controls{display:none}h2{break-after:avoid}svg.chart,table{break-inside:avoid}}
`

// timelineScript filters and pages the timeline; %v is the rows per page.
const timelineScript = `(function(){
  var size=%v,page=0,f=document.getElementById('filter'),boxes=document.querySelectorAll('.kindbox'),
    rows=document.querySelectorAll('#timeline tr[data-kind]'),label=document.getElementById('page'),
    prev=document.getElementById('prev'),next=document.getElementById('next');
  function apply(){var q=f.value.toLowerCase(),on={},hit=[];boxes.forEach(function(b){on[b.value]=b.checked});
    rows.forEach(function(r){r.style.display='none';if(on[r.dataset.kind]&&r.textContent.toLowerCase().indexOf(q)>=0)hit.push(r)});
    var pages=Math.max(1,Math.ceil(hit.length/size));page=Math.min(Math.max(page,0),pages-1);
    hit.slice(page*size,(page+1)*size).forEach(function(r){r.style.display=''});
    label.textContent=hit.length?('rows '+(page*size+1)+'–'+Math.min(hit.length,(page+1)*size)+' of '+hit.length+' (page '+(page+1)+' of '+pages+')'):'no row matches';
    prev.disabled=page===0;next.disabled=page>=pages-1}
  f.addEventListener('input',function(){page=0;apply()});boxes.forEach(function(b){b.addEventListener('change',function(){page=0;apply()})});
  prev.addEventListener('click',function(){page--;apply()});next.addEventListener('click',function(){page++;apply()});
  apply();
})();
`
