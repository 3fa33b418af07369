package scenarios

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// Epoch is the virtual start time of every simulated run, so results do not
// depend on the wall clock.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// provider is what the simulator needs of a mock provider's behaviour model.
type provider interface {
	// PlanInto plans the attempt of request requestID into p, reusing its
	// buffers (see mockprovider.Planner).
	PlanInto(p *faults.Plan, now time.Time, req *llm.Request, requestID string)
	AddFault(now time.Time, f faults.Spec) (string, error)
	RemoveFault(id string)
	Finish(now time.Time, p *faults.Plan)
	// Abandon ends an attempt the gateway gave up on (a deadline or the
	// watchdog fired, or the client left) after sent tokens.
	Abandon(now time.Time, p *faults.Plan, sent int)
	// FillerCorpus is the text every planned filler answer is cut from.
	FillerCorpus() string
	// AppendJournal appends the journal to dst; JournalLen is its length.
	AppendJournal(dst []score.JournalEntry) []score.JournalEntry
	JournalLen() int
	// DigestJournal adds the journal to a digest; AppendJournalOf appends
	// the entries of the requests in ids.
	DigestJournal(d *journalDigest)
	AppendJournalOf(dst []score.JournalEntry, ids map[string]bool) []score.JournalEntry
}

// timer kinds
const (
	tArrival uint8 = iota + 1
	tNext
	tObserve
	tCancel
	tTick
	tStepStart
	tStepEnd
	tAlerts
	tStop
	tProbe
	tProbeDone
	tFleet // a step of a replica's store syncer (idx: its simStore item)
	tProm  // a Prometheus scrape or rule evaluation (promRun)
)

type simReq struct {
	slot     int32 // in sim.reqTab
	id       string
	n        int32 // request number (its id is req-n)
	traffic  int
	prompt   int
	req      llm.Request
	lc       lifecycle.Request
	eng      *policy.Engine
	deadline int64
	pending  policy.Outcome // the outcome to observe at the tObserve timer
	// gen numbers the request's attempts: a tObserve timer carries the
	// number of its attempt, and one whose attempt was cut short (the
	// client left, the provider was killed) is void.
	gen      int32
	sentAt   int64        // when the attempt in flight was sent
	plan     *faults.Plan // &planv while an attempt is in flight, else nil
	planProv provider
	// planv is the memory of the request record's plans: each attempt is
	// planned into it, and a reused record keeps its buffers.
	planv faults.Plan
	// killed: the attempt in flight was cut by a kill of its provider.
	killed bool
	// resp is the complete answer when pending is OK (served) or
	// InvalidOutput (rejected); ob is its observation when send already
	// made it (haveOb).
	resp   *llm.Response
	ob     evals.Observation
	haveOb bool
	// structured: the request needs structured output (lifecycle.Structured).
	structured bool
	tgt        *simTarget // the target of the attempt in flight
	// at is the attempt in flight (lc.Attempt): the answer that reached
	// the client is lc's.
	at *lifecycle.Attempt
	// rep is the replica that serves the request, nil for a gateway alone.
	rep *simReplica
	// filler: the answer is a window of its provider's filler corpus, which
	// contains no refusal phrase (the scan is skipped).
	filler bool
	// timers counts the timers that refer to the request; a done request
	// with none left is reused for a later arrival.
	timers int32
	// For stop_when's good-request rate: when the request arrived, when
	// its first token (or answer) reached the client, and whether the
	// answer served was corrupted by a fault.
	start, firstTok int64
	corrupted       bool
	promptEst       int // the gateway's estimate of its input tokens
	// malformed is the token event of the attempt in flight that was an
	// unparseable event the stream skipped, -1 when none; try is the
	// attempt's number.
	malformed int
	try       int
}

