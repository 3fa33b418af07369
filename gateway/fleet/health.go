package fleet

import (
	"context"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/gateway/policy"
)

// A fleet shares health demotions too, with no store call on the request
// path: a replica that demotes a target (passive health, an SLA cutoff, a
// detector) tells its Fleet (Demoted), whose goroutine writes the record
// "health:KEY" (who, why, when; kept for the health window); every
// Options.Share the Fleet reads the records of all its targets in one
// round trip and demotes, for its own health window, each target another
// replica demoted since (reason "fleet:" + the original reason). A
// demotion thus reaches the fleet within one Share interval; recovery and
// its ramp stay each replica's own.

// FleetReason starts the reason of a demotion (or breaker transition)
// learned from the fleet; such demotions are not shared again.
const FleetReason = "fleet:"

// healthRecord is a shared demotion as the store keeps it.
type healthRecord struct {
	Key    string `json:"key"`
	Member string `json:"member"`
	Reason string `json:"reason"`
	At     int64  `json:"at"` // Unix ms
}

// Demoted tells the fleet that this replica demoted target key for
// reason at a time (see ShareDemotion); a demotion learned from the fleet
// (reason starting with FleetReason) is ignored. It never blocks.
func (f *Fleet) Demoted(key, reason string, at time.Time) {
	if strings.HasPrefix(reason, FleetReason) {
		return
	}
	f.push(item{health: &Demotion{Key: key, Reason: reason, At: time.UnixMilli(at.UnixMilli())}})
}

// putHealth writes a local demotion for the fleet.
func (f *Fleet) putHealth(ctx context.Context, d Demotion) {
	rs, ok := f.store.(Records)
	if !ok {
		return
	}
	r, ok := f.sy.Demoted(f.engine(), d)
	if !ok {
		return
	}
	c, cancel := context.WithTimeout(ctx, f.o.Timeout)
	defer cancel()
	if err := rs.Put(c, r.Name, r.Value, r.TTL); err != nil {
		f.degrade(err)
	}
}

// shareHealth applies the demotions other replicas made since the last
// call; it reports whether the store answered.
func (f *Fleet) shareHealth(ctx context.Context, e *policy.Engine, now time.Time) bool {
	rs, ok := f.store.(Records)
	if !ok {
		return true
	}
	c, cancel := context.WithTimeout(ctx, f.o.Timeout)
	vals, err := rs.LoadMany(c, f.sy.HealthNames(e))
	cancel()
	if err != nil {
		f.degrade(err)
		return false
	}
	f.sy.Learn(e, now, nil, f.sy.Demotions(vals))
	return true
}

// Demotion is a target's demotion by one replica of a fleet.
type Demotion struct {
	Key, Reason string
	At          time.Time
}

// Apply demotes the target on engine e at now, for e's health window, with
// reason FleetReason + the original reason.
func (d Demotion) Apply(e *policy.Engine, now time.Time) error {
	return e.Signal(now, d.Key, FleetReason+d.Reason, policy.Demote)
}
