package score

import (
	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/policy"
	"slices"
	"time"
)

// FleetScore is what a fleet of gateway replicas did: the whole fleet and
// each replica. It is set when the game day runs more than one replica or
// shares their state (gateway.replicas, gateway.state).
//
// An outage is a fault or kill step on a route's primary target, from its
// start to its end. A half-open trial is an attempt a replica sends to a
// target while its own breaker on that target is half-open. A recovery
// starts when such a step ends and lasts until every replica's breaker on
// the target is closed again.
type FleetScore struct {
	Replicas int    `json:"replicas"`
	State    string `json:"state"` // memory or redis
	// OutageRequests are the user requests that arrived during outages on
	// their route's primary; PrimaryAttempts the attempts the fleet sent to
	// the faulted primary meanwhile, and PrimaryAttemptsPerRequest their
	// ratio (0 without outages).
	OutageRequests            int     `json:"outage_requests"`
	PrimaryAttempts           int     `json:"primary_attempts"`
	PrimaryAttemptsPerRequest float64 `json:"primary_attempts_per_request"`
	// HalfOpenTrials counts the fleet's half-open trials over the run.
	HalfOpenTrials int `json:"half_open_trials"`
	// Recoveries are the recoveries after each outage, in the order their
	// steps ended; TrialsPerRecovery is the most trials any of them took.
	Recoveries        []FleetRecovery `json:"recoveries,omitempty"`
	TrialsPerRecovery int             `json:"trials_per_recovery"`
	// Degraded counts the times a replica fell back to local state because
	// the store was unavailable (state.degraded), Resynced the times one
	// followed the store again.
	Degraded int `json:"degraded"`
	Resynced int `json:"resynced"`
	// SpuriousDegraded counts the fallbacks to local state that came while
	// no store step was active (the store up and answering in time, as far
	// as the game day made it): load or a tight state.timeout, not an
	// outage. Degraded includes them.
	SpuriousDegraded int `json:"spurious_degraded"`
	// PerReplica holds each replica's part, replica 1 first.
	PerReplica []ReplicaScore `json:"per_replica"`
}

// FleetRecovery is one recovery of a target after a step.
type FleetRecovery struct {
	Step   string `json:"step"`
	Target string `json:"target"`
	// Trials the fleet sent to the target during the recovery.
	Trials int `json:"trials"`
	// Closed: every replica's breaker closed before the run ended or
	// another step faulted the target.
	Closed bool `json:"closed"`
	// Healthy: every replica's health took the target back in full
	// (healthy, its ramp done) in that time. A fleet that demotes by
	// health rather than by breaker recovers through health: its breakers
	// may never have opened.
	Healthy bool `json:"healthy"`
}

// ReplicaScore is one replica's part of a fleet's score.
type ReplicaScore struct {
	Replica                   int     `json:"replica"`
	Requests                  int     `json:"requests"`
	Attempts                  int     `json:"attempts"`
	OutageRequests            int     `json:"outage_requests"`
	PrimaryAttempts           int     `json:"primary_attempts"`
	PrimaryAttemptsPerRequest float64 `json:"primary_attempts_per_request"`
	HalfOpenTrials            int     `json:"half_open_trials"`
	Degraded                  int     `json:"degraded"`
}

// Window is a span of the run: a store step's, for the fleet's score.
type Window struct{ Start, End time.Time }

