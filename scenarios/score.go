package scenarios

import (
	"cmp"
	"hash/maphash"
	"iter"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/events"
)

// JournalEntry is one upstream attempt as a mock provider saw it: the ground
// truth scoring uses for bad_served and, in black-box runs, for attempts and
// traffic shift.
type JournalEntry struct {
	Time         time.Time `json:"time"`
	RequestID    string    `json:"request_id"`
	Target       string    `json:"target"`  // provider:model
	Fault        string    `json:"fault"`   // the fault applied, "" if none
	Outcome      string    `json:"outcome"` // "ok" or an error class/status
	OutputTokens int       `json:"output_tokens"`
	Corrupted    bool      `json:"corrupted"` // looked like success, was not
}

// EvalRecord is the eval verdict on one response a user received.
type EvalRecord struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id"`
	Target    string    `json:"target"`
	Pass      bool      `json:"pass"`
}

// Price is a target's price per million tokens.
type Price struct {
	InputPerMTok       float64 `json:"input_per_mtok"`
	OutputPerMTok      float64 `json:"output_per_mtok"`
	CachedInputPerMTok float64 `json:"cached_input_per_mtok"`
}

// Cost returns the price of a usage (in includes cached).
func (p Price) Cost(in, cached, out int) float64 {
	unc := max(in-cached, 0)
	return (float64(unc)*p.InputPerMTok + float64(cached)*p.CachedInputPerMTok + float64(out)*p.OutputPerMTok) / 1e6
}

// Input is everything scoring reads: the event log, the mocks' journals and
// the client-side eval records, plus the few facts of the scenario that the
// log does not carry.
type Input struct {
	Events []events.Event
	// Packed, when set, is the log scored instead of Events (the
	// simulator records its millions of events packed).
	Packed  *events.Packed
	Journal []JournalEntry
	Evals   []EvalRecord
	// Start and End bound the run.
	Start, End time.Time
	SLO        SLO
	// Primary maps a route to its primary target (provider:model): the
	// counterfactual prices served requests at its price. PrimaryTarget is
	// used for routes missing from Primary.
	Primary       map[string]string
	PrimaryTarget string
	Prices        map[string]Price
	// BlackBox forces traffic-shift detection from the journal. It is also
	// chosen automatically when the log has no attempt events.
	BlackBox bool
	// evalTally is the simulator's Evals, counted by target: scoring
	// counts no more of them.
	evalTally []evalTally
	// journalTargets, when set, are the targets a journal names in the
	// order they first appear in it, and Journal holds only its entries
	// of requests with a corrupted entry: all scoring reads of a journal
	// when the log has attempt events (the simulator's, whose journals
	// hold an entry per attempt).
	journalTargets []string
}

// evalTally counts the eval verdicts on a target's served responses.
type evalTally struct {
	target    string
	n, passed int
}

// hasEvals reports whether the input has eval verdicts.
func (in *Input) hasEvals() bool { return len(in.Evals) > 0 || len(in.evalTally) > 0 }

// len returns the number of events in the log.
func (in *Input) len() int {
	if in.Packed != nil {
		return in.Packed.Len()
	}
	return len(in.Events)
}

// all returns the events of the log, Packed or Events.
func (in *Input) all() iter.Seq2[int, events.Event] {
	if in.Packed != nil {
		return in.Packed.All()
	}
	return slices.All(in.Events)
}

// Scoring constants (documented in the scoring README).
const (
	bin             = 100 * time.Millisecond // time resolution of windowed scores
	peakWindow      = 10 * time.Second       // retry amplification peak window
	peakMinRequests = 5                      // ignore sparser windows
	probeThreshold  = 3                      // consecutive probe failures = detection
	recoverShare    = 0.9                    // TTR: share back to 90% of baseline
	defaultWindow   = 10 * time.Second
)

// Requests and attempts are kept by value in two slices and refer to each
// other by position; times are offsets in nanoseconds from the run's start
// (t.Sub(start)), so the hot loops compare and bin plain integers.

type reqRec struct {
	start    int64
	end      int64
	ttft     time.Duration
	dur      time.Duration
	cost     float64
	attempts int32
	served   int32 // the attempt that answered (index in atts), -1 for none
	first    int32 // the first attempt whose tokens reached the user, -1 for none
	tgt      int32 // the target as a scored target (index in names), -1 when not one
	target   int32 // the target string's index in names (0: "")
	rt       int32 // route's index in routes
	open     int32 // while reading: the attempt in flight, -1 for none
	outcome  uint8
	ended    bool
	bad      bool // served corrupted
	inFault  bool // started inside a fault window
}

// Request outcomes as reqRec.outcome.
const (
	outOther uint8 = iota
	outServed
	outDegraded
	outFailed
)

func outcomeOf(o string) uint8 {
	switch o {
	case events.OutcomeServed:
		return outServed
	case events.OutcomeDegraded:
		return outDegraded
	case events.OutcomeFailed:
		return outFailed
	}
	return outOther
}

type attRec struct {
	start, end     int64
	ttft           time.Duration
	in, out, cache int
	cost           float64
	ri             int32 // the request (index in reqs), -1 for none
	tgt            int32 // target's index in names
	class          int32 // index in classes
	ended          bool
	stream         bool
	ok             bool // ended with class "ok"
}

type faultWin struct {
	step, target, kind string
	start, end         time.Time
	from, to           int64 // start and end as offsets
	open               bool  // while reading: no fault.end yet
}

type transition struct {
	t      time.Time
	target string
	from   string
	to     string
	kind   events.Kind
}

// strIndex numbers a small set of strings (targets, routes, classes) in the
// order they are first seen.
type strIndex struct {
	names []string
	m     map[string]int32 // once there are many
	last  int32            // the last one found: runs of the same string are common
}

const strIndexLinear = 16

func (x *strIndex) find(s string) (int32, bool) {
	if int(x.last) < len(x.names) && x.names[x.last] == s {
		return x.last, true
	}
	if x.m != nil {
		i, ok := x.m[s]
		if ok {
			x.last = i
		}
		return i, ok
	}
	for i, n := range x.names {
		if n == s {
			x.last = int32(i)
			return int32(i), true
		}
	}
	return -1, false
}

func (x *strIndex) add(s string) int32 {
	if i, ok := x.find(s); ok {
		return i
	}
	i := int32(len(x.names))
	x.names = append(x.names, s)
	if x.m != nil {
		x.m[s] = i
	} else if len(x.names) > strIndexLinear {
		x.m = make(map[string]int32, 2*len(x.names))
		for j, n := range x.names {
			x.m[n] = int32(j)
		}
	}
	return i
}

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

// Score computes every score of DESIGN.md from in. It is a pure function:
// the same input gives the same result. The returned Result has Overall,
// Faults, Targets, Alerts, Events and BlackBox set; the caller fills in the
// scenario's identity and the verdicts.
func Score(in Input) *Result { return newScorer(in).result() }

func (s *scorer) result() *Result {
	res := &Result{Schema: SchemaVersion, SLO: s.slo, BlackBox: s.blackBox}
	res.Events = s.summary
	res.Overall = s.overall()
	res.Targets = s.targets()
	res.Faults = s.faultScores()
	res.Alerts = s.alerts()
	res.Series = s.timeseries()
	for _, t := range res.Targets {
		res.Overall.Flaps += t.Flaps
		res.Overall.BadServed += t.BadServed
	}
	return res
}

