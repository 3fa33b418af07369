package score

import (
	"slices"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/mockprovider"
)

// Kinds counted without a map in the event summary.
var summaryKinds = [...]events.Kind{
	events.RequestStart, events.RequestEnd, events.AttemptStart, events.AttemptEnd,
	events.BreakerTransition, events.HealthChange, events.ProbeResult, events.DetectorSignal,
	events.AlertFired, events.AlertResolved, events.AlertDelivered, events.BudgetExhausted,
	events.FaultStart, events.FaultEnd,
}

const (
	kRequestStart = iota
	kRequestEnd
	kAttemptStart
	kAttemptEnd
	kBreaker
	kHealth
	kProbe
	kDetector
	kAlertFired
	kAlertResolved
	kAlertDelivered
	kBudget
	kFaultStart
	kFaultEnd
)

// feed scores a log while it is written: the simulator hands it each event
// it records, so the log is not read back to be scored. The result is
// Score's on the same input.
type Feed struct {
	s *scorer
	r *logReader
}

// NewFeed starts scoring a log of about est requests. in has what is known
// before the run: Start, SLO, Primary, PrimaryTarget and Prices.
func NewFeed(in Input, est int) *Feed {
	s := &scorer{in: in, slo: in.SLO.WithDefaults(), start: in.Start}
	s.setStart()
	return &Feed{s: s, r: s.newReader(est)}
}

// event reads the next event of the log.
func (f *Feed) Event(e *events.Event) { f.r.event(e) }

// Score scores the run once it is over; in is the complete input, its log
// the one fed.
func (f *Feed) Score(in Input) *Result {
	s := f.s
	s.in, s.end = in, in.End
	s.setEnd()
	s.score(f.r.finish())
	return s.result()
}

// logReader makes the one pass over the event log, an event at a time:
// Score feeds it the log, the simulator feeds it each event as it is
// recorded (the log is then never read back to score it).
//
// It indexes every request id, and finish returns the latest record of
// each: a request.end or an attempt may refer to a request ended or started
// later, and an id may be used twice.
type logReader struct {
	s *scorer
	n int // events read

	byID    map[string]int32 // request id -> its latest request
	openAtt map[string]int32 // request id -> the attempt in flight
	attIDs  []string         // request id by attempt

	probeStreak map[string]int
	kinds       [len(summaryKinds)]int
	other       strIndex // kinds not in summaryKinds
	otherN      []int
	zeroOff     int64   // where a missing end time falls
	prices      []Price // by names index, for attempts without a cost
	priced      []int8  // 0 unknown, 1 priced, -1 no price

	// The target of the last event, as consecutive events are often
	// about the same one.
	lastTarget string
	lastTgt    int32
}

// newReader starts a pass over a log of about est requests.
func (s *scorer) newReader(est int) *logReader {
	s.reqs = make([]reqRec, 0, est)
	s.ids = make([]string, 0, est)
	s.atts = make([]attRec, 0, est)
	return &logReader{s: s, probeStreak: map[string]int{}, zeroOff: s.off(time.Time{}),
		byID: make(map[string]int32, est), openAtt: make(map[string]int32, 64), attIDs: make([]string, 0, est)}
}

// read makes the one pass over the scorer's input log.
func (s *scorer) read() map[string]int32 {
	// About four to six events per request: size the tables so they are
	// not copied as they grow.
	r := s.newReader(s.in.len()/4 + 16)
	for _, ev := range s.in.all() {
		r.event(&ev)
	}
	return r.finish()
}

func (r *logReader) price(tgt int32, target string) (Price, bool) {
	for int(tgt) >= len(r.priced) {
		r.priced = append(r.priced, 0)
		r.prices = append(r.prices, Price{})
	}
	if r.priced[tgt] == 0 {
		p, ok := r.s.in.Prices[target]
		r.prices[tgt], r.priced[tgt] = p, 1
		if !ok {
			r.priced[tgt] = -1
		}
	}
	return r.prices[tgt], r.priced[tgt] > 0
}

func (r *logReader) newReq(id, route string, start time.Time) int32 {
	s := r.s
	i := int32(len(s.reqs))
	s.ids = append(s.ids, id)
	s.reqs = append(s.reqs, reqRec{start: s.off(start), served: -1, first: -1, tgt: -1,
		rt: s.routes.add(route)})
	r.byID[id] = i
	return i
}

func (r *logReader) lookup(id string) int32 {
	if i, ok := r.byID[id]; ok {
		return i
	}
	return -1
}

func (r *logReader) newAtt(a attRec, id string) int32 {
	s := r.s
	i := int32(len(s.atts))
	s.atts = append(s.atts, a)
	r.attIDs = append(r.attIDs, id)
	return i
}