type sim struct {
	s          *Scenario
	ctx        context.Context
	now        int64
	nowT       time.Time // Epoch + now
	q          timerHeap
	cancels    []timerFIFO // per traffic class: client deadlines
	arrivals   []timer     // per traffic class: the next arrival (kind 0: none)
	free       []*simReq   // done requests no timer refers to
	reqTab     []*simReq   // every request record, by slot (see timer.req)
	ids        []string    // the next request IDs from idNext on; see requestID
	doneBits   []uint64    // by request number: done
	idNext     int
	seq        uint64
	rnd        *rand.Rand
	eng        *policy.Engine      // replica 1's (the gateway's, alone)
	pfProbes   int                 // continuation probes sent (their ids)
	reps       []*simReplica       // the gateway's replicas
	store      *simStore           // the replicas' shared store; nil with state: memory
	provs      map[string]provider // provider name
	killed     map[string]bool
	steps      *stepper // the timeline, interpreted on the simulator
	log        events.Packed
	score      *score.Feed // scores the log as it is recorded
	alerts     *alerts.Evaluator
	alertEvery time.Duration
	det        *evals.Detectors // nil when the config disables them
	detAction  policy.Action    // "" for action none
	refusals   []string
	sinksDown  map[string]bool
	served     [][]bool    // per traffic class and prompt: answered before (what a response cache would hold)
	req        llm.Request // scratch request of the attempt being sent
	nreq       int
	attempts   int // sent (the log has an attempt.start each)
	prompts    [][]string
	msgs       [][][]llm.Message // per traffic and prompt, built on first use; see messages
	aborted    string
	err        error      // a step that could not be carried out; the run stops
	stopWin    stopWindow // per-second user results for stop_when
	prom       *promRun   // alerts.prometheus_rules, stop_when.promql; nil without
	slo        score.SLO  // the scenario's, with defaults: stop_when judges by it
	// routes are the routes of the gateway config in effect, by name;
	// alertRules and detCfg its alert rules and detector settings.
	routes     map[string]*policy.Route
	alertRules []alerts.Rule
	detCfg     *gateway.DetectorsConfig
	end        int64
	tgts       map[*policy.Target]*simTarget
	tgtList    []*simTarget // tgts in the order they were first used
	tickAt     int64        // when the next Tick is scheduled (0: none)
	probes     *simProbes   // nil unless the gateway config enables probes
}

// simTarget is what the simulator keeps of a policy target: the policy's
// targets live as long as its engine.
type simTarget struct {
	key  string   // t.Key()
	prov provider // nil when no mock serves it
	// refusalFree: the provider's filler corpus contains no refusal phrase
	// (see fillerRefusalFree).
	refusalFree bool
	// evals counts the quality eval verdicts on its served answers.
	evals score.EvalTally
}

// target returns what the simulator keeps of t.
func (m *sim) target(t *policy.Target) *simTarget {
	st, ok := m.tgts[t]
	if !ok {
		st = &simTarget{key: t.Key(), prov: m.provs[t.Provider]}
		st.evals.Target = st.key
		m.tgtList = append(m.tgtList, st)
		if st.prov != nil {
			st.refusalFree = m.fillerRefusalFree(st.prov)
		}
		m.tgts[t] = st
	}
	return st
}

// key returns t.Key().
func (m *sim) key(t *policy.Target) string { return m.target(t).key }

// Emit records an event (events.Sink).
func (m *sim) Emit(e events.Event) {
	e.Seq = uint64(m.log.Len()) + 1
	m.log.Append(&e)
	m.score.Event(&e)
	if m.alerts != nil {
		m.alerts.ObserveEvent(&e)
	}
	if m.prom != nil {
		m.prom.emit(&e)
	}
}

func (m *sim) schedule(at int64, kind uint8, idx int32, r *simReq) {
	var slot int32
	if r != nil {
		r.timers++
		slot = r.slot + 1
	}
	m.seq++
	m.q.push(timer{at: at, seq: m.seq, kind: kind, idx: idx, req: slot})
}

// scheduleCancel schedules a request's client deadline. Deadlines of a
// traffic class come in arrival order, so they queue instead of entering
// the heap; the sequence number orders them with the heap's timers exactly
// as if they were in it.
//
// A deadline does not hold its request: it names it by number too, and a
// request found done by number is not touched (it may already serve a
// later arrival).
func (m *sim) scheduleCancel(r *simReq) {
	m.seq++
	m.cancels[r.traffic].push(timer{at: r.deadline, seq: m.seq, kind: tCancel, idx: r.n, req: r.slot + 1})
}