// feed scores a log while it is written: the simulator hands it each event
// it records, so the log is not read back to be scored. The result is
// Score's on the same input.
type feed struct {
	s *scorer
	r *logReader
}

// newFeed starts scoring a log of about est requests. in has what is known
// before the run: Start, SLO, Primary, PrimaryTarget and Prices.
func newFeed(in Input, est int) *feed {
	s := &scorer{in: in, slo: in.SLO, start: in.Start}
	s.setStart()
	return &feed{s: s, r: s.newReader(false, est)}
}

// event reads the next event of the log.
func (f *feed) event(e *events.Event) { f.r.event(e) }

// score scores the run once it is over; in is the complete input, its log
// the one fed. A log the fast reading does not cover is read again.
func (f *feed) score(in Input) *Result {
	s := f.s
	s.in, s.end = in, in.End
	s.setEnd()
	byID, ok := f.r.finish()
	if !ok {
		return Score(in)
	}
	s.link()
	s.badServed(byID)
	s.sums()
	return s.result()
}

type scorer struct {
	in       Input
	slo      SLO
	blackBox bool
	start    time.Time
	end      time.Time
	endOff   int64
	// wall: start has no monotonic clock reading; startSec and startNsec
	// are its Unix seconds and nanoseconds.
	wall                bool
	startSec, startNsec int64
	nbins               int

	reqs     []reqRec
	ids      []string // request id by reqs index
	atts     []attRec
	faults   []faultWin
	trans    []transition // breaker and health, in log order
	signals  []transition // detector signals and probe detections
	budget   int
	alertEv  []events.Event
	timeline []events.Event // the first MaxTimeline notable events
	summary  EventSummary

	names    strIndex // every target string seen on an event, a journal entry or a fault
	classes  strIndex // attempt outcome classes
	isTarget []bool   // by names index: a scored target
	tgtNames []string // the scored targets, sorted
	tgtIdx   []int32  // tgtNames[i] is names.names[tgtIdx[i]]
	tgtPos   []int32  // by names index: position in tgtNames, -1 for none

	routes   strIndex
	routeP   []Price // by routes index: the route's primary price
	routeHas []bool  // whether routeP is known

	corrupted bool // the journal has a corrupted entry

	// From sums: all requests, those started outside every fault window
	// (the baseline) and inside one.
	all, base, fault tally
	cf               float64 // the counterfactual cost of all requests
	okEnd, allEnd    prefix  // successful and all requests by end time
	baseTTFT         Percentiles
	baseTotal        Percentiles
	baseFailed       []time.Duration

	// From link and sums: per target (by names index) and series tallies.
	tt        []tgtTally
	okTotal   int     // attempts that ended ok
	costTotal float64 // of all attempts
	byClass   [][]int // ended attempts by class, by names index
	step      time.Duration
	npts      int       // series points of step
	ptCost    []float64 // attempt cost by series point of its end
	ttftAt    []int     // served TTFTs by series point, counted (shifted by one)

	startAll, okAll prefix           // attempts by start, ok attempts by end
	startBy, okBy   map[int32]prefix // the same for one target
}

// off returns t as an offset from the run's start: t.Sub(start). When the
// start carries no monotonic clock reading (a simulated run, a log read
// back from a file), Sub subtracts wall clock seconds and nanoseconds,
// which off does itself for times within ±285 years of the start, without
// Sub's overflow check.
func (s *scorer) off(t time.Time) int64 {
	if s.wall {
		if ds := t.Unix() - s.startSec; ds > -9e9 && ds < 9e9 {
			return ds*1e9 + int64(t.Nanosecond()) - s.startNsec
		}
	}
	return int64(t.Sub(s.start))
}

func newScorer(in Input) *scorer {
	s := newScorerBase(in)
	byID, ok := s.read(false)
	if !ok {
		// A log the fast reading does not cover: read it again keeping
		// every request id.
		s = newScorerBase(in)
		byID, _ = s.read(true)
	}
	s.link()
	s.badServed(byID)
	s.sums()
	return s
}

func newScorerBase(in Input) *scorer {
	s := &scorer{in: in, slo: in.SLO, start: in.Start, end: in.End}
	if s.slo.Window <= 0 {
		s.slo.Window = defaultWindow
	}
	// Infer bounds when not given.
	if s.start.IsZero() || s.end.IsZero() {
		first := true
		for _, e := range in.all() {
			if first && s.start.IsZero() {
				s.start = e.Time
			}
			first = false
			if in.End.IsZero() {
				s.end = e.Time
			}
		}
	}
	s.setStart()
	s.setEnd()
	return s
}

// setStart sets what follows from s.start.
func (s *scorer) setStart() {
	s.wall = s.start == s.start.Round(0) // Round(0) strips a monotonic reading
	s.startSec, s.startNsec = s.start.Unix(), int64(s.start.Nanosecond())
	s.names.add("") // index 0
}

// setEnd sets what follows from s.end.
func (s *scorer) setEnd() {
	s.endOff = s.off(s.end)
	s.nbins = int(s.end.Sub(s.start)/bin) + 1
	if s.nbins < 1 {
		s.nbins = 1
	}
	dur := s.end.Sub(s.start)
	s.step = seriesStep(dur)
	s.npts = int(dur/s.step) + 1
}

// logReader makes the one pass over the event log, an event at a time:
// Score feeds it the log, the simulator feeds it each event as it is
// recorded (the log is then never read back to score it).
//
// Unless exact, it reads a well-formed log: every attempt and request end
// comes while its request is in flight (after its request.start, before
// its request.end) and no request id is used twice. Then only the requests
// in flight need an index by id. It fails (event returns false) as soon as
// the log is not like that.
//
// Exact, it indexes every request id and finish returns the latest record
// of each (a request.end or an attempt may refer to a request ended or
// started later). It never fails.
//
// Either way the result is the same: each request id denotes its latest
// record once the whole log is read.
type logReader struct {
	s      *scorer
	exact  bool
	failed bool
	n      int // events read

	live    flights          // fast: request id -> the request in flight
	byID    map[string]int32 // exact: request id -> its latest request
	openAtt map[string]int32 // exact: request id -> the attempt in flight
	attIDs  []string         // exact: request id by attempt
	prevID  string           // fast: ids so far in increasing (length, bytes) order
	ordered bool

	probeStreak map[string]int
	kinds       [len(summaryKinds)]int
	other       strIndex // kinds not in summaryKinds
	otherN      []int
	zeroOff     int64   // where a missing end time falls
	prices      []Price // by names index, for attempts without a cost
	priced      []int8  // 0 unknown, 1 priced, -1 no price

	// The request of the last event, as consecutive events are often
	// about the same request; lastSlot is where it is in live while
	// live.ver is lastVer.
	lastID     string
	lastRI     int32
	lastSlot   int
	lastVer    uint64
	lastTarget string
	lastTgt    int32
}