// event reads the next event of the log.
func (r *logReader) event(e *events.Event) {
	r.n++
	s := r.s
	tgt := int32(0)
	if e.Target != "" && e.Kind != events.FaultStart && e.Kind != events.FaultEnd {
		if e.Target == r.lastTarget {
			tgt = r.lastTgt
		} else {
			tgt = s.target(e.Target)
			r.lastTarget, r.lastTgt = e.Target, tgt
		}
	}
	switch e.Kind {
	case events.RequestStart:
		r.kinds[kRequestStart]++
		s.reqs[r.newReq(e.RequestID, e.Route, e.Time)].stream = e.Stream
		return
	case events.RequestEnd:
		r.kinds[kRequestEnd]++
		ri := r.lookup(e.RequestID)
		if ri < 0 {
			ri = r.newReq(e.RequestID, e.Route, e.Time.Add(-e.Duration))
		}
		q := &s.reqs[ri]
		q.ended, q.end, q.outcome, q.target = true, s.off(e.Time), outcomeOf(e.Outcome), tgt
		q.stream = q.stream || e.Stream
		q.ttft, q.dur = e.TTFT, e.Duration
		if q.dur == 0 {
			q.dur = time.Duration(q.end - q.start)
		}
		return
	case events.AttemptStart:
		r.kinds[kAttemptStart]++
		a := attRec{tgt: tgt, start: s.off(e.Time), end: r.zeroOff, class: -1, ri: r.lookup(e.RequestID)}
		r.openAtt[e.RequestID] = r.newAtt(a, e.RequestID) // a request has one attempt in flight at a time
		return
	case events.AttemptEnd:
		r.kinds[kAttemptEnd]++
		ai, ok := r.openAtt[e.RequestID]
		if ok && s.atts[ai].tgt == tgt {
			delete(r.openAtt, e.RequestID)
		} else {
			ai = r.newAtt(attRec{tgt: tgt, start: s.off(e.Time.Add(-e.Duration)), ri: r.lookup(e.RequestID)}, e.RequestID)
		}
		a := &s.atts[ai]
		a.ended, a.end, a.class, a.ttft, a.stream = true, s.off(e.Time), s.classes.add(e.Class), e.TTFT, e.Stream
		a.ok = e.Class == "ok"
		a.in, a.out, a.cache, a.cost = e.InputTokens, e.OutputTokens, e.CachedTokens, e.Cost
		if a.cost == 0 {
			if p, ok := r.price(tgt, e.Target); ok {
				a.cost = p.Cost(a.in, a.cache, a.out)
			} else if a.in+a.out > 0 && (len(s.unpriced) == 0 || s.unpriced[len(s.unpriced)-1] != e.Target) {
				s.unpriced = append(s.unpriced, e.Target)
			}
		}
		return
	case events.FaultStart:
		r.kinds[kFaultStart]++
		// Open until its fault.end; finish ends the open ones with the run.
		s.faults = append(s.faults, faultWin{step: e.Name, target: e.Target, kind: e.Reason, start: e.Time, open: true})
	case events.FaultEnd:
		r.kinds[kFaultEnd]++
		for j := len(s.faults) - 1; j >= 0; j-- {
			f := &s.faults[j]
			if f.step == e.Name && f.target == e.Target && f.open && !f.start.After(e.Time) {
				f.end, f.open = e.Time, false
				break
			}
		}
	case events.BreakerTransition, events.HealthChange:
		if e.Kind == events.BreakerTransition {
			r.kinds[kBreaker]++
		} else {
			r.kinds[kHealth]++
		}
		s.trans = append(s.trans, transition{t: e.Time, target: e.Target, from: normState(e.From), to: normState(e.To), kind: e.Kind, reason: e.Reason})
	case events.DetectorSignal:
		r.kinds[kDetector]++
		s.signals = append(s.signals, transition{t: e.Time, target: e.Target, to: "detector:" + e.Name, kind: e.Kind, reason: e.Name})
	case events.ProbeResult:
		r.kinds[kProbe]++
		if e.Class == ProbeRateLimited {
			break // not a failure, not a success
		}
		if e.OK {
			r.probeStreak[e.Target] = 0
		} else {
			r.probeStreak[e.Target]++
			if r.probeStreak[e.Target] == probeThreshold {
				s.signals = append(s.signals, transition{t: e.Time, target: e.Target, from: e.Class, to: "probe", kind: e.Kind})
			}
		}
	case events.BudgetExhausted:
		r.kinds[kBudget]++
		s.budget++
	case events.AlertFired, events.AlertResolved, events.AlertDelivered:
		switch e.Kind {
		case events.AlertFired:
			r.kinds[kAlertFired]++
		case events.AlertResolved:
			r.kinds[kAlertResolved]++
		default:
			r.kinds[kAlertDelivered]++
		}
		s.alertEv = append(s.alertEv, *e)
	default:
		k := r.other.add(string(e.Kind))
		if int(k) == len(r.otherN) {
			r.otherN = append(r.otherN, 0)
		}
		r.otherN[k]++
	}
	// Not a request or attempt event: part of the timeline.
	if len(s.timeline) < MaxTimeline {
		s.timeline = append(s.timeline, *e)
	}
}