// setDone marks r done (by its number: a deadline checks it without
// touching the record).
func (m *sim) setDone(r *simReq) {
	w := int(r.n) / 64
	for len(m.doneBits) <= w {
		m.doneBits = append(m.doneBits, 0)
	}
	m.doneBits[w] |= 1 << (uint(r.n) % 64)
}

// isDone reports whether request number n is done.
func (m *sim) isDone(n int32) bool {
	w := int(n) / 64
	return w < len(m.doneBits) && m.doneBits[w]&(1<<(uint(n)%64)) != 0
}

// pop removes the next timer by (at, seq) from the heap, the deadline
// queues and the next arrivals; ok is false when none is left.
func (m *sim) pop() (timer, bool) {
	var best *timer
	from := -1 // the heap; else a deadline queue, or len(cancels) + an arrival
	if len(m.q) > 0 {
		best = &m.q[0]
	}
	for i := range m.cancels {
		if c := m.cancels[i].peek(); c != nil && (best == nil || c.before(best)) {
			best, from = c, i
		}
		if a := &m.arrivals[i]; a.kind != 0 && (best == nil || a.before(best)) {
			best, from = a, len(m.cancels)+i
		}
	}
	switch {
	case best == nil:
		return timer{}, false
	case from >= len(m.cancels):
		t := *best
		best.kind = 0
		return t, true
	case from >= 0:
		return m.cancels[from].pop(), true
	}
	return m.q.pop(), true
}

// reqOf returns the request a timer refers to, nil for none.
func (m *sim) reqOf(t *timer) *simReq {
	if t.req == 0 {
		return nil
	}
	return m.reqTab[t.req-1]
}

func (m *sim) t(ns int64) time.Time { return Epoch.Add(time.Duration(ns)) }

func seedFor(seed uint64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return seed ^ h.Sum64()
}

func newSim(ctx context.Context, s *Scenario, seed uint64) (*sim, error) {
	m := &sim{s: s, ctx: ctx, nowT: Epoch, rnd: rand.New(rand.NewPCG(seed, seedFor(seed, "traffic"))),
		provs: map[string]provider{}, killed: map[string]bool{},
		sinksDown: map[string]bool{}, end: int64(s.Duration), tgts: map[*policy.Target]*simTarget{}}
	m.steps = newStepper(s, m)
	if err := m.newReplicas(seed); err != nil {
		return nil, fmt.Errorf("%w: gateway policy: %w", ErrInvalid, err)
	}
	for _, p := range s.env.providers {
		pv, err := newMockProvider(p.spec, rand.New(rand.NewPCG(seed, seedFor(seed, "provider/"+p.name))))
		if err != nil {
			return nil, fmt.Errorf("%w: provider %s: %w", ErrInvalid, p.name, err)
		}
		m.provs[p.name] = pv
	}
	m.setRoutes(s.env.policy.Routes)
	m.alertEvery = s.env.alertEvery
	if m.alertEvery <= 0 {
		m.alertEvery = 15 * time.Second
	}
	m.probes = newSimProbes(s, seed)
	// The detectors and alert rules, by the rules both engines follow at
	// the start and on a reload (evals.ReloadDetectors, alerts.Reload).
	m.configure(s.env.rules, s.env.detectors, s.env.policy.Routes)
	// Size the scorer's tables for the expected traffic, so they are not
	// copied as they grow (a long game day serves hundreds of thousands).
	est := 1024.0
	for i := range s.Traffic {
		est += s.Traffic[i].maxRate() * s.Duration.D().Seconds()
	}
	m.score = score.NewFeed(s.scoreInput(), int(min(est, 1<<21)))
	m.cancels = make([]timerFIFO, len(s.Traffic))
	m.arrivals = make([]timer, len(s.Traffic))
	m.prompts = make([][]string, len(s.Traffic))
	m.served = make([][]bool, len(s.Traffic))
	m.msgs = make([][][]llm.Message, len(s.Traffic))
	for i, t := range s.Traffic {
		m.prompts[i] = s.prompts[i]
		if len(m.prompts[i]) == 0 {
			m.prompts[i] = syntheticPrompts(t.PromptTokens, 256)
		}
		m.served[i] = make([]bool, len(m.prompts[i]))
	}
	m.prom = newPromRun(s)
	return m, nil
}