// newReader starts a pass over a log of about est requests.
func (s *scorer) newReader(exact bool, est int) *logReader {
	s.reqs = make([]reqRec, 0, est)
	s.ids = make([]string, 0, est)
	s.atts = make([]attRec, 0, est)
	r := &logReader{s: s, exact: exact, ordered: true, probeStreak: map[string]int{}, zeroOff: s.off(time.Time{}), lastRI: -1}
	if exact {
		r.byID = make(map[string]int32, est)
		r.openAtt = make(map[string]int32, 64)
		r.attIDs = make([]string, 0, est)
	} else {
		r.live.init(256)
	}
	return r
}

// read makes the one pass over the scorer's input log.
func (s *scorer) read(exact bool) (byID map[string]int32, ok bool) {
	// About four to six events per request: size the tables so they are
	// not copied as they grow.
	r := s.newReader(exact, s.in.len()/4+16)
	for _, ev := range s.in.all() {
		if !r.event(&ev) {
			return nil, false
		}
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
	s.reqs = append(s.reqs, reqRec{start: s.off(start), served: -1, first: -1, tgt: -1, open: -1,
		rt: s.routes.add(route)})
	if r.exact {
		r.byID[id] = i
	}
	return i
}

func (r *logReader) lookup(id string) int32 {
	if i, ok := r.byID[id]; ok {
		return i
	}
	return -1
}

func (r *logReader) inFlight(id string) (int32, bool) {
	if r.lastRI >= 0 && id == r.lastID {
		return r.lastRI, true
	}
	i, ok := r.live.lookup(id)
	if !ok {
		return -1, false
	}
	r.lastID, r.lastRI, r.lastSlot, r.lastVer = id, r.live.slots[i].ri-1, i, r.live.ver
	return r.lastRI, true
}

func (r *logReader) newAtt(a attRec, id string) int32 {
	s := r.s
	i := int32(len(s.atts))
	s.atts = append(s.atts, a)
	if r.exact {
		r.attIDs = append(r.attIDs, id)
	}
	return i
}

// event reads the next event of the log. It returns false when the fast
// reading fails; the reader is then done with (read the log exactly).
func (r *logReader) event(e *events.Event) bool {
	if r.failed {
		return false
	}
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
		if r.exact {
			r.newReq(e.RequestID, e.Route, e.Time)
			return true
		}
		id := e.RequestID
		ri := r.newReq(e.RequestID, e.Route, e.Time)
		slot, ok := r.live.add(id, ri)
		if !ok {
			return r.fail() // in flight twice
		}
		r.lastID, r.lastRI, r.lastSlot, r.lastVer = id, ri, slot, r.live.ver
		if r.ordered {
			r.ordered = len(id) > len(r.prevID) || (len(id) == len(r.prevID) && id > r.prevID)
			r.prevID = id
		}
		return true
	case events.RequestEnd:
		r.kinds[kRequestEnd]++
		var ri int32
		if r.exact {
			if ri = r.lookup(e.RequestID); ri < 0 {
				ri = r.newReq(e.RequestID, e.Route, e.Time.Add(-e.Duration))
			}
		} else {
			var ok bool
			if r.lastRI >= 0 && e.RequestID == r.lastID && r.lastVer == r.live.ver {
				ri = r.live.delAt(r.lastSlot) // usually: its attempt.end came just before
			} else if ri, ok = r.live.remove(e.RequestID); !ok {
				return r.fail()
			}
			r.lastRI = -1
		}
		q := &s.reqs[ri]
		q.ended, q.end, q.outcome, q.target = true, s.off(e.Time), outcomeOf(e.Outcome), tgt
		q.ttft, q.dur = e.TTFT, e.Duration
		if q.dur == 0 {
			q.dur = time.Duration(q.end - q.start)
		}
		return true
	case events.AttemptStart:
		r.kinds[kAttemptStart]++
		a := attRec{tgt: tgt, start: s.off(e.Time), end: r.zeroOff, class: -1}
		if r.exact {
			a.ri = r.lookup(e.RequestID)
			r.openAtt[e.RequestID] = r.newAtt(a, e.RequestID) // a request has one attempt in flight at a time
			return true
		}
		ri, ok := r.inFlight(e.RequestID)
		if !ok {
			return r.fail()
		}
		a.ri = ri
		s.reqs[ri].open = r.newAtt(a, "")
		return true
	case events.AttemptEnd:
		r.kinds[kAttemptEnd]++
		var ai int32
		if r.exact {
			var ok bool
			if ai, ok = r.openAtt[e.RequestID]; ok && s.atts[ai].tgt == tgt {
				delete(r.openAtt, e.RequestID)
			} else {
				ai = r.newAtt(attRec{tgt: tgt, start: s.off(e.Time.Add(-e.Duration)), ri: r.lookup(e.RequestID)}, e.RequestID)
			}
		} else {
			ri, ok := r.inFlight(e.RequestID)
			if !ok {
				return r.fail()
			}
			q := &s.reqs[ri]
			if ai = q.open; ai >= 0 && s.atts[ai].tgt == tgt {
				q.open = -1
			} else {
				ai = r.newAtt(attRec{tgt: tgt, start: s.off(e.Time.Add(-e.Duration)), ri: ri}, "")
			}
		}
		a := &s.atts[ai]
		a.ended, a.end, a.class, a.ttft, a.stream = true, s.off(e.Time), s.classes.add(e.Class), e.TTFT, e.Stream
		a.ok = e.Class == "ok"
		a.in, a.out, a.cache, a.cost = e.InputTokens, e.OutputTokens, e.CachedTokens, e.Cost
		if a.cost == 0 {
			if p, ok := r.price(tgt, e.Target); ok {
				a.cost = p.Cost(a.in, a.cache, a.out)
			}
		}
		return true
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
		s.trans = append(s.trans, transition{t: e.Time, target: e.Target, from: normState(e.From), to: normState(e.To), kind: e.Kind})
	case events.DetectorSignal:
		r.kinds[kDetector]++
		s.signals = append(s.signals, transition{t: e.Time, target: e.Target, to: "detector:" + e.Name, kind: e.Kind})
	case events.ProbeResult:
		r.kinds[kProbe]++
		if e.Class == probeRateLimited {
			break // not a failure, not a success
		}
		if e.OK {
			r.probeStreak[e.Target] = 0
		} else {
			r.probeStreak[e.Target]++
			if r.probeStreak[e.Target] == probeThreshold {
				s.signals = append(s.signals, transition{t: e.Time, target: e.Target, to: "probe", kind: e.Kind})
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
	return true
}

func (r *logReader) fail() bool {
	r.failed = true
	return false
}

// finish ends the pass once the whole log is read and the run's end is
// known (s.end), and reads the journals. Unless exact, byID is nil; ok is
// false when the fast reading failed.
func (r *logReader) finish() (byID map[string]int32, ok bool) {
	s, in := r.s, r.s.in
	if r.failed || (!r.exact && !r.ordered && !s.uniqueIDs()) {
		return nil, false
	}
	byID = r.byID
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
		if byID == nil {
			byID = make(map[string]int32, len(s.reqs)) // ids are unique
			for i := range s.reqs {
				byID[s.reqID(i)] = int32(i)
			}
		}
		r.byID = byID
		for _, j := range in.Journal {
			t := s.off(j.Time)
			s.atts = append(s.atts, attRec{tgt: s.target(j.Target), start: t, end: t, ended: true,
				class: s.classes.add(j.Outcome), ok: j.Outcome == "ok", out: j.OutputTokens, ri: r.lookup(j.RequestID)})
		}
	}
	for _, t := range in.journalTargets {
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
	if r.exact {
		// With an id on more than one record, attempts belong to the
		// latest; an attempt read before its request's first event
		// belongs to it too.
		dup := len(byID) != len(s.reqs)
		for i := range r.attIDs {
			if a := &s.atts[i]; dup || a.ri < 0 {
				a.ri = r.lookup(r.attIDs[i])
			}
		}
	}
	return byID, true
}

// flights indexes the requests in flight by id: an open-addressing table
// with linear probing, small enough to stay in cache, as requests come and
// go at every step.
type flights struct {
	seed  maphash.Seed
	slots []flight // a power of two in length
	n     int
	ver   uint64 // changes whenever entries may move
}

type flight struct {
	id   string
	hash uint64
	ri   int32 // the request's index in reqs plus one; 0 for a free slot
}

func (t *flights) init(n int) {
	t.seed = maphash.MakeSeed()
	t.slots = make([]flight, n)
	t.n = 0
}

// slot returns where id is, or the free slot where it would go.
func (t *flights) slot(id string, h uint64) int {
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.ri == 0 || (sl.hash == h && sl.id == id) {
			return i
		}
	}
}

func (t *flights) hash(id string) uint64 { return maphash.String(t.seed, id) }

// add records request ri under id and returns its slot; false if id is
// already in flight.
func (t *flights) add(id string, ri int32) (int, bool) { return t.put(id, t.hash(id), ri) }

// lookup returns the slot of id.
func (t *flights) lookup(id string) (int, bool) {
	i := t.slot(id, t.hash(id))
	return i, t.slots[i].ri != 0
}

// remove takes id out of the table and returns its request.
func (t *flights) remove(id string) (int32, bool) { return t.del(id, t.hash(id)) }

func (t *flights) put(id string, h uint64, ri int32) (int, bool) {
	t.ver++
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]flight, 2*len(old))
		for _, sl := range old {
			if sl.ri != 0 {
				t.slots[t.slot(sl.id, sl.hash)] = sl
			}
		}
	}
	i := t.slot(id, h)
	if t.slots[i].ri != 0 {
		return i, false
	}
	t.slots[i] = flight{id: id, hash: h, ri: ri + 1}
	t.n++
	return i, true
}

