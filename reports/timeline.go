package reports

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// The event timeline, grouped: a game day's notable events are mostly one
// row per request (tier.served), which buries the dozen transitions that
// tell the story. Rows are grouped so that every transition keeps its row.

// perRequest are the kinds emitted once per request: between two other
// events, each distinct (kind, target, detail) of these is one row.
var perRequest = map[events.Kind]bool{
	events.TierServed:         true,
	events.BudgetExhausted:    true,
	events.StreamContinuation: true,
	events.StreamMalformed:    true,
}

// timelineRow is one row of the grouped timeline: Count events of one kind,
// target and detail, the first at From and the last at To (offsets from the
// run's start).
type timelineRow struct {
	From, To             time.Duration
	Kind, Target, Detail string
	Count                int
}

// At prints when the row's events happened: "1m2.3s", or "1m2.3s–1m9s".
func (t timelineRow) At() string {
	if t.Count == 1 || fmtDur(t.From) == fmtDur(t.To) {
		return fmtDur(t.From)
	}
	return fmtDur(t.From) + "–" + fmtDur(t.To)
}

// Times prints the row's count: "" for one event, "×57" for more.
func (t timelineRow) Times() string {
	if t.Count == 1 {
		return ""
	}
	return fmt.Sprintf("×%d", t.Count)
}

type rowKey struct{ kind, target, detail string }

// groupTimeline groups a timeline's events into rows, in order of each
// row's first event:
//   - events of a per-request kind (tier.served, budget.exhausted, stream.*)
//     that read the same (kind, target, detail) are one row until the next
//     event of another kind that is not itself folded into a row;
//   - any other event repeating the previous such event (the same kind,
//     target and detail) adds to its row.
func groupTimeline(start time.Time, evs []events.Event) []timelineRow {
	var rows []timelineRow
	open := map[rowKey]int{} // per-request rows since the last other event
	last := -1               // the last other event's row
	for _, e := range evs {
		k := rowKey{string(e.Kind), e.Target, eventDetail(e)}
		at := e.Time.Sub(start)
		i, ok := -1, false
		if perRequest[e.Kind] {
			i, ok = open[k]
		} else if last >= 0 && rows[last].key() == k {
			i, ok = last, true
		}
		if ok {
			rows[i].To = at
			rows[i].Count++
			continue
		}
		if !perRequest[e.Kind] {
			clear(open)
			last = len(rows)
		} else {
			open[k] = len(rows)
		}
		rows = append(rows, timelineRow{From: at, To: at, Kind: k.kind, Target: k.target, Detail: k.detail, Count: 1})
	}
	return rows
}

func (t timelineRow) key() rowKey { return rowKey{t.Kind, t.Target, t.Detail} }

// kindCount is how many timeline events one kind has.
type kindCount struct {
	Kind  string
	Count int
}

// timelineKinds counts the timeline's events per kind, most first (then
// by name).
func timelineKinds(evs []events.Event) []kindCount {
	n := map[string]int{}
	for _, e := range evs {
		n[string(e.Kind)]++
	}
	out := make([]kindCount, 0, len(n))
	for k, c := range n {
		out = append(out, kindCount{k, c})
	}
	slices.SortFunc(out, func(a, b kindCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return out
}

// timelineNote says when the stored timeline is not the whole story: the
// result keeps at most score.MaxTimeline notable events, the first ones,
// so the note says how many it kept, up to when, and where the rest are
// ("" when it kept them all).
func timelineNote(r *score.Result) string {
	total := 0
	for _, n := range notableKinds(r) {
		total += n
	}
	kept := len(r.Series.Timeline)
	if total <= kept {
		return ""
	}
	until := ""
	if kept > 0 {
		until = fmt.Sprintf(", up to %s of the run's %s", fmtDur(r.Series.Timeline[kept-1].Time.Sub(r.Start)), fmtDur(r.Elapsed))
	}
	return fmt.Sprintf("the first %d of %d notable events%s: result.json keeps at most %d; events.jsonl has them all", kept, total, until, score.MaxTimeline)
}

// notableKinds counts the run's notable events per kind (everything but
// requests and attempts), from every event the run had, not only those
// result.json kept.
func notableKinds(r *score.Result) map[string]int {
	out := map[string]int{}
	for k, n := range r.Events.ByKind {
		switch events.Kind(k) {
		case events.RequestStart, events.RequestEnd, events.AttemptStart, events.AttemptEnd:
		default:
			out[k] = n
		}
	}
	return out
}

// eventDetail summarises the fields of a notable event.
func eventDetail(e events.Event) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("name", e.Name)
	if e.From != "" || e.To != "" {
		parts = append(parts, e.From+" → "+e.To)
	}
	add("reason", e.Reason)
	add("severity", e.Severity)
	add("sink", e.Sink)
	add("route", e.Route)
	add("tier", e.Tier)
	if e.Kind == events.AlertDelivered || e.Kind == events.ProbeResult || e.Kind == events.ConfigReload {
		parts = append(parts, fmt.Sprintf("ok=%t", e.OK))
	}
	if e.Value != 0 {
		parts = append(parts, fmt.Sprintf("value=%.4g", e.Value))
	}
	return strings.Join(parts, " ")
}