// syntheticPrompts builds n distinct prompts of about tokens tokens sharing
// a long prefix (so prompt caches have something to hit).
func syntheticPrompts(tokens, n int) []string {
	words := []string{"incident", "latency", "gateway", "provider", "fallback", "budget", "stream", "token", "window", "breaker"}
	var b strings.Builder
	for i := 0; b.Len() < tokens*4; i++ {
		b.WriteString(words[i%len(words)])
		b.WriteByte(' ')
	}
	prefix := b.String()
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + "question " + strconv.Itoa(i)
	}
	return out
}

func (m *sim) run() {
	m.checkPrefill(m.s)
	for i := range m.s.Traffic {
		m.scheduleArrival(i, 0)
	}
	for i := range m.s.Timeline {
		st := &m.s.Timeline[i]
		m.schedule(int64(st.At), tStepStart, int32(i), nil)
		// Steps without an end (or ending past the run) end with it.
		m.schedule(int64(m.s.stepEnd(st)), tStepEnd, int32(i), nil)
	}
	if m.alerts != nil {
		m.schedule(int64(m.alertEvery), tAlerts, 0, nil)
	}
	m.scheduleTick()
	m.scheduleProbe()
	if m.prom != nil {
		m.schedule(int64(m.prom.due()), tProm, 0, nil)
	}
	if m.s.StopWhen != nil && m.s.StopWhen.PromQL == "" {
		m.slo = m.s.SLO.slo().WithDefaults()
		m.schedule(int64(time.Second), tStop, 0, nil)
	}
	steps := 0
	for {
		tm, ok := m.pop()
		if !ok {
			break
		}
		r := m.reqOf(&tm)
		if tm.at > m.end && tm.kind != tObserve && tm.kind != tNext && tm.kind != tCancel && tm.kind != tProbeDone {
			m.release(r)
			continue
		}
		m.now, m.nowT = tm.at, m.t(tm.at)
		steps++
		if steps&0x3ff == 0 && m.ctx.Err() != nil {
			m.aborted = "canceled"
			m.end = m.now
			break
		}
		switch tm.kind {
		case tArrival:
			m.arrive(int(tm.idx))
		case tNext:
			m.next(r)
		case tObserve:
			if tm.idx == r.gen {
				m.observe(r)
			}
		case tCancel:
			if !m.isDone(tm.idx) {
				m.cancel(r)
			}
			r = nil // not counted in its timers
		case tTick:
			if tm.at == m.tickAt {
				m.tickAt = 0
			}
			for _, rp := range m.reps {
				rp.eng.Tick(m.nowT)
			}
		case tStepStart:
			m.steps.start(int(tm.idx), m.nowT)
		case tStepEnd:
			m.steps.end(int(tm.idx), m.nowT)
		case tAlerts:
			m.evaluateAlerts()
			m.schedule(m.now+int64(m.alertEvery), tAlerts, 0, nil)
		case tProbe:
			if tm.at == m.probes.at {
				m.probes.at = 0
			}
			m.sendProbes()
		case tProbeDone:
			m.probeDone(int(tm.idx))
		case tFleet:
			m.fleetStep(tm.idx)
		case tProm:
			if why := m.prom.tick(m.ctx, time.Duration(m.now)); why != "" {
				m.aborted, m.end = why, m.now
			} else {
				m.schedule(int64(m.prom.due()), tProm, 0, nil)
			}
		case tStop:
			if m.checkStop() {
				m.end = m.now
			} else {
				m.schedule(m.now+int64(time.Second), tStop, 0, nil)
			}
		}
		m.release(r)
		if (m.aborted != "" || m.err != nil) && m.end == m.now {
			break
		}
		if m.now <= m.end {
			m.scheduleTick()
			m.scheduleProbe()
		}
	}
	// A run cut short ends the steps still active.
	m.steps.endActive(m.nowT)
}