func (t *flights) del(id string, h uint64) (int32, bool) {
	i := t.slot(id, h)
	if t.slots[i].ri == 0 {
		return -1, false
	}
	return t.delAt(i), true
}

// delAt empties slot i, which holds an entry, and returns its request.
func (t *flights) delAt(i int) int32 {
	t.ver++
	ri := t.slots[i].ri
	// Backward-shift deletion: move later entries of the probe run into
	// the hole unless their home slot lies cyclically in (hole, entry].
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].ri != 0; j = (j + 1) & mask {
		home := int(t.slots[j].hash) & mask
		if (i < j && i < home && home <= j) || (i > j && (home > i || home <= j)) {
			continue
		}
		t.slots[i] = t.slots[j]
		i = j
	}
	t.slots[i] = flight{}
	t.n--
	return ri - 1
}

// reqID returns the id of request i.
func (s *scorer) reqID(i int) string { return s.ids[i] }

// uniqueIDs reports whether no two requests have the same id.
func (s *scorer) uniqueIDs() bool {
	seed := maphash.MakeSeed()
	hs := make([]uint64, len(s.reqs))
	for i := range s.reqs {
		hs[i] = maphash.String(seed, s.reqID(i))
	}
	slices.Sort(hs)
	for i := 1; i < len(hs); i++ {
		if hs[i] == hs[i-1] {
			return false // or a collision: the exact reading decides
		}
	}
	return true
}

// target records a scored target and returns its index in names.
func (s *scorer) target(t string) int32 {
	i := s.names.add(t)
	for int(i) >= len(s.isTarget) {
		s.isTarget = append(s.isTarget, false)
	}
	s.isTarget[i] = true
	return i
}

// link ties attempts to their requests and fills what the request events
// lack.
func (s *scorer) link() {
	nt := len(s.names.names)
	s.tt = make([]tgtTally, nt)
	s.byClass = make([][]int, len(s.classes.names))
	for c := range s.byClass {
		s.byClass[c] = make([]int, nt)
	}
	s.ptCost = make([]float64, s.npts)
	for i := range s.atts {
		a := &s.atts[i]
		t := &s.tt[a.tgt]
		t.attempts++
		t.cost += a.cost
		s.costTotal += a.cost
		if a.cost != 0 {
			t.costNZ += a.cost
			t.hasCost = true
		}
		s.ptCost[s.point(a.end)] += a.cost
		if a.ended {
			if a.ok {
				s.okTotal++
				t.ok++
			}
			s.byClass[a.class][a.tgt]++
			if a.in > 0 {
				t.warm++
			}
		}
		if a.ri < 0 {
			continue
		}
		r := &s.reqs[a.ri]
		if r.first < 0 && a.ended && a.ttft > 0 && (a.ok || (a.stream && a.out > 0)) {
			// The first attempt whose tokens reached the user (a stream
			// that failed mid-answer still showed its first token).
			r.first = int32(i)
		}
		r.attempts++
		r.cost += a.cost
		if a.ended && a.ok && (r.target == 0 || r.target == a.tgt) {
			r.served = int32(i)
		}
	}
	// Sorted targets.
	for i, n := range s.names.names {
		if i < len(s.isTarget) && s.isTarget[i] {
			s.tgtNames = append(s.tgtNames, n)
		}
	}
	slices.Sort(s.tgtNames)
	s.tgtPos = make([]int32, len(s.names.names))
	for i := range s.tgtPos {
		s.tgtPos[i] = -1
	}
	s.tgtIdx = make([]int32, len(s.tgtNames))
	for p, n := range s.tgtNames {
		i, _ := s.names.find(n)
		s.tgtIdx[p] = i
		s.tgtPos[i] = int32(p)
	}
	// Requests: fill TTFT from the first attempt that reached the user when
	// request.end lacks it.
	for i := range s.reqs {
		r := &s.reqs[i]
		if r.ttft == 0 && r.first >= 0 {
			f := &s.atts[r.first]
			r.ttft = time.Duration(f.start-r.start) + f.ttft
		}
		if r.target == 0 && r.served >= 0 {
			r.target = s.atts[r.served].tgt
		}
		if s.tgtPos[r.target] >= 0 {
			r.tgt = r.target
		}
		r.inFault = s.inAnyFault(r.start)
	}
	// Route prices for the counterfactual.
	s.routeP = make([]Price, len(s.routes.names))
	s.routeHas = make([]bool, len(s.routes.names))
	for i, rt := range s.routes.names {
		s.routeP[i], s.routeHas[i] = s.in.Prices[s.primaryFor(rt)]
	}
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
	if byID == nil {
		// Request ids are unique.
		for i := range s.reqs {
			if j, ok := last[s.reqID(i)]; ok {
				judge(int32(i), j)
			}
		}
		return
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
			if bad[s.reqID(i)] {
				s.reqs[i].bad = true
			}
		}
	}
}

