package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// TestScorecardFleet: a fleet's result shows the fleet's line and each
// replica's row; a gateway alone's shows no fleet section.
func TestScorecardFleet(t *testing.T) {
	r := &score.Result{Scenario: "fleet", Mode: score.ModeSim, Fleet: &score.FleetScore{
		Replicas: 2, State: "redis", OutageRequests: 200, PrimaryAttempts: 7, PrimaryAttemptsPerRequest: 0.035,
		HalfOpenTrials: 4, TrialsPerRecovery: 2, Degraded: 2, Resynced: 2, SpuriousDegraded: 1,
		PerReplica: []score.ReplicaScore{
			{Replica: 1, Requests: 100, Attempts: 104, OutageRequests: 100, PrimaryAttempts: 5, PrimaryAttemptsPerRequest: 0.05, HalfOpenTrials: 3, Degraded: 1},
			{Replica: 2, Requests: 100, Attempts: 102, OutageRequests: 100, PrimaryAttempts: 2, PrimaryAttemptsPerRequest: 0.02, HalfOpenTrials: 1, Degraded: 1},
		}}}
	var b bytes.Buffer
	require.NoError(t, WriteScorecard(&b, r, false))
	out := b.String()
	require.Contains(t, out, "Fleet (2 replicas, state redis)\n")
	require.Contains(t, out, "  primary attempts per request during outages 0.035 (7 of 200)\n    half-open trials 4, per recovery at most 2  store fallbacks 2 (1 with the store up), resyncs 2\n")
	require.Regexp(t, `\n +1 +100 +104 +100 +5 +0\.050 +3 +1\n +2 +100 +102 +100 +2 +0\.020 +1 +1\n`, out)
	for line := range strings.SplitSeq(out, "\n") {
		require.LessOrEqual(t, width(line), ScorecardWidth, line)
	}

	r.Fleet = nil
	b.Reset()
	require.NoError(t, WriteScorecard(&b, r, false))
	require.NotContains(t, b.String(), "Fleet")
}