// scheduleTick makes sure Engine.Tick runs when the core next has timed
// work. Outcomes can bring that time forward (a breaker opens, a target is
// demoted), so it is checked after every step of the simulation.
func (m *sim) scheduleTick() {
	nt := m.eng.NextTick()
	for _, rp := range m.reps[1:] {
		if t := rp.eng.NextTick(); !t.IsZero() && (nt.IsZero() || t.Before(nt)) {
			nt = t
		}
	}
	if nt.IsZero() {
		return
	}
	at := max(int64(nt.Sub(Epoch)), m.now+int64(time.Millisecond))
	if m.tickAt > m.now && m.tickAt <= at {
		return // an earlier tick is already due
	}
	m.tickAt = at
	m.schedule(at, tTick, 0, nil)
}

func (m *sim) scheduleArrival(i int, from int64) {
	t := &m.s.Traffic[i]
	lmax := t.maxRate()
	if lmax <= 0 {
		return
	}
	at := from
	for {
		if t.Arrival == "uniform" {
			r := t.RateAt(time.Duration(at))
			if r <= 0 {
				// Skip ahead to the next rate change.
				at += int64(time.Second)
				if at >= m.end {
					return
				}
				continue
			}
			at += int64(float64(time.Second) / r)
			break
		}
		at += int64(m.rnd.ExpFloat64() / lmax * float64(time.Second))
		if at >= m.end {
			return
		}
		if m.rnd.Float64()*lmax <= t.RateAt(time.Duration(at)) {
			break
		}
	}
	if at < m.end {
		// As the live engine: no request arrives at the end of the run.
		// A traffic class has one arrival due at a time: it waits in its
		// slot, not in the heap, ordered with the heap's timers as if it
		// were in it.
		m.seq++
		m.arrivals[i] = timer{at: at, seq: m.seq, kind: tArrival, idx: int32(i)}
	}
}

// requestID returns "req-n" for the n-th request. IDs are made in batches
// sharing one string, so a request costs no allocation for its ID.
func (m *sim) requestID(n int) string {
	if len(m.ids) == 0 || m.idNext != n {
		const batch = 4096
		b := make([]byte, 0, batch*(len("req-")+len(strconv.Itoa(n+batch))))
		ends := make([]int, 0, batch)
		for k := n; k < n+batch; k++ {
			b = strconv.AppendInt(append(b, "req-"...), int64(k), 10)
			ends = append(ends, len(b))
		}
		all := string(b)
		m.ids = make([]string, batch)
		start := 0
		for k, e := range ends {
			m.ids[k] = all[start:e]
			start = e
		}
	}
	id := m.ids[0]
	m.ids, m.idNext = m.ids[1:], n+1
	return id
}

// release drops a timer's reference to r, and keeps r for reuse when it
// was the last one of a done request.
func (m *sim) release(r *simReq) {
	if r == nil {
		return
	}
	r.timers--
	if r.timers == 0 && m.isDone(r.n) {
		times, starts := r.planv.TokenTimes, r.planv.ToolStart
		*r = simReq{slot: r.slot}
		r.planv.TokenTimes, r.planv.ToolStart = times, starts
		m.free = append(m.free, r)
	}
}

func (m *sim) arrive(i int) {
	m.scheduleArrival(i, m.now)
	t := &m.s.Traffic[i]
	m.nreq++
	var r *simReq
	if n := len(m.free); n > 0 {
		r, m.free = m.free[n-1], m.free[:n-1]
	} else {
		r = &simReq{slot: int32(len(m.reqTab))}
		m.reqTab = append(m.reqTab, r)
	}
	r.id, r.n, r.traffic, r.deadline = m.requestID(m.nreq), int32(m.nreq), i, m.now+int64(t.ClientTimeout)
	r.start = m.now
	r.prompt = m.rnd.IntN(len(m.prompts[i]))
	stream := m.rnd.Float64() < t.Stream.F()
	r.req = llm.Request{Model: t.Route, Stream: stream, MaxTokens: t.MaxTokens, Temperature: t.Temperature,
		Messages: m.messages(i, r.prompt)}
	structuredAsked := m.rnd.Float64() < t.Structured.F()
	tools := t.Tools > 0 && m.rnd.Float64() < t.Tools.F() // no draw without: seeds keep their runs
	shapeRequest(&r.req, structuredAsked, tools)
	structured := lifecycle.Structured(m.route(t.Route), r.req.ResponseFormat)
	r.structured = structured
	r.eng = m.eng
	r.promptEst = lifecycle.EstimatePromptTokens(&r.req)
	if len(m.reps) > 1 {
		r.rep = m.replicaOf(r.n)
		r.eng = r.rep.eng
	}
	r.lc.Begin(r.eng, m.nowT, policy.Request{ID: r.id, Route: t.Route, PromptTokens: t.PromptTokens,
		Stream: stream, Structured: structured, Tools: len(r.req.Tools) > 0})
	m.scheduleCancel(r)
	m.next(r)
}

