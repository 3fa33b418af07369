package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// mdEscape keeps a value from breaking a Markdown table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// WriteMarkdown writes the report as Markdown, for a ticket or a postmortem.
func WriteMarkdown(w io.Writer, r *score.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Game day: %s — %s\n\n", mdEscape(r.Scenario), runVerdict(r))
	fmt.Fprintf(&b, "- Mode: %s, seed %d\n- Ran %s of %s\n", r.Mode, r.Seed, fmtDur(r.Elapsed), fmtDur(r.Duration))
	if r.Aborted {
		fmt.Fprintf(&b, "- **Aborted:** %s\n", mdEscape(r.AbortReason))
	}
	fmt.Fprintf(&b, "- SLO: %s\n", sloParts(r.SLO))
	if r.BlackBox {
		b.WriteString("- Black-box run: detection measured as traffic shift at the mocks\n")
	}

	b.WriteString("\n## Expectations\n\n")
	if r.Aborted {
		fmt.Fprintf(&b, "Judged on the %s that ran; the run was aborted, so it fails whatever they say.\n\n", fmtDur(r.Elapsed))
	}
	b.WriteString("| | expectation | want | got |\n|---|---|---|---|\n")
	for _, v := range failingFirst(r.Expectations) {
		name := v.Name
		if v.Step != "" {
			name += " [" + v.Step + "]"
		}
		if v.Target != "" {
			name += " " + v.Target
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", verdictWord(v.Pass), mdEscape(name), mdEscape(v.Want), mdEscape(v.Got))
	}

	b.WriteString("\n## Overall\n\n| score | value |\n|---|---|\n")
	for _, row := range append(overallRows(r), fleetRows(r.Fleet)...) {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], mdEscape(row[1]))
	}
	if len(r.Overall.FalseAlarms) > 0 {
		b.WriteString("\n## False alarms\n\n" + falseAlarmsAbout + "\n\n")
		writeMDTable(&b, falseAlarmTable(r))
	}
	if len(r.Faults) > 0 {
		b.WriteString("\n## Fault steps\n\n")
		writeMDTable(&b, faultTable(r))
	}
	if len(r.Targets) > 0 {
		b.WriteString("\n## Targets\n\n")
		writeMDTable(&b, targetTable(r))
		b.WriteString("\n## Demotions and flaps per target\n\n" +
			"Demotions are breaker openings and unhealthy markings: re-detections within a fault, oscillations " +
			"after one, false positives outside every fault. Flaps are oscillations plus false positives.\n\n")
		writeMDTable(&b, demotionTable(r))
	}
	if len(r.Alerts) > 0 {
		b.WriteString("\n## Alerts\n\n| alert | severity | fired | first | delivered | undelivered |\n|---|---|---|---|---|---|\n")
		for _, al := range r.Alerts {
			first := "–"
			if !al.FirstAt.IsZero() {
				first = fmtDur(al.FirstAt.Sub(r.Start))
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s |\n", mdEscape(al.Name), al.Severity, al.Fired, first, countMap(al.Delivered), countMap(al.Undelivered))
		}
	}
	if r.PromAlerts != nil {
		b.WriteString("\n## Prometheus alerts\n\n" + promAlertsAbout(r) + "\n\n")
		writeMDTable(&b, promAlertsTable(r))
	}
	writeMDTimeline(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// falseAlarmsAbout says what a false alarm is, above its table.
const falseAlarmsAbout = "Alarms raised with no fault to find: a breaker or health demotion, a detector " +
	"or probe finding, an alert, on a target with no fault active."

// mdTimelineRows bounds the Markdown timeline; report.html has every row.
const mdTimelineRows = 200

// writeMDTimeline writes the grouped event timeline: the count of each
// kind, then one row per group (see groupTimeline).
func writeMDTimeline(b *strings.Builder, r *score.Result) {
	if len(r.Series.Timeline) == 0 {
		if note := timelineNote(r); note != "" {
			b.WriteString("\n## Timeline\n\n**Not the whole run:** this report holds " + note + ".\n")
		}
		return
	}
	b.WriteString("\n## Timeline\n\n")
	var kinds []string
	totals := notableKinds(r)
	for _, k := range timelineKinds(r.Series.Timeline) {
		kind := fmt.Sprintf("%s %d", k.Kind, k.Count)
		if n := totals[k.Kind]; n > k.Count {
			kind += fmt.Sprintf(" of %d", n)
		}
		kinds = append(kinds, kind)
	}
	b.WriteString("Events: " + strings.Join(kinds, ", ") + ".")
	if note := timelineNote(r); note != "" {
		b.WriteString(" **Not the whole run:** this report holds " + note + ".")
	}
	b.WriteString(" Repeated events are one row with a count.\n\n| at | kind | count | target | detail |\n|---|---|---|---|---|\n")
	rows := groupTimeline(r.Start, r.Series.Timeline)
	for i, t := range rows {
		if i == mdTimelineRows {
			fmt.Fprintf(b, "\n%d more rows, from %s, in report.html.\n", len(rows)-i, fmtDur(t.From))
			break
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", t.At(), t.Kind, t.Times(), mdEscape(t.Target), mdEscape(t.Detail))
	}
}

// writeMDTable writes a table with its long headers.
func writeMDTable(b *strings.Builder, t table) {
	for _, c := range t.Cols {
		b.WriteString("| " + c.Long + " ")
	}
	b.WriteString("|\n" + strings.Repeat("|---", len(t.Cols)) + "|\n")
	for _, row := range t.Rows {
		for _, cell := range row {
			b.WriteString("| " + mdEscape(cell) + " ")
		}
		b.WriteString("|\n")
	}
}

func countMap(m map[string]int) string {
	if len(m) == 0 {
		return "–"
	}
	keys := sortedKeys(m)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