func normState(v string) string {
	return strings.ReplaceAll(strings.ToLower(v), "-", "_")
}

// isOpening reports whether a transition is a detection-grade change: a
// breaker opening or a target marked unhealthy.
func isOpening(tr transition) bool {
	switch tr.kind {
	case events.BreakerTransition:
		return tr.to == "open"
	case events.HealthChange:
		return tr.to == "unhealthy" || tr.to == "down"
	}
	return false
}

func (s *scorer) binOf(t time.Time) int { return s.binAt(s.off(t)) }

func (s *scorer) binAt(off int64) int {
	i := int(off / int64(bin))
	return min(max(i, 0), s.nbins-1)
}

// prefix holds the prefix sums of a per-bin count.
type prefix []int32

func (p prefix) sum(from, to int) float64 { // bins [from, to)
	from = max(from, 0)
	to = min(to, len(p)-1)
	if to <= from {
		return 0
	}
	return float64(p[to] - p[from])
}

// counts turns per-bin counts into their prefix sums, in place: bins must
// have one spare slot at the end.
func counts(bins []int32) prefix {
	var run int32
	for i, v := range bins {
		bins[i] = run
		run += v
	}
	return prefix(bins)
}

// newBins returns zeroed per-bin counts with the spare slot counts needs.
func (s *scorer) newBins() []int32 { return make([]int32, s.nbins+1) }

// put counts n at offset t; times before the run's start are not counted.
func (s *scorer) put(bins []int32, t int64, n int32) {
	if t < 0 {
		return
	}
	bins[s.binAt(t)] += n
}

// rates fills in the rates of a's counts.
func rates(a Availability) Availability {
	if a.Requests > 0 {
		n := float64(a.Requests)
		a.ServedRate = float64(a.Served) / n
		a.DegradedRate = float64(a.Degraded) / n
		a.FailedRate = float64(a.Failed) / n
		a.Success = float64(a.Served+a.Degraded) / n
	}
	return a
}

// tally accumulates what the scores read from a set of requests, taken in
// log order.
type tally struct {
	avail              Availability // counts; rates by rates
	requests, attempts int
	reqBins, attBins   []int32 // request starts and their attempts by bin, when kept
	spend              float64 // summed cost
	bad                int
	// Of ended requests: TTFTs and durations of those that succeeded,
	// durations of those that failed.
	ttft, total, failed []time.Duration
}

// tgtTally is what the scores count per target.
type tgtTally struct {
	attempts, ok, served, bad int
	cost                      float64 // of its attempts
	costNZ                    float64 // the same, adding only nonzero costs
	hasCost                   bool    // some attempt had a nonzero cost
	warm                      int     // ended attempts with input tokens
	pass, n                   int     // quality
}

// point returns the series point that t (an offset) falls in.
func (s *scorer) point(t int64) int {
	return min(max(int(t/int64(s.step)), 0), s.npts-1)
}

// count adds r to the request, attempt and availability counts.
func (t *tally) count(r *reqRec) {
	t.requests++
	t.attempts += int(r.attempts)
	if !r.ended {
		return
	}
	t.avail.Requests++
	switch r.outcome {
	case outServed:
		t.avail.Served++
	case outDegraded:
		t.avail.Degraded++
	default:
		t.avail.Failed++
	}
}

// collect adds r's latencies.
func (t *tally) collect(r *reqRec) {
	if !r.ended {
		return
	}
	if r.outcome == outFailed {
		t.failed = append(t.failed, r.dur)
		return
	}
	if r.ttft > 0 {
		t.ttft = append(t.ttft, r.ttft)
	}
	t.total = append(t.total, r.dur)
}

func (t *tally) spendPerRequest() float64 {
	if t.requests == 0 {
		return 0
	}
	return t.spend / float64(t.requests)
}

// sums makes the one pass over the requests that the overall scores and
// the baseline need.
func (s *scorer) sums() {
	nBase := 0
	for i := range s.reqs {
		if !s.reqs[i].inFault {
			nBase++
		}
	}
	n := len(s.reqs)
	all := &s.all
	all.reqBins, all.attBins = s.newBins(), s.newBins()
	base, fault := &s.base, &s.fault
	base.ttft, base.total = make([]time.Duration, 0, nBase), make([]time.Duration, 0, nBase)
	fault.ttft, fault.total = make([]time.Duration, 0, n-nBase), make([]time.Duration, 0, n-nBase)
	okB, totB := s.newBins(), s.newBins()
	s.ttftAt = make([]int, s.npts+1)
	evals := s.in.hasEvals()
	for i := range s.reqs {
		r := &s.reqs[i]
		all.count(r)
		if r.ended && r.outcome != outFailed {
			if r.ttft > 0 {
				s.ttftAt[s.point(r.end)+1]++
			}
			if r.tgt >= 0 {
				t := &s.tt[r.tgt]
				t.served++
				if r.bad {
					t.bad++
				}
				if !evals && r.target != 0 && r.served >= 0 {
					t.n++
					if !r.bad {
						t.pass++
					}
				}
			}
		}
		if r.start >= 0 && r.start <= s.endOff {
			s.put(all.reqBins, r.start, 1)
			s.put(all.attBins, r.start, r.attempts)
		}
		if r.served >= 0 {
			s.cf += s.counterfactualOf(r)
		}
		if r.ended {
			s.put(totB, r.end, 1)
			if r.outcome != outFailed {
				s.put(okB, r.end, 1)
			}
		}
		t := base
		if r.inFault {
			t = fault
		}
		t.requests++
		t.spend += r.cost
		t.collect(r)
	}
	s.okEnd, s.allEnd = counts(okB), counts(totB)
	s.baseFailed = base.failed // read by every latency, never reordered
	s.baseTTFT, s.baseTotal = percentiles(base.ttft), percentiles(base.total)
}

// window tallies the requests started in f.
func (s *scorer) window(f faultWin) tally {
	t := tally{reqBins: s.newBins(), attBins: s.newBins()}
	for i := range s.reqs {
		r := &s.reqs[i]
		if r.start < f.from || r.start >= f.to {
			continue
		}
		t.count(r)
		t.spend += r.cost
		s.put(t.reqBins, r.start, 1)
		s.put(t.attBins, r.start, r.attempts)
		if r.bad {
			t.bad++
		}
		t.collect(r)
	}
	return t
}

// rankOf returns the nearest-rank index of quantile q among n values.
func rankOf(q float64, n int) int {
	i := int(math.Ceil(q*float64(n))) - 1
	return min(max(i, 0), n-1)
}

// percentiles returns the nearest-rank percentiles of ds, reordering ds.
func percentiles(ds []time.Duration) Percentiles {
	p := Percentiles{N: len(ds)}
	if len(ds) == 0 {
		return p
	}
	ranks := []int{rankOf(0.50, len(ds)), rankOf(0.95, len(ds)), rankOf(0.99, len(ds))}
	var v [3]time.Duration
	if len(ds) >= histSelectMin {
		histSelect(ds, ranks, v[:])
	} else {
		// Each selection leaves the smaller values before the rank, so
		// the next (lower) rank is looked for in that part only.
		v[2] = selectNth(ds, ranks[2])
		v[1] = selectNth(ds[:ranks[2]+1], ranks[1])
		v[0] = selectNth(ds[:ranks[1]+1], ranks[0])
	}
	p.P50, p.P95, p.P99 = v[0], v[1], v[2]
	return p
}