// configure sets up the detectors (every replica's), the alert evaluator
// and the routes of a gateway configuration, at the start and on a reload:
// detectors whose settings did not change keep their baselines, and an
// evaluator whose rules did not change its firing state.
func (m *sim) configure(rules []alerts.Rule, dc gateway.DetectorsConfig, routes []policy.Route) {
	m.setRoutes(routes)
	m.alerts = alerts.Reload(m.alerts, m.alertRules, rules, lifecycle.AlertRoutes(routes))
	m.alertRules = rules
	var oldCfg *evals.DetectorConfig
	if m.detCfg != nil {
		oldCfg = &m.detCfg.DetectorConfig
	}
	for _, rp := range m.reps {
		rp.det = evals.ReloadDetectors(rp.det, oldCfg, dc.DetectorConfig, dc.Disable)
	}
	m.det = m.reps[0].det
	m.detCfg = &dc
	m.refusals, m.detAction = nil, dc.Signal()
	if !dc.Disable {
		m.refusals = dc.Refusals
	}
}

// setRoutes takes the routes of the gateway config in effect.
func (m *sim) setRoutes(rs []policy.Route) {
	m.routes = make(map[string]*policy.Route, len(rs))
	for i := range rs {
		m.routes[rs[i].Name] = &rs[i]
	}
}

// route returns the route named name in the config in effect, nil if none.
func (m *sim) route(name string) *policy.Route { return m.routes[name] }

func (m *sim) next(r *simReq) {
	if m.isDone(r.n) {
		return
	}
	now := m.nowT
	d := r.lc.Next(now)
	switch d.Kind {
	case policy.Send:
		m.send(r, &d.Decision)
	case policy.Wait:
		// Never at the same instant: a Wait that is already due must not
		// spin the simulation in place.
		m.schedule(max(int64(d.Until.Sub(Epoch)), m.now+int64(time.Microsecond)), tNext, 0, r)
	case policy.ServeCached:
		o := policy.Outcome{Class: policy.CacheMiss}
		if m.served[r.traffic][r.prompt] {
			o = policy.Outcome{Class: policy.OK}
		}
		r.lc.Observe(now, o)
		if o.Class == policy.OK {
			m.setDone(r)
			m.userResult(r, true)
			return
		}
		m.next(r)
	case policy.Fail:
		m.setDone(r)
		m.userResult(r, false)
	case policy.Done:
		m.setDone(r)
		m.userResult(r, true)
	}
}

