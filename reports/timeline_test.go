package reports

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/events"
)

// TestGroupTimeline: per-request events (tier.served, budget.exhausted)
// become one row per target and detail between two other events; an
// event repeating the previous other event adds to its row; every
// transition keeps a row of its own, in order.
func TestGroupTimeline(t *testing.T) {
	s := time.Second
	ev := func(at time.Duration, kind events.Kind, target string, f func(*events.Event)) events.Event {
		e := events.Event{Time: t0.Add(at), Kind: kind, Target: target}
		if f != nil {
			f(&e)
		}
		return e
	}
	tier := func(name string) func(*events.Event) { return func(e *events.Event) { e.Tier, e.Route = name, "chat" } }
	to := func(from, to string) func(*events.Event) { return func(e *events.Event) { e.From, e.To = from, to } }
	sink := func(ok bool) func(*events.Event) {
		return func(e *events.Event) { e.Name, e.Sink, e.OK = "a", "oncall", ok }
	}
	log := []events.Event{
		ev(1*s, events.FaultStart, "p:m", func(e *events.Event) { e.Name = "f" }),
		ev(2*s, events.TierServed, "q:m", tier("equivalent")),
		ev(3*s, events.BudgetExhausted, "p:m", nil),
		ev(4*s, events.TierServed, "r:m", tier("degraded")),
		ev(5*s, events.TierServed, "q:m", tier("equivalent")),
		ev(6*s, events.BudgetExhausted, "p:m", nil),
		ev(7*s, events.HealthChange, "q:m", to("healthy", "unhealthy")),
		ev(8*s, events.TierServed, "q:m", tier("equivalent")),
		ev(9*s, events.AlertDelivered, "", sink(false)),
		ev(10*s, events.TierServed, "q:m", tier("equivalent")),
		ev(11*s, events.AlertDelivered, "", sink(false)),
		ev(12*s, events.AlertDelivered, "", sink(false)),
		ev(13*s, events.AlertDelivered, "", sink(true)),
		ev(14*s, events.TierServed, "q:m", tier("equivalent")),
	}
	want := []timelineRow{
		{1 * s, 1 * s, "fault.start", "p:m", "name=f", 1},
		{2 * s, 5 * s, "tier.served", "q:m", "route=chat tier=equivalent", 2},
		{3 * s, 6 * s, "budget.exhausted", "p:m", "", 2},
		{4 * s, 4 * s, "tier.served", "r:m", "route=chat tier=degraded", 1},
		{7 * s, 7 * s, "health.change", "q:m", "healthy → unhealthy", 1},
		{8 * s, 8 * s, "tier.served", "q:m", "route=chat tier=equivalent", 1},
		{9 * s, 12 * s, "alert.delivered", "", "name=a sink=oncall ok=false", 3},
		{10 * s, 10 * s, "tier.served", "q:m", "route=chat tier=equivalent", 1},
		{13 * s, 13 * s, "alert.delivered", "", "name=a sink=oncall ok=true", 1},
		{14 * s, 14 * s, "tier.served", "q:m", "route=chat tier=equivalent", 1},
	}
	got := groupTimeline(t0, log)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if got[1].At() != "2s–5s" || got[1].Times() != "×2" || got[0].At() != "1s" || got[0].Times() != "" {
		t.Errorf("row 1 prints %q %q, row 0 %q %q", got[1].At(), got[1].Times(), got[0].At(), got[0].Times())
	}
	kinds := timelineKinds(log)
	if d := cmp.Diff([]kindCount{{"tier.served", 6}, {"alert.delivered", 4}, {"budget.exhausted", 2}, {"fault.start", 1}, {"health.change", 1}}, kinds); d != "" {
		t.Errorf("kinds (-want +got):\n%s", d)
	}
}
