package scenarios

import (
	"fmt"
	"strings"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// The simulator's timeline steps and alert evaluation.

func (m *sim) stepStart(i int) {
	st := &m.s.Timeline[i]
	now := m.nowT
	switch st.Kind() {
	case StepFault:
		targets, _ := m.s.expandTarget(st.Target)
		for _, k := range targets {
			prov, _, _ := strings.Cut(k, ":")
			p := m.provs[prov]
			if p == nil {
				continue
			}
			id, err := p.AddFault(now, st.faultFor(k))
			if err != nil {
				// Never a fault.start for a fault that is not there: the
				// run stops with the error.
				m.err = fmt.Errorf("%w: step %s: fault on %s: %w", ErrInvalid, st.Name, k, err)
				m.end = m.now
				continue
			}
			m.faultIDs[i] = append(m.faultIDs[i], faultRef{prov: p, id: id, target: k})
			m.Emit(events.Event{Time: now, Kind: events.FaultStart, Name: st.Name, Target: k, Reason: string(st.Fault.Kind)})
		}
	case StepKill:
		m.killed[st.Kill] = true
		if p := m.provs[st.Kill]; p != nil {
			defer m.killStreams(p) // after fault.start, as the gateway sees it
		}
		targets, _ := m.s.expandTarget(st.Kill)
		for _, k := range targets {
			m.faultIDs[i] = append(m.faultIDs[i], faultRef{target: k})
			m.Emit(events.Event{Time: now, Kind: events.FaultStart, Name: st.Name, Target: k, Reason: "kill"})
		}
	case StepReload:
		gc, err := loadGatewayConfig(m.s.rel(st.Reload.Config))
		var cfg policy.Config
		if err == nil {
			cfg = gc.Config
		}
		engs, kept := make([]*policy.Engine, len(m.reps)), false
		for k, rp := range m.reps {
			if err != nil {
				break
			}
			// lifecycle.Reload, the gateway's rule too: unchanged routes
			// and policy keep the core; a change carries breaker and
			// health state into a new one. Every replica reloads.
			engs[k], kept, err = lifecycle.Reload(rp.eng, cfg, m.replicaOptions(rp, m.s.Seed, "policy/"+st.Name))
		}
		if err != nil {
			m.Emit(events.Event{Time: now, Kind: events.ConfigReload, Name: st.Name, OK: false, Reason: firstLine(err.Error())})
			return
		}
		for k, rp := range m.reps {
			// Each replica says it reloaded, as each gateway does.
			rp.Emit(events.Event{Time: now, Kind: events.ConfigReload, Name: st.Name, OK: true, Reason: lifecycle.ReloadReason(kept)})
			rp.eng = engs[k]
		}
		m.eng = engs[0]
		// Detectors and alert rules follow the new config, as the
		// gateway's do; the scenario's own alert rules stay.
		m.configure(append(gatewayRules(gc), m.s.Gateway.AlertRules...), gc.Detectors, cfg.Routes)
		m.scheduleTick()
		// The gateway checks every prefill target again on a reload.
		m.checkPrefill(m.s)
	case StepSinkDown:
		m.sinksDown[st.SinkDown] = true
	case StepStoreDown, StepStoreSlow:
		m.storeStep(st, true)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (m *sim) stepEnd(i int) {
	st := &m.s.Timeline[i]
	now := m.nowT
	switch st.Kind() {
	case StepFault, StepKill:
		refs := m.faultIDs[i]
		if refs == nil {
			return
		}
		delete(m.faultIDs, i)
		if st.Kind() == StepKill {
			m.killed[st.Kill] = false
		}
		for _, f := range refs {
			if f.prov != nil {
				f.prov.RemoveFault(f.id)
			}
			m.Emit(events.Event{Time: now, Kind: events.FaultEnd, Name: st.Name, Target: f.target})
		}
	case StepSinkDown:
		m.sinksDown[st.SinkDown] = false
	case StepStoreDown, StepStoreSlow:
		m.storeStep(st, false)
	}
}

func (m *sim) evaluateAlerts() {
	now := m.nowT
	for _, e := range m.alerts.Evaluate(now) {
		m.Emit(e)
		for _, k := range m.s.Alerts.Sinks {
			m.Emit(events.Event{Time: now, Kind: events.AlertDelivered, Name: e.Name, Sink: k.Name, OK: !m.sinksDown[k.Name],
				Severity: e.Severity})
		}
	}
}