// send executes one attempt against the behaviour model and schedules its
// outcome at the virtual time the gateway would observe it.
func (m *sim) send(r *simReq, d *policy.Decision) {
	m.attempts++
	tgt := d.Target
	st := m.target(tgt)
	p := st.prov
	start := m.now
	r.tgt = st
	r.gen++
	r.sentAt, r.killed, r.malformed, r.try = start, false, -1, d.Try
	a := r.lc.Attempt(d, st.key, &r.req)
	r.at = a
	if p == nil || (len(m.killed) > 0 && m.killed[tgt.Provider]) {
		// The process is gone: the connection is refused.
		r.pending = lifecycle.Classify(&lifecycle.Observation{End: lifecycle.Refused})
		r.plan, r.planProv, r.resp = nil, nil, nil
		m.schedule(start+int64(time.Millisecond), tObserve, r.gen, r)
		return
	}
	// The attempt's request is built in a scratch value the sim owns: the
	// provider reads it only during Plan, and a local would escape per attempt.
	req := &m.req
	if bad := a.Prepare(req, &r.req, tgt, m.s.env.continuation.Instruction); bad != nil {
		r.pending = *bad
		r.plan, r.planProv, r.resp = nil, nil, nil
		m.req = llm.Request{}
		m.schedule(start+int64(time.Millisecond), tObserve, r.gen, r)
		return
	}
	plan := &r.planv
	p.PlanInto(plan, m.t(start), req, r.id)
	r.plan, r.planProv, r.resp, r.haveOb = plan, p, nil, false
	r.filler = plan.Filler != "" && plan.Response.Content == plan.Filler && len(plan.Response.ToolCalls) == 0 && st.refusalFree
	if req.Stream && plan.MalformedAt >= 0 {
		set := m.eng.Settings()
		if skip, _ := a.Malformed(set.MalformedLimit()); skip {
			// An unparseable event in a stream that goes on is skipped (a
			// plan has at most one) and reported (stream.malformed) when
			// the attempt ends.
			r.malformed = plan.MalformedAt
			plan.MalformedAt = -1
		}
	}
	end, obs := lifecycle.Play(plan, d, m.t(start), req.Stream)
	obs.PromptTokens = r.promptEst // lifecycle.EstimatePromptTokens: metered when no usage came
	if obs.End == lifecycle.Answered && obs.Status == 200 && !req.Stream && r.structured {
		// A non-streamed structured answer is validated before the client
		// sees it, so invalid JSON fails over.
		r.ob, r.haveOb = evals.Observe(&plan.Response, true, m.refusals), true
		obs.Invalid = a.Rejects(&plan.Response, func(string) bool { return r.ob.JSONValid })
	}
	if req.Stream && a.Continuing() && len(plan.Response.ToolCalls) == 0 {
		end = continueAttempt(a, plan, &obs, m.t(start), end)
	}
	o := lifecycle.Classify(&obs)
	if o.Class == policy.OK || o.Class == policy.InvalidOutput {
		r.resp = &plan.Response
	}
	m.req = llm.Request{}
	r.pending = o
	m.schedule(int64(end.Sub(Epoch)), tObserve, r.gen, r)
}

// messages returns the conversation of prompt k of traffic i, built once:
// requests share it, and nothing that reads a request writes its messages
// (a prefill copies them).
func (m *sim) messages(i, k int) []llm.Message {
	if m.msgs[i] == nil {
		m.msgs[i] = make([][]llm.Message, len(m.prompts[i]))
	}
	msgs := m.msgs[i][k]
	if msgs == nil {
		msgs = []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(m.prompts[i][k])}}}
		m.msgs[i][k] = msgs
	}
	return msgs
}

