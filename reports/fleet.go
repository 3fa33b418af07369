package reports

import (
	"fmt"
	"strings"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// writeFleetScorecard writes the fleet section of the scorecard: the
// fleet's primary attempts per request during outages, its half-open
// trials per recovery and its store fallbacks, then each replica's part.
func writeFleetScorecard(b *strings.Builder, f *score.FleetScore) {
	if f == nil {
		return
	}
	fmt.Fprintf(b, "\nFleet (%d replicas, state %s)\n", f.Replicas, f.State)
	b.WriteString(wrap([]string{
		fmt.Sprintf("primary attempts per request during outages %.3f (%d of %d)", f.PrimaryAttemptsPerRequest, f.PrimaryAttempts, f.OutageRequests),
		fmt.Sprintf("half-open trials %d, per recovery at most %d", f.HalfOpenTrials, f.TrialsPerRecovery),
		fmt.Sprintf("store fallbacks %d (%d with the store up), resyncs %d", f.Degraded, f.SpuriousDegraded, f.Resynced),
		"recoveries " + fleetRecoveries(f)}, 2))
	t := table{Cols: []column{{Long: "replica", Num: true}, {Long: "requests", Num: true}, {Long: "attempts", Num: true},
		{Long: "outage requests", Short: "outage reqs", Num: true}, {Long: "primary attempts", Short: "primary", Num: true},
		{Long: "per request", Short: "per req", Num: true}, {Long: "half-open trials", Short: "trials", Num: true},
		{Long: "store fallbacks", Short: "fallbacks", Num: true}}}
	for _, r := range f.PerReplica {
		t.Rows = append(t.Rows, []string{fmt.Sprint(r.Replica), fmt.Sprint(r.Requests), fmt.Sprint(r.Attempts), fmt.Sprint(r.OutageRequests),
			fmt.Sprint(r.PrimaryAttempts), fmt.Sprintf("%.3f", r.PrimaryAttemptsPerRequest), fmt.Sprint(r.HalfOpenTrials), fmt.Sprint(r.Degraded)})
	}
	writeTable(b, t)
}

// fleetRows are the fleet's rows of the Markdown overall table.
func fleetRows(f *score.FleetScore) [][2]string {
	if f == nil {
		return nil
	}
	return [][2]string{
		{"fleet", fmt.Sprintf("%d replicas, state %s", f.Replicas, f.State)},
		{"fleet primary attempts per request during outages", fmt.Sprintf("%.3f (%d of %d)", f.PrimaryAttemptsPerRequest, f.PrimaryAttempts, f.OutageRequests)},
		{"fleet half-open trials (most per recovery)", fmt.Sprintf("%d (%d)", f.HalfOpenTrials, f.TrialsPerRecovery)},
		{"fleet store fallbacks (store up) / resyncs", fmt.Sprintf("%d (%d) / %d", f.Degraded, f.SpuriousDegraded, f.Resynced)},
		{"fleet recoveries (every replica's breaker closed, health back)", fleetRecoveries(f)},
	}
}

// fleetRecoveries says of each recovery whether every replica's breaker
// closed and every replica's health took the target back: "none", or
// "gpt4o-down openai:gpt-4o closed, healthy".
func fleetRecoveries(f *score.FleetScore) string {
	if len(f.Recoveries) == 0 {
		return "none"
	}
	var parts []string
	for _, r := range f.Recoveries {
		state := []string{"not closed", "not healthy"}
		if r.Closed {
			state[0] = "closed"
		}
		if r.Healthy {
			state[1] = "healthy"
		}
		parts = append(parts, r.Step+" "+r.Target+" "+strings.Join(state, ", "))
	}
	return strings.Join(parts, "; ")
}