// histSelectMin is the size from which histSelect beats selectNth.
const histSelectMin = 1 << 13

// histSelect sets out[i] to the value of rank ranks[i] (ascending) in ds,
// in three passes: the range of ds, a histogram of 2^16 equal-width buckets
// over it, and a gathering of the few buckets that hold the ranks, which
// are then searched with selectNth. ds is left as it was.
func histSelect(ds []time.Duration, ranks []int, out []time.Duration) {
	lo, hi := ds[0], ds[0]
	for _, v := range ds {
		lo, hi = min(lo, v), max(hi, v)
	}
	shift := max(bits.Len64(uint64(hi)-uint64(lo))-16, 0)
	key := func(v time.Duration) int { return int((uint64(v) - uint64(lo)) >> shift) }
	hist := make([]int32, key(hi)+1)
	for _, v := range ds {
		hist[key(v)]++
	}
	// The bucket of each rank and the rank within it.
	bk := make([]int, len(ranks))
	within := make([]int, len(ranks))
	b, below := 0, 0 // values in buckets before b
	for i, r := range ranks {
		for below+int(hist[b]) <= r {
			below += int(hist[b])
			b++
		}
		bk[i], within[i] = b, r-below
	}
	// Gather the values of those buckets (at most three), each bucket in
	// one slice.
	vals := make([][]time.Duration, len(ranks))
	for i := range ranks {
		if i > 0 && bk[i] == bk[i-1] {
			continue
		}
		vals[i] = make([]time.Duration, 0, hist[bk[i]])
	}
	for _, v := range ds {
		k := key(v)
		for i := range bk {
			if k == bk[i] {
				vals[i] = append(vals[i], v)
				break
			}
		}
	}
	for i := range ranks {
		j := i
		for j > 0 && bk[j] == bk[j-1] {
			j--
		}
		out[i] = selectNth(vals[j], within[i])
	}
}

// selectNth reorders ds so that ds[k] is the value a sort would put there,
// with no greater value before it and no smaller one after it, and returns
// it. Expected linear time; it falls back to sorting on inputs that defeat
// its pivots.
func selectNth(ds []time.Duration, k int) time.Duration {
	lo, hi := 0, len(ds) // the k-th is in ds[lo:hi]
	budget := 2 * bits.Len(uint(len(ds)))
	for hi-lo > 16 {
		if budget--; budget < 0 {
			slices.Sort(ds[lo:hi])
			return ds[k]
		}
		// Median of three as the pivot.
		m := lo + (hi-lo)/2
		a, b, c := ds[lo], ds[m], ds[hi-1]
		pv := max(min(a, b), min(max(a, b), c))
		// Three-way partition: [lo,lt) < pv, [lt,gt) == pv, [gt,hi) > pv.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch v := ds[i]; {
			case v < pv:
				ds[lt], ds[i] = v, ds[lt]
				lt++
				i++
			case v > pv:
				gt--
				ds[gt], ds[i] = v, ds[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return pv
		}
	}
	slices.Sort(ds[lo:hi])
	return ds[k]
}

func ratio(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a / b
}

func (s *scorer) inAnyFault(t int64) bool {
	for i := range s.faults {
		if f := &s.faults[i]; t >= f.from && t < f.to {
			return true
		}
	}
	return false
}

// latency compares the latencies of t with the baseline (requests started
// outside every fault window).
func (s *scorer) latency(t *tally) Latency {
	l := Latency{
		BaselineTTFT: s.baseTTFT, FaultTTFT: percentiles(t.ttft),
		BaselineTotal: s.baseTotal, FaultTotal: percentiles(t.total),
	}
	failed := make([]time.Duration, 0, len(s.baseFailed)+len(t.failed))
	failed = append(append(failed, s.baseFailed...), t.failed...)
	l.Failed = percentiles(failed)
	l.TTFTPenalty = ratio(float64(l.FaultTTFT.P95), float64(l.BaselineTTFT.P95))
	l.TotalPenalty = ratio(float64(l.FaultTotal.P95), float64(l.BaselineTotal.P95))
	return l
}

// retry scores t's attempts; its bins hold the requests started in
// [from, to).
func (s *scorer) retry(t *tally, from, to time.Time) Retry {
	rt := Retry{Requests: t.requests, Attempts: t.attempts}
	rt.Amplification = ratio(float64(rt.Attempts), float64(rt.Requests))
	// Peak over sliding 10s windows of request start times.
	reqS, attS := counts(t.reqBins), counts(t.attBins)
	w := int(peakWindow / bin)
	lo, hi := s.binOf(from), s.binOf(to)
	for k := lo + 1; k <= hi+1; k++ {
		n := reqS.sum(k-w, k)
		if n < peakMinRequests {
			continue
		}
		if a := attS.sum(k-w, k) / n; a > rt.PeakAmplification+1e-12 {
			rt.PeakAmplification = a
			rt.PeakAt = s.start.Add(time.Duration(k) * bin)
		}
	}
	if rt.PeakAmplification == 0 {
		rt.PeakAmplification = rt.Amplification
	}
	return rt
}

func (s *scorer) primaryFor(route string) string {
	if p, ok := s.in.Primary[route]; ok {
		return p
	}
	return s.in.PrimaryTarget
}

// counterfactualOf prices a served request's answering usage at its route's
// primary price (0 when it was not served).
func (s *scorer) counterfactualOf(r *reqRec) float64 {
	if r.served < 0 {
		return 0
	}
	a := &s.atts[r.served]
	if s.routeHas[r.rt] {
		return s.routeP[r.rt].Cost(a.in, a.cache, a.out)
	}
	return a.cost
}

// warmupPenalty: per target, the cost of input tokens that missed the prompt
// cache beyond the target's warm hit ratio (its hit ratio over the later half
// of its attempts).
func (s *scorer) warmupPenalty() float64 {
	// The attempts of each target, in order, in one array.
	at := make([]int, len(s.names.names)+1) // target t's are idx[at[t]:at[t+1]]
	for t := range len(s.names.names) {
		at[t+1] = at[t] + s.tt[t].warm
	}
	idx := make([]int32, at[len(s.names.names)])
	fill := slices.Clone(at)
	for i := range s.atts {
		if a := &s.atts[i]; a.ended && a.in > 0 {
			idx[fill[a.tgt]] = int32(i)
			fill[a.tgt]++
		}
	}
	pen := 0.0
	for p, t := range s.tgtNames {
		t0 := s.tgtIdx[p]
		as := idx[at[t0]:at[t0+1]]
		pr, ok := s.in.Prices[t]
		if len(as) < 2 || !ok || pr.InputPerMTok <= pr.CachedInputPerMTok {
			continue
		}
		var in, cached int
		for _, i := range as[len(as)/2:] {
			in += s.atts[i].in
			cached += s.atts[i].cache
		}
		h := float64(cached) / float64(in)
		for _, i := range as {
			a := &s.atts[i]
			if miss := h*float64(a.in) - float64(a.cache); miss > 0 {
				pen += miss * (pr.InputPerMTok - pr.CachedInputPerMTok) / 1e6
			}
		}
	}
	return pen
}

