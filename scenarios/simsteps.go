package scenarios

import (
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// The simulator as the environment of the timeline's steps (stepEnv; the
// steps themselves are interpreted by the stepper), and its alert
// evaluation.

func (m *sim) addFault(now time.Time, prov string, f faults.Spec) (string, bool, error) {
	p := m.provs[prov]
	if p == nil {
		return "", false, nil
	}
	id, err := p.AddFault(now, f)
	return id, err == nil, err
}

func (m *sim) removeFault(prov, id string) {
	if p := m.provs[prov]; p != nil {
		p.RemoveFault(id)
	}
}

func (m *sim) kill(prov string) {
	m.killed[prov] = true
	if p := m.provs[prov]; p != nil {
		m.killStreams(p)
	}
}

func (m *sim) restart(prov string) { m.killed[prov] = false }

func (m *sim) sinkDown(name string, down bool) { m.sinksDown[name] = down }

func (m *sim) fail(err error) {
	if m.err == nil {
		m.err = err
	}
	m.end = m.now
}

// reload reloads every replica's policy engine (lifecycle.Reload, the
// gateway's rule: unchanged routes and policy keep the core; a change
// carries breaker and health state into a new one), then the detectors
// and alert rules (configure) and the continuation probes.
func (m *sim) reload(now time.Time, st *Step) error {
	gc, err := loadGatewayConfig(m.s.rel(st.Reload.Config))
	if err != nil {
		return err
	}
	cfg := gc.Config
	engs, kept := make([]*policy.Engine, len(m.reps)), false
	for k, rp := range m.reps {
		engs[k], kept, err = lifecycle.Reload(rp.eng, cfg, m.replicaOptions(rp, m.s.Seed, "policy/"+st.Name))
		if err != nil {
			return err
		}
	}
	for k, rp := range m.reps {
		// Each replica says it reloaded, as each gateway does.
		rp.Emit(events.Event{Time: now, Kind: events.ConfigReload, Name: st.Name, OK: true, Reason: lifecycle.ReloadReason(kept)})
		rp.eng = engs[k]
	}
	m.eng = engs[0]
	// Detectors and alert rules follow the new config; the scenario's own
	// alert rules stay.
	m.configure(append(gatewayRules(gc), m.s.Gateway.AlertRules...), gc.Detectors, cfg.Routes)
	m.scheduleTick()
	// Every prefill target is checked again on a reload.
	m.checkPrefill(m.s)
	return nil
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
