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
	b, _ := json.Marshal(h)
	c, cancel := context.WithTimeout(ctx, f.o.Timeout)
	defer cancel()
	if err := rs.Put(c, "health:"+h.Key, b, f.engine().Settings().Health.Window.D()); err != nil {
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
	keys := e.Keys()
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = "health:" + k
	}
	c, cancel := context.WithTimeout(ctx, f.o.Timeout)
	vals, err := rs.LoadMany(c, names)
	cancel()
	if err != nil {
		f.degrade(err)
		return false
	}
	for _, v := range vals {
		var h healthRecord
		if v == nil || json.Unmarshal(v, &h) != nil || h.Member == f.o.Member || h.At <= f.healthAt[h.Key] {
			continue
		}
		f.healthAt[h.Key] = h.At
		_ = e.Signal(now, h.Key, FleetReason+h.Reason, policy.Demote)
	}
	return true
}
