package scenarios_test

import (
	"context"
	"fmt"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// Play three gateway replicas sharing their breakers while the primary
// rate-limits and the store goes away for 3 seconds, and read the fleet's
// scores: every replica fell back to its own breakers and resynced, and
// no request failed.
func ExampleFleetScore() {
	s, err := scenarios.Load("testdata/fleet/storm.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := scenarios.Run(context.Background(), s, scenarios.Options{Mode: score.ModeSim})
	if err != nil {
		fmt.Println(err)
		return
	}
	f := res.Fleet
	fmt.Println("replicas:", f.Replicas, "state:", f.State)
	fmt.Println("fell back:", f.Degraded, "resynced:", f.Resynced)
	for _, r := range f.PerReplica {
		fmt.Println("replica", r.Replica, "requests:", r.Requests, "fell back:", r.Degraded)
	}
	fmt.Println("failed:", res.Overall.Availability.Failed)
	// Output:
	// replicas: 3 state: redis
	// fell back: 3 resynced: 3
	// replica 1 requests: 60 fell back: 1
	// replica 2 requests: 60 fell back: 1
	// replica 3 requests: 59 fell back: 1
	// failed: 0
}