// Fleet scores the log of a fleet of replicas whose breakers live in
// state (memory or redis); storeFaults are the windows of the game day's
// store steps (down or slow).
func Fleet(in *Input, replicas int, state string, storeFaults []Window) *FleetScore {
	n := max(replicas, 1)
	fs := &FleetScore{Replicas: n, State: state, PerReplica: make([]ReplicaScore, n)}
	for i := range fs.PerReplica {
		fs.PerReplica[i].Replica = i + 1
	}
	primaries := map[string]bool{}
	routeOf := map[string]string{} // route → its primary
	for r, t := range in.Primary {
		primaries[t] = true
		routeOf[r] = t
	}
	// outage: the primaries under a step now. breaker: each replica's
	// breaker state by target. recovering: the open recovery of a target.
	outage := map[string]bool{}
	breaker := make([]map[string]string, n)
	for i := range breaker {
		breaker[i] = map[string]string{}
	}
	health := make([]map[string]string, n)
	for i := range health {
		health[i] = map[string]string{}
	}
	recovering := map[string]int{} // target → index in fs.Recoveries (breakers)
	healing := map[string]int{}    // target → index in fs.Recoveries (health)
	allClosed := func(target string) bool {
		for _, b := range breaker {
			if st, ok := b[target]; ok && st != string(policy.Closed) {
				return false
			}
		}
		return true
	}
	allHealthy := func(target string) bool {
		for _, h := range health {
			if st, ok := h[target]; ok && st != string(policy.Healthy) {
				return false
			}
		}
		return true
	}
	for _, e := range in.all() {
		rep := &fs.PerReplica[min(max(e.Replica, 1), n)-1]
		switch e.Kind {
		case events.FaultStart:
			delete(recovering, e.Target) // superseded: never closed
			delete(healing, e.Target)
			if primaries[e.Target] {
				outage[e.Target] = true
			}
		case events.FaultEnd:
			delete(outage, e.Target)
			fs.Recoveries = append(fs.Recoveries, FleetRecovery{Step: e.Name, Target: e.Target})
			recovering[e.Target] = len(fs.Recoveries) - 1
			if allClosed(e.Target) {
				fs.Recoveries[len(fs.Recoveries)-1].Closed = true
				delete(recovering, e.Target)
			}
			healing[e.Target] = len(fs.Recoveries) - 1
			if allHealthy(e.Target) {
				fs.Recoveries[len(fs.Recoveries)-1].Healthy = true
				delete(healing, e.Target)
			}
		case events.RequestStart:
			rep.Requests++
			if p := routeOf[e.Route]; p != "" && outage[p] {
				rep.OutageRequests++
			}
		case events.AttemptStart:
			rep.Attempts++
			if outage[e.Target] {
				rep.PrimaryAttempts++
			}
			if breaker[rep.Replica-1][e.Target] == string(policy.HalfOpen) {
				rep.HalfOpenTrials++
				if k, ok := recovering[e.Target]; ok {
					fs.Recoveries[k].Trials++
				}
			}
		case events.BreakerTransition:
			breaker[rep.Replica-1][e.Target] = e.To
			if k, ok := recovering[e.Target]; ok && allClosed(e.Target) {
				fs.Recoveries[k].Closed = true
				delete(recovering, e.Target)
			}
		case events.HealthChange:
			health[rep.Replica-1][e.Target] = e.To
			if k, ok := healing[e.Target]; ok && allHealthy(e.Target) {
				fs.Recoveries[k].Healthy = true
				delete(healing, e.Target)
			}
		case events.StateDegraded:
			if e.OK {
				fs.Resynced++
				break
			}
			rep.Degraded++
			if !slices.ContainsFunc(storeFaults, func(w Window) bool { return !e.Time.Before(w.Start) && !e.Time.After(w.End) }) {
				fs.SpuriousDegraded++
			}
		}
	}
	for i := range fs.PerReplica {
		r := &fs.PerReplica[i]
		r.PrimaryAttemptsPerRequest = ratio(float64(r.PrimaryAttempts), float64(r.OutageRequests))
		fs.OutageRequests += r.OutageRequests
		fs.PrimaryAttempts += r.PrimaryAttempts
		fs.HalfOpenTrials += r.HalfOpenTrials
		fs.Degraded += r.Degraded
	}
	fs.PrimaryAttemptsPerRequest = ratio(float64(fs.PrimaryAttempts), float64(fs.OutageRequests))
	for _, r := range fs.Recoveries {
		fs.TrialsPerRecovery = max(fs.TrialsPerRecovery, r.Trials)
	}
	return fs
}
