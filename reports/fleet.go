package reports

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/brownout-dev/brownout/scenarios"
)

// writeFleetScorecard writes the fleet section of the scorecard: the
// fleet's primary attempts per request during outages, its half-open
// trials per recovery and its store fallbacks, then each replica's part.
func writeFleetScorecard(b *strings.Builder, f *scenarios.FleetScore) {
	if f == nil {
		return
	}
	fmt.Fprintf(b, "\nFleet (%d replicas, state %s)\n", f.Replicas, f.State)
	fmt.Fprintf(b, "  primary attempts per request during outages %.3f (%d of %d)  half-open trials %d, per recovery at most %d  store fallbacks %d, resyncs %d\n",
		f.PrimaryAttemptsPerRequest, f.PrimaryAttempts, f.OutageRequests, f.HalfOpenTrials, f.TrialsPerRecovery, f.Degraded, f.Resynced)
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  replica\trequests\tattempts\toutage requests\tprimary attempts\tper request\thalf-open trials\tstore fallbacks")
	for _, r := range f.PerReplica {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%d\t%d\t%.3f\t%d\t%d\n", r.Replica, r.Requests, r.Attempts, r.OutageRequests,
			r.PrimaryAttempts, r.PrimaryAttemptsPerRequest, r.HalfOpenTrials, r.Degraded)
	}
	_ = tw.Flush()
}

// fleetRows are the fleet's rows of the Markdown overall table.
func fleetRows(f *scenarios.FleetScore) [][2]string {
	if f == nil {
		return nil
	}
	return [][2]string{
		{"fleet", fmt.Sprintf("%d replicas, state %s", f.Replicas, f.State)},
		{"fleet primary attempts per request during outages", fmt.Sprintf("%.3f (%d of %d)", f.PrimaryAttemptsPerRequest, f.PrimaryAttempts, f.OutageRequests)},
		{"fleet half-open trials (most per recovery)", fmt.Sprintf("%d (%d)", f.HalfOpenTrials, f.TrialsPerRecovery)},
		{"fleet store fallbacks / resyncs", fmt.Sprintf("%d / %d", f.Degraded, f.Resynced)},
	}
}
