package scenarios

import (
	"errors"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/evals/probe"
	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// simProbes runs the gateway's active probes (its probes section) in
// virtual time with the same scheduler the gateway uses: each due probe is
// planned by the target's mock, judged by the probe's checks when its answer
// would arrive, reported to the scheduler, emitted as a probe.result event
// and handed to the policy engine (ProbeResult; a breaker trip after
// `failures` consecutive failures).
type simProbes struct {
	sched   *probe.Scheduler
	def     probe.Definition
	timeout time.Duration
	at      int64 // when the next tProbe timer is due (0: none)
	n       int
	flight  []*probeFlight // by timer index
}

type probeFlight struct {
	target string
	plan   *faults.Plan
	prov   provider
	resp   *llm.Response
	err    error
	abort  bool // the probe timed out: the attempt is abandoned
}

// The transport failures a simulated probe meets, worded as net/http
// reports them.
var (
	errProbeReset   = errors.New("connection reset by peer")
	errProbeTimeout = errors.New("probe timed out")
	errProbeClosed  = errors.New("connection closed before the answer ended")
	errProbeRefused = errors.New("connection refused")
)

func newSimProbes(s *Scenario, seed uint64) *simProbes {
	pc := s.env.probes
	if !pc.Enabled {
		return nil
	}
	sp := &simProbes{sched: probe.NewScheduler(pc.Config, rand.New(rand.NewPCG(seed, seedFor(seed, "probes")))), def: s.env.probeDef}
	sp.timeout = sp.sched.Config().Timeout.D()
	var keys []string
	seen := map[string]bool{}
	for _, r := range s.env.policy.Routes {
		for i := range r.Targets {
			if k := r.Targets[i].Key(); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys) // the jitter draws follow a fixed order, as in the gateway
	for _, k := range keys {
		sp.sched.Add(Epoch, k)
	}
	return sp
}

// scheduleProbe makes sure a tProbe timer is due when the scheduler next
// has a probe to send.
func (m *sim) scheduleProbe() {
	sp := m.probes
	if sp == nil {
		return
	}
	next, ok := sp.sched.Next()
	if !ok {
		return
	}
	at := max(int64(next.Sub(Epoch)), m.now)
	if sp.at > m.now && sp.at <= at {
		return
	}
	sp.at = at
	m.schedule(at, tProbe, 0, nil)
}

// probeTarget returns the first configuration of target in the routes.
func (m *sim) probeTarget(key string) *policy.Target {
	cfg := m.eng.Config()
	for i := range cfg.Routes {
		for j := range cfg.Routes[i].Targets {
			if t := &cfg.Routes[i].Targets[j]; m.key(t) == key {
				return t
			}
		}
	}
	return nil
}

// sendProbes sends the probes due now.
func (m *sim) sendProbes() {
	sp := m.probes
	now := m.nowT
	for _, key := range sp.sched.Due(now) {
		sp.n++
		f := &probeFlight{target: key}
		end := m.now + int64(time.Millisecond)
		prov, _, _ := strings.Cut(key, ":")
		t := m.probeTarget(key)
		p := m.provs[prov]
		switch {
		case t == nil || p == nil || m.killed[prov]:
			f.err = errProbeRefused
		default:
			req := sp.def.RequestFor(t.Model)
			req.Stream = false
			if err := t.Apply(req); err != nil {
				f.err = err
				break
			}
			plan := new(faults.Plan)
			p.PlanInto(plan, now, req, "probe-"+strconv.Itoa(sp.n))
			f.plan, f.prov = plan, p
			var d time.Duration
			d, f.resp, f.err = probeAnswer(plan)
			if sp.timeout > 0 && d > sp.timeout {
				d, f.resp, f.err, f.abort = sp.timeout, nil, errProbeTimeout, true
			}
			end = m.now + int64(d)
		}
		sp.flight = append(sp.flight, f)
		m.schedule(end, tProbeDone, int32(len(sp.flight)-1), nil)
	}
}

// probeAnswer is what the gateway's probe client gets from a non-streamed
// plan, and after how long.
func probeAnswer(p *faults.Plan) (time.Duration, *llm.Response, error) {
	switch {
	case p.Reset:
		return p.HeaderDelay, nil, errProbeReset
	case p.HoldFor > 0:
		return p.HoldFor, nil, errProbeClosed
	case p.Status < 200 || p.Status > 299:
		if p.Err != nil {
			e := *p.Err
			return p.HeaderDelay, nil, &e
		}
		return p.HeaderDelay, nil, &llm.Error{Status: p.Status, Type: llm.TypeForStatus(p.Status)}
	}
	d := max(p.End(), p.HeaderDelay)
	if p.Cuts() || p.StallCloses() || p.Malformed() {
		return d, nil, errProbeClosed
	}
	return d, &p.Response, nil
}

// probeDone judges a probe whose answer arrived (or timed out) now.
func (m *sim) probeDone(i int) {
	sp := m.probes
	f := sp.flight[i]
	sp.flight[i] = nil
	now := m.nowT
	if f.plan != nil {
		if f.abort {
			f.prov.Abandon(now, f.plan, 0)
		} else {
			f.prov.Finish(now, f.plan)
		}
	}
	o := sp.def.Evaluate(f.resp, f.err)
	act := sp.sched.Report(now, f.target, o)
	e := probe.Event(now, f.target, o)
	e.Name = sp.def.Name
	if o.RateLimited {
		e.Class = score.ProbeRateLimited
	}
	m.Emit(e)
	if !o.RateLimited {
		// A success only resets the failure count; it never closes a breaker.
		_ = m.eng.ProbeResult(now, f.target, o.OK)
	}
	if act.Kind == probe.ActionOpenBreaker {
		_ = m.eng.Signal(now, f.target, "probe_failures", policy.Trip)
	}
	if m.s.env.probes.Continuation {
		m.probePrefill(now, f.target)
	}
}

// checkPrefill models the gateway's continuation probe
// (probes.continuation): every target that declares prefill is sent
// lifecycle.ProbeRequest by its mock, and the verdict (lifecycle.JudgeProbe)
// goes to every replica's policy engine and a prefill.verdict event, at
// start (the gateway's prober checks then too; the schedule is modelled
// here, not shared). A probe that gets no answer gives no verdict
// (lifecycle.ProbeVerdict).
func (m *sim) checkPrefill(s *Scenario) {
	if !s.env.probes.Continuation {
		return
	}
	now := m.nowT
	var keys []string
	seen := map[string]bool{}
	for _, r := range m.eng.Config().Routes {
		for i := range r.Targets {
			if t := &r.Targets[i]; t.Capabilities.Prefill && !seen[m.key(t)] {
				seen[m.key(t)] = true
				keys = append(keys, m.key(t))
			}
		}
	}
	sort.Strings(keys)
	for _, key := range keys {
		m.probePrefill(now, key)
	}
}

// probePrefill sends the continuation probe to target (at start, and after
// each active probe of a target that declares prefill: the gateway
// prober's schedule, modelled here) and hands over the verdict.
func (m *sim) probePrefill(now time.Time, key string) {
	prov, _, _ := strings.Cut(key, ":")
	t, p := m.probeTarget(key), m.provs[prov]
	if t == nil || !t.Capabilities.Prefill || p == nil || m.killed[prov] {
		return
	}
	req := lifecycle.ProbeRequest(t.Model)
	if err := t.Apply(req); err != nil {
		return
	}
	m.pfProbes++
	plan := new(faults.Plan)
	p.PlanInto(plan, now, req, "prefill-probe-"+strconv.Itoa(m.pfProbes))
	_, resp, err := probeAnswer(plan)
	p.Finish(now, plan)
	ok, reason, has := lifecycle.ProbeVerdict(resp, err)
	if !has {
		return // no answer: no verdict
	}
	_ = m.eng.PrefillVerdict(key, ok)
	for _, rp := range m.reps {
		if rp.eng != m.eng {
			_ = rp.eng.PrefillVerdict(key, ok)
		}
	}
	m.Emit(events.Event{Time: now, Kind: events.PrefillVerdict, Target: key, Name: "continuation", OK: ok, Reason: reason})
}
