package fleet

import (
	"context"
	"encoding/json"
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

// healthRecord is a shared demotion.
type healthRecord struct {
	Key    string `json:"key"`
	Member string `json:"member"`
	Reason string `json:"reason"`
	At     int64  `json:"at"` // Unix ms
}

// Demoted tells the fleet that this replica demoted target key for
// reason at a time; a demotion learned from the fleet (reason starting
// with FleetReason) is ignored. It never blocks.
func (f *Fleet) Demoted(key, reason string, at time.Time) {
	if strings.HasPrefix(reason, FleetReason) {
		return
	}
	f.push(item{health: &healthRecord{Key: key, Member: f.o.Member, Reason: reason, At: at.UnixMilli()}})
}

// putHealth writes a local demotion for the fleet.
func (f *Fleet) putHealth(ctx context.Context, h healthRecord) {
	rs, ok := f.store.(Records)
	if !ok {
		return
	}
	c, cancel := context.WithTimeout(ctx, f.o.Timeout)
	defer cancel()
	if err := PutDemotion(c, rs, f.o.Member, Demotion{Key: h.Key, Reason: h.Reason, At: time.UnixMilli(h.At)}, f.engine().Settings().Health.Window.D()); err != nil {
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
	ds, err := LoadDemotions(c, rs, f.o.Member, e.Keys(), f.healthAt)
	cancel()
	if err != nil {
		f.degrade(err)
		return false
	}
	for _, d := range ds {
		_ = d.Apply(e, now)
	}
	return true
}

// Demotion is a target's demotion by one replica of a fleet.
type Demotion struct {
	Key, Reason string
	At          time.Time
}

// PutDemotion writes member's demotion d for the fleet, kept for window
// (the health window). A demotion learned from the fleet (reason starting
// with FleetReason) is not written. The Fleet calls it for each demotion
// its replica makes; the game-day simulator for each of a simulated
// replica's.
func PutDemotion(ctx context.Context, rs Records, member string, d Demotion, window time.Duration) error {
	if strings.HasPrefix(d.Reason, FleetReason) {
		return nil
	}
	b, _ := json.Marshal(healthRecord{Key: d.Key, Member: member, Reason: d.Reason, At: d.At.UnixMilli()})
	return rs.Put(ctx, "health:"+d.Key, b, window)
}

// LoadDemotions reads the demotion records of targets keys in one round
// trip and returns those another member than member made after seen[key]
// (Unix ms), which it advances: each demotion is returned once.
func LoadDemotions(ctx context.Context, rs Records, member string, keys []string, seen map[string]int64) ([]Demotion, error) {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = "health:" + k
	}
	vals, err := rs.LoadMany(ctx, names)
	if err != nil {
		return nil, err
	}
	var out []Demotion
	for _, v := range vals {
		var h healthRecord
		if v == nil || json.Unmarshal(v, &h) != nil || h.Member == member || h.At <= seen[h.Key] {
			continue
		}
		seen[h.Key] = h.At
		out = append(out, Demotion{Key: h.Key, Reason: h.Reason, At: time.UnixMilli(h.At)})
	}
	return out, nil
}

// Apply demotes the target on engine e at now, for e's health window, with
// reason FleetReason + the original reason.
func (d Demotion) Apply(e *policy.Engine, now time.Time) error {
	return e.Signal(now, d.Key, FleetReason+d.Reason, policy.Demote)
}