// finish ends the pass once the whole log is read and the run's end is
// known (s.end), reads the journals and returns each request id's latest
// record.
func (r *logReader) finish() map[string]int32 {
	s, in := r.s, r.s.in
	byID := r.byID
	s.summary = EventSummary{Total: r.n, ByKind: map[string]int{}}
	for k, n := range r.kinds {
		if n > 0 {
			s.summary.ByKind[string(summaryKinds[k])] = n
		}
	}
	for k, n := range r.otherN {
		s.summary.ByKind[r.other.names[k]] = n
	}

	s.blackBox = in.BlackBox || (len(s.atts) == 0 && len(in.Journal) > 0)
	if s.blackBox && len(s.atts) == 0 && len(in.Journal) > 0 {
		// Attempts as the mocks saw them.
		for i := range in.Journal {
			j := &in.Journal[i]
			t := s.off(j.Time)
			a := attRec{tgt: s.target(j.Target), start: t, end: t, ended: true,
				class: s.classes.add(j.Outcome), ok: j.Outcome == "ok", out: j.OutputTokens, ri: r.lookup(j.RequestID)}
			if billed(j) {
				a.in, a.cache = j.InputTokens, j.CachedTokens
				if p, ok := r.price(a.tgt, j.Target); ok {
					a.cost = p.Cost(a.in, a.cache, a.out)
				} else if len(s.unpriced) == 0 || s.unpriced[len(s.unpriced)-1] != j.Target {
					s.unpriced = append(s.unpriced, j.Target)
				}
			}
			if a.ri >= 0 {
				s.linked++
			}
			s.atts = append(s.atts, a)
		}
	}
	for _, t := range in.JournalTargets {
		s.target(t)
	}
	for i := range in.Journal {
		j := &in.Journal[i]
		if i == 0 || j.Target != in.Journal[i-1].Target {
			s.target(j.Target)
		}
		if j.Corrupted {
			s.corrupted = true
		}
	}
	for i := range s.faults {
		f := &s.faults[i]
		if f.open {
			f.end = s.end
		}
		f.from, f.to = s.off(f.start), s.off(f.end)
		s.target(f.target)
	}
	// Transitions and signals in time order (a log merged from sources
	// may not be).
	byTime := func(a, b transition) int { return a.t.Compare(b.t) }
	slices.SortStableFunc(s.trans, byTime)
	slices.SortStableFunc(s.signals, byTime)
	// With an id on more than one record, attempts belong to the latest;
	// an attempt read before its request's first event belongs to it too.
	dup := len(byID) != len(s.reqs)
	for i := range r.attIDs {
		if a := &s.atts[i]; dup || a.ri < 0 {
			a.ri = r.lookup(r.attIDs[i])
		}
	}
	return byID
}

// badServed marks the requests whose last journal entry is corrupted while
// the request succeeded. Only requests with a corrupted entry need looking
// at.
func (s *scorer) badServed(byID map[string]int32) {
	if !s.corrupted {
		return
	}
	in := s.in
	last := map[string]*JournalEntry{}
	for i := range in.Journal {
		if in.Journal[i].Corrupted {
			last[in.Journal[i].RequestID] = nil
		}
	}
	for i := range in.Journal {
		j := &in.Journal[i]
		if p, ok := last[j.RequestID]; ok && (p == nil || !j.Time.Before(p.Time)) {
			last[j.RequestID] = j
		}
	}
	judge := func(ri int32, j *JournalEntry) bool {
		r := &s.reqs[ri]
		if !r.ended || r.outcome == outFailed {
			return false
		}
		if j.Corrupted && (r.target == 0 || j.Target == s.names.names[r.target]) {
			r.bad = true
		}
		return r.bad
	}
	bad := map[string]bool{}
	for id, j := range last {
		if ri, ok := byID[id]; ok && judge(ri, j) {
			bad[id] = true
		}
	}
	if len(byID) != len(s.reqs) && len(bad) > 0 {
		// An id on several records: every record of a bad id counts.
		for i := range s.reqs {
			if bad[s.ids[i]] {
				s.reqs[i].bad = true
			}
		}
	}
}

// wrongAnswers marks the served requests whose answer failed the client's
// checks (an EvalRecord that did not pass) as bad, as a corrupted journal
// entry does: a wrong answer served as success, though no mock corrupted it.
func (s *scorer) wrongAnswers(byID map[string]int32) {
	for i := range s.in.Evals {
		e := &s.in.Evals[i]
		if e.Pass || e.RequestID == "" {
			continue
		}
		ri, ok := byID[e.RequestID]
		if !ok {
			continue
		}
		if r := &s.reqs[ri]; r.ended && r.outcome != outFailed {
			r.bad = true
		}
	}
}

// put counts n at offset t; times before the run's start are not counted.
func (s *scorer) put(bins []int32, t int64, n int32) {
	if t < 0 {
		return
	}
	bins[s.binAt(t)] += n
}

// billed reports whether a journaled attempt is billed: an answer, or one
// that sent tokens before it was cut. An attempt abandoned before its first
// token is not (gateways differ on whether they meter its prompt).
func billed(j *JournalEntry) bool {
	return j.Outcome == string(mockprovider.OutcomeOK) || j.OutputTokens > 0
}

// ProbeRateLimited is the Class of a probe.result event (in either
// engine's log) for a probe the provider refused for rate: not a failure.
const ProbeRateLimited = "rate_limited"