func (s *scorer) overall() Overall {
	var o Overall
	o.Availability = rates(s.all.avail)
	o.Latency = s.latency(&s.fault)
	o.Retry = s.retry(&s.all, s.start, s.end.Add(time.Nanosecond))
	o.Retry.BudgetExhausted = s.budget
	c := Cost{ByTarget: map[string]float64{}, Total: s.costTotal}
	for i, n := range s.names.names {
		if t := &s.tt[i]; t.hasCost {
			c.ByTarget[n] = t.costNZ
		}
	}
	c.Counterfactual = s.cf
	c.FallbackPremium = c.Total - c.Counterfactual
	c.Multiplier = ratio(s.fault.spendPerRequest(), s.base.spendPerRequest())
	c.CacheWarmupPenalty = s.warmupPenalty()
	if len(c.ByTarget) == 0 {
		c.ByTarget = nil
	}
	o.Cost = c
	return o
}

// flapWindowEnd is how long after a fault's end an opening still belongs to it.
func (s *scorer) flapWindowEnd(f faultWin) time.Time { return f.end.Add(s.slo.Window) }

func (s *scorer) targets() []TargetScore {
	out := make([]TargetScore, 0, len(s.tgtNames))
	ts := s.tt
	okTotal, byClass := s.okTotal, s.byClass
	for i := range s.in.Evals {
		e := &s.in.Evals[i]
		ti, ok := s.names.find(e.Target)
		if !ok {
			continue // not a target
		}
		ts[ti].n++
		if e.Pass {
			ts[ti].pass++
		}
	}
	for _, e := range s.in.evalTally {
		if ti, ok := s.names.find(e.target); ok {
			ts[ti].n += e.n
			ts[ti].pass += e.passed
		}
	}
	for p, name := range s.tgtNames {
		ti := s.tgtIdx[p]
		t := &ts[ti]
		sc := TargetScore{Target: name, Attempts: t.attempts, Cost: t.cost, OK: t.ok, Served: t.served, BadServed: t.bad}
		for c, n := range byClass {
			if n[ti] > 0 {
				if sc.Classes == nil {
					sc.Classes = map[string]int{}
				}
				sc.Classes[s.classes.names[c]] = n[ti]
			}
		}
		sc.Share = ratio(float64(sc.OK), float64(okTotal))
		sc.QualityN = t.n
		sc.Quality = 1
		if t.n > 0 {
			sc.Quality = float64(t.pass) / float64(t.n)
		}
		sc.Openings, sc.Cycles, sc.Unhealthy, sc.FalsePositives, sc.Flaps = s.flaps(name)
		out = append(out, sc)
	}
	return out
}

// flaps counts a target's breaker and health activity over the run.
// Flaps = openings/markings beyond the first inside each fault window plus
// every opening/marking outside all fault windows (false positives).
func (s *scorer) flaps(target string) (openings, cycles, unhealthy, fp, flaps int) {
	perFault := map[int]int{}
	for _, tr := range s.trans {
		if tr.target != target {
			continue
		}
		if tr.kind == events.BreakerTransition && tr.from == "half_open" && tr.to == "open" {
			cycles++
		}
		if !isOpening(tr) {
			continue
		}
		if tr.kind == events.BreakerTransition {
			openings++
		} else {
			unhealthy++
		}
		fi := -1
		for i, f := range s.faults {
			if f.target == target && !tr.t.Before(f.start) && !tr.t.After(s.flapWindowEnd(f)) {
				fi = i
				break
			}
		}
		if fi < 0 {
			fp++
			flaps++
			continue
		}
		key := fi * 2
		if tr.kind == events.HealthChange {
			key++
		}
		perFault[key]++
		if perFault[key] > 1 {
			flaps++
		}
	}
	return
}

// faultFlaps counts openings and markings beyond the first during one fault.
func (s *scorer) faultFlaps(f faultWin) int {
	n := map[events.Kind]int{}
	fl := 0
	for _, tr := range s.trans {
		if tr.target != f.target || !isOpening(tr) || tr.t.Before(f.start) || tr.t.After(s.flapWindowEnd(f)) {
			continue
		}
		n[tr.kind]++
		if n[tr.kind] > 1 {
			fl++
		}
	}
	return fl
}

// shareSeries returns per-bin counts of attempts by start time (okOnly:
// successful ones by end time) on target and on all targets. The series of
// every fault target are built in one pass, on first use.
func (s *scorer) shareSeries(target string, okOnly bool) (mine, all prefix) {
	if s.startBy == nil {
		s.buildShareSeries()
	}
	ti, _ := s.names.find(target) // every fault target is in names
	if okOnly {
		return s.okBy[ti], s.okAll
	}
	return s.startBy[ti], s.startAll
}

func (s *scorer) buildShareSeries() {
	// slot[t] is where target t's series are in mine, -1 for none.
	slot := make([]int, len(s.names.names))
	for i := range slot {
		slot[i] = -1
	}
	var tgts []int32
	for _, f := range s.faults {
		if ti, _ := s.names.find(f.target); slot[ti] < 0 {
			slot[ti] = len(tgts)
			tgts = append(tgts, ti)
		}
	}
	startAll, okAll := s.newBins(), s.newBins()
	startMine, okMine := make([][]int32, len(tgts)), make([][]int32, len(tgts))
	for k := range tgts {
		startMine[k], okMine[k] = s.newBins(), s.newBins()
	}
	for i := range s.atts {
		a := &s.atts[i]
		k := slot[a.tgt]
		if a.start >= 0 {
			b := s.binAt(a.start)
			startAll[b]++
			if k >= 0 {
				startMine[k][b]++
			}
		}
		if a.ok && a.ended && a.end >= 0 {
			b := s.binAt(a.end)
			okAll[b]++
			if k >= 0 {
				okMine[k][b]++
			}
		}
	}
	s.startAll, s.okAll = counts(startAll), counts(okAll)
	s.startBy, s.okBy = make(map[int32]prefix, len(tgts)), make(map[int32]prefix, len(tgts))
	for k, ti := range tgts {
		s.startBy[ti], s.okBy[ti] = counts(startMine[k]), counts(okMine[k])
	}
}

// baselineBins returns the bin range of f's baseline: from the end of the
// latest fault that ended before f started (or the run start) to f's start.
func (s *scorer) baselineBins(f faultWin) (int, int) {
	from := s.start
	for _, g := range s.faults {
		if !g.end.After(f.start) && g.end.After(from) {
			from = g.end
		}
	}
	return s.binOf(from), s.binOf(f.start)
}

// baselineShare is target's share of (ok) attempts before f; when that
// period has no traffic, its share over all time outside fault windows.
func (s *scorer) baselineShare(f faultWin, mine, all prefix) float64 {
	lo, hi := s.baselineBins(f)
	if n := all.sum(lo, hi); n > 0 {
		return mine.sum(lo, hi) / n
	}
	var m, n float64
	for k := 0; k < s.nbins; k++ {
		if s.inAnyFault(s.off(s.start.Add(time.Duration(k) * bin))) {
			continue
		}
		m += mine.sum(k, k+1)
		n += all.sum(k, k+1)
	}
	return ratio(m, n)
}