func (m *sim) observe(r *simReq) {
	now := m.nowT
	o := r.pending
	if r.malformed >= 0 && o.OutputTokens > r.malformed {
		m.Emit(events.Event{Time: now, Kind: events.StreamMalformed, RequestID: r.id, Route: r.req.Model, Target: r.tgt.key,
			Attempt: r.try, Stream: true, Value: 1, Reason: lifecycle.MalformedReason(r.malformed),
			Replica: r.replica()})
	}
	if how, reason, ok := r.at.Judged(); ok {
		m.Emit(events.Event{Time: now, Kind: events.StreamContinuation, RequestID: r.id, Route: r.req.Model, Target: r.tgt.key,
			Attempt: r.try, Stream: true, From: r.at.From(), To: r.tgt.key, Outcome: how, Reason: reason, Replica: r.replica()})
	}
	if r.req.Stream && o.OutputTokens > 0 && o.Class != policy.OK {
		// Tokens reached the client: the stream is committed, and the
		// answer so far is what a continuation must extend; tool-call
		// deltas sent end the request there (no target continues them).
		// A continuation's output went through the attempt when it was
		// sent; any other's goes now.
		r.lc.Commit(r.plan != nil && len(r.plan.Response.ToolCalls) > 0)
		if !r.at.Continuing() && r.plan != nil {
			for _, c := range r.plan.Chunks[:min(o.OutputTokens, len(r.plan.Chunks))] {
				r.at.Text(c)
			}
		}
	}
	corrupted := r.plan != nil && r.plan.Corrupted
	if r.firstTok == 0 && o.TTFT > 0 && (o.Class == policy.OK || (r.req.Stream && o.OutputTokens > 0)) {
		r.firstTok = r.sentAt + int64(o.TTFT)
	}
	if o.Class == policy.OK {
		r.corrupted = corrupted
	}
	if r.plan != nil {
		switch {
		case r.killed:
			r.planProv.Abandon(now, r.plan, o.OutputTokens)
		case o.Class == policy.TimeoutTTFT, o.Class == policy.TimeoutTotal, o.Class == policy.Stall, o.Class == policy.TokenRateFloor:
			r.planProv.Abandon(now, r.plan, o.OutputTokens)
		default:
			r.planProv.Finish(now, r.plan)
		}
		r.plan = nil
	}
	if m.isDone(r.n) {
		return
	}
	if r.resp != nil && (o.Class == policy.OK || !r.req.Stream) {
		// Every complete answer is evidence for the detectors, served or
		// rejected as invalid output (see the evals package); a stream
		// that diverged from what the client had is not an answer, and
		// the gateway does not show it to them either.
		m.complete(r, now, o.Class == policy.OK, corrupted)
	}
	// Nothing reads the plan any more (r.resp was its Response): the next
	// attempt may plan into its memory.
	r.resp = nil
	r.lc.Observe(now, o)
	m.next(r)
}

func (m *sim) cancel(r *simReq) {
	if m.isDone(r.n) {
		return
	}
	m.setDone(r)
	now := m.nowT
	if r.plan != nil {
		r.planProv.Abandon(now, r.plan, 0)
		r.plan = nil
	}
	// The client left (lifecycle.Request.Cancel, which the gateway calls
	// too): the request ends (request.end failed, 499), with an
	// attempt.end client_canceled when one was outstanding; its pending
	// outcome is void.
	r.gen++
	r.lc.Cancel(now)
	m.userResult(r, false)
}

// killStreams cuts the attempts in flight on provider p, whose process
// went away: an attempt whose answer had begun streaming ends cut with the
// tokens sent so far, any other sees its connection broken.
func (m *sim) killStreams(p provider) {
	for _, r := range m.reqTab {
		if r.plan == nil || r.planProv != p || m.isDone(r.n) {
			continue
		}
		plan := r.plan
		elapsed := time.Duration(m.now - r.sentAt)
		obs := lifecycle.Observation{End: lifecycle.Broken}
		if r.req.Stream && !plan.Terminal() && elapsed >= plan.HeaderDelay {
			k := 0
			for k < len(plan.TokenTimes) && plan.TokenTimes[k] <= elapsed {
				k++
			}
			u := plan.Response.Usage
			obs = lifecycle.Observation{End: lifecycle.Cut, Status: 200, Tokens: k, HaveUsage: true,
				Usage: llm.Usage{InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens, OutputTokens: k}}
			if k > 0 {
				obs.TTFT = plan.TokenTimes[0]
			}
		}
		r.pending = lifecycle.Classify(&obs)
		r.resp = nil
		r.killed = true
		r.gen++
		m.schedule(m.now, tObserve, r.gen, r)
	}
}

func (m *sim) userResult(r *simReq, ok bool) {
	if m.s.StopWhen == nil || m.s.StopWhen.PromQL != "" {
		return
	}
	f := score.EndFacts{OK: ok, Stream: r.req.Stream, Corrupted: r.corrupted, Dur: time.Duration(m.now - r.start)}
	if r.firstTok > 0 {
		f.TTFT = time.Duration(r.firstTok - r.start)
	}
	m.stopWin.record(time.Duration(m.now), score.GoodEnd(&m.slo, f))
}

// checkStop reports whether the success rate stayed below the bound over
// the last For seconds, and then sets the abort reason.
func (m *sim) checkStop() bool {
	why, stop := m.stopWin.breached(m.s.StopWhen, time.Duration(m.now), nil)
	if stop {
		m.aborted = why
	}
	return stop
}