func (s *scorer) faultScores() []FaultScore {
	out := make([]FaultScore, 0, len(s.faults))
	w := int(s.slo.Window / bin)
	if w < 1 {
		w = 1
	}
	// User-visible success series by request end.
	okS, totS := s.okEnd, s.allEnd
	baseSpend := s.base.spendPerRequest()
	for _, f := range s.faults {
		fs := FaultScore{Step: f.step, Target: f.target, Kind: f.kind, Start: f.start, End: f.end}
		lo, hi := s.binOf(f.start), s.binOf(f.end)

		// TTD.
		s.detect(&fs, f)

		// TTM: evaluate the window ending at each bin edge in (start, end].
		lastBad := -1
		for k := lo + 1; k <= hi; k++ {
			tot := totS.sum(k-w, k)
			if tot > 0 && okS.sum(k-w, k)/tot < s.slo.SuccessRate-1e-12 {
				lastBad = k
			}
		}
		switch {
		case lastBad < 0:
			fs.Mitigated = true
		case lastBad >= hi:
			fs.Impact = true
		default:
			fs.Impact, fs.Mitigated = true, true
			fs.TTM = s.start.Add(time.Duration(lastBad+1) * bin).Sub(f.start)
		}

		// TTR.
		s.recover(&fs, f)

		t := s.window(f)
		fs.Availability = rates(t.avail)
		fs.Latency = s.latency(&t)
		fs.Retry = s.retry(&t, f.start, f.end)
		fs.CostMultiplier = ratio(t.spendPerRequest(), baseSpend)
		fs.BadServed = t.bad
		fs.Flaps = s.faultFlaps(f)

		// Offered load on the faulted target.
		attS, _ := s.shareSeries(f.target, false)
		if d := f.end.Sub(f.start).Seconds(); d > 0 {
			fs.OfferedLoad = attS.sum(lo, hi) / d
		}
		blo, bhi := s.baselineBins(f)
		if bhi > blo {
			fs.BaselineLoad = attS.sum(blo, bhi) / (float64(bhi-blo) * bin.Seconds())
		}
		fs.LoadRatio = ratio(fs.OfferedLoad, fs.BaselineLoad)
		out = append(out, fs)
	}
	slices.SortStableFunc(out, func(a, b FaultScore) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.Target, b.Target)
	})
	return out
}

func (s *scorer) detect(fs *FaultScore, f faultWin) {
	if s.blackBox {
		s.trafficShift(fs, f)
		return
	}
	// Already open or unhealthy when the fault starts.
	breaker, health := "", ""
	for _, tr := range s.trans {
		if tr.target != f.target || !tr.t.Before(f.start) {
			continue
		}
		if tr.kind == events.BreakerTransition {
			breaker = tr.to
		} else {
			health = tr.to
		}
	}
	if breaker == "open" || health == "unhealthy" || health == "down" {
		fs.Detected, fs.DetectedBy = true, "already_open"
		return
	}
	best := transition{}
	found := false
	consider := func(tr transition, by string) {
		if tr.target != f.target || tr.t.Before(f.start) || tr.t.After(f.end) {
			return
		}
		if !found || tr.t.Before(best.t) {
			best, found = tr, true
			best.to = by
		}
	}
	// Signals first: on a tie (a detector demoting a target marks it
	// unhealthy at the same instant) the root cause names the detection.
	for _, sg := range s.signals {
		consider(sg, sg.to)
	}
	for _, tr := range s.trans {
		if isOpening(tr) {
			by := "breaker"
			if tr.kind == events.HealthChange {
				by = "health"
			}
			consider(tr, by)
		}
	}
	if found {
		fs.Detected, fs.TTD, fs.DetectedBy = true, best.t.Sub(f.start), best.to
	}
}

// trafficShift: the first window end after which the target's share of
// attempts stays below half its pre-fault share until the fault ends.
func (s *scorer) trafficShift(fs *FaultScore, f faultWin) {
	mine, all := s.shareSeries(f.target, false)
	baseline := s.baselineShare(f, mine, all)
	if baseline == 0 {
		return
	}
	w := int(s.slo.Window / bin)
	lo, hi := s.binOf(f.start), s.binOf(f.end)
	first := -1
	for k := lo + 1; k <= hi; k++ {
		n := all.sum(k-w, k)
		below := n > 0 && mine.sum(k-w, k)/n < baseline/2
		if below && first < 0 {
			first = k
		} else if !below && n > 0 {
			first = -1
		}
	}
	if first >= 0 {
		fs.Detected, fs.DetectedBy = true, "traffic_shift"
		fs.TTD = s.start.Add(time.Duration(first) * bin).Sub(f.start)
	}
}

// recover: from the fault's end, the first window end after which the
// target's share of successful attempts stays at or above 90% of its
// baseline share until the run (or the next fault on the target) ends.
func (s *scorer) recover(fs *FaultScore, f faultWin) {
	mine, all := s.shareSeries(f.target, true)
	base := s.baselineShare(f, mine, all)
	fs.BaselineShare = base
	horizon := s.end
	for _, g := range s.faults {
		if g.target == f.target && !g.start.Before(f.end) && g.start.Before(horizon) {
			horizon = g.start
		}
	}
	if !horizon.After(f.end) {
		fs.Superseded = true
		return
	}
	if base == 0 {
		fs.Recovered = true
		return
	}
	w := int(s.slo.Window / bin)
	lo, hi := s.binOf(f.end), s.binOf(horizon)
	first := -1
	for k := lo; k <= hi; k++ {
		n := all.sum(k-w, k)
		ok := n > 0 && mine.sum(k-w, k)/n >= recoverShare*base-1e-12
		if ok && first < 0 {
			first = k
		} else if !ok {
			first = -1
		}
	}
	if first >= 0 {
		fs.Recovered = true
		fs.TTR = max(s.start.Add(time.Duration(first)*bin).Sub(f.end), 0)
	}
}

func (s *scorer) alerts() []AlertScore {
	idx := map[string]int{}
	var out []AlertScore
	get := func(name string) *AlertScore {
		i, ok := idx[name]
		if !ok {
			i = len(out)
			idx[name] = i
			out = append(out, AlertScore{Name: name})
		}
		return &out[i]
	}
	for _, e := range s.alertEv {
		a := get(e.Name)
		switch e.Kind {
		case events.AlertFired:
			a.Fired++
			if a.FirstAt.IsZero() {
				a.FirstAt = e.Time
			}
			if e.Severity != "" {
				a.Severity = e.Severity
			}
		case events.AlertResolved:
			a.Resolved++
		case events.AlertDelivered:
			m := &a.Delivered
			if !e.OK {
				m = &a.Undelivered
			}
			if *m == nil {
				*m = map[string]int{}
			}
			(*m)[e.Sink]++
		}
	}
	slices.SortFunc(out, func(a, b AlertScore) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// normTarget turns "provider/model" into "provider:model".
func normTarget(t string) string {
	if t == "" || strings.Contains(t, ":") {
		return t
	}
	if i := strings.IndexByte(t, '/'); i >= 0 {
		return t[:i] + ":" + t[i+1:]
	}
	return t
}
