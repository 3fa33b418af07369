package score

import (
	"cmp"
	"iter"
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
	// InputTokens (cached included) and CachedTokens are the prompt as the
	// mock counted it: with the mock's prices, the cost of a black box.
	InputTokens  int `json:"input_tokens,omitempty"`
	CachedTokens int `json:"cached_tokens,omitempty"`
}

// EvalRecord is the eval verdict on one response a user received: its
// checks (a structured request answered in valid JSON, not cut at the
// length limit, no refusal, tool arguments that parse). An answer that
// fails them was served as success but is wrong: it counts in bad_served
// and is not a good request, whoever served it (brownout or a black box
// that, say, dropped response_format on its fallback).
type EvalRecord struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id"`
	Target    string    `json:"target"`
	Pass      bool      `json:"pass"`
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
	// Tallies are the simulator's Evals, counted by target: scoring
	// counts no more of them.
	Tallies []EvalTally
	// JournalTargets, when set, are the targets a journal names in the
	// order they first appear in it, and Journal holds only its entries
	// of requests with a corrupted entry: all scoring reads of a journal
	// when the log has attempt events (the simulator's, whose journals
	// hold an entry per attempt).
	JournalTargets []string
}

// EvalTally counts the eval verdicts on a target's served responses.
type EvalTally struct {
	Target    string
	N, Passed int
}

// hasEvals reports whether the input has eval verdicts.
func (in *Input) hasEvals() bool { return len(in.Evals) > 0 || len(in.Tallies) > 0 }

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
	DefaultWindow   = 10 * time.Second
)

// Adjacency is the engines' scheduling tick: two steps on the same target
// whose end and start are at most this far apart are adjacent (the later
// supersedes the earlier), in both engines.
const Adjacency = time.Millisecond

// Requests and attempts are kept by value in two slices and refer to each
// other by position; times are offsets in nanoseconds from the run's start
// (t.Sub(start)), so the hot loops compare and bin plain integers.

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
	res.Measured = s.measured()
	res.log, res.packed = s.in.Events, s.in.Packed
	res.journal = s.in.Journal
	if s.in.JournalTargets != nil {
		res.journal = nil // made on demand (Journal)
	}
	for _, t := range res.Targets {
		res.Overall.Flaps += t.Flaps
		res.Overall.BadServed += t.BadServed
	}
	res.Overall.BreachTime = s.breachTime()
	res.Overall.BreachByPart = s.breachByPart(0, s.binOf(s.end))
	res.Overall.FalseAlarms = s.falseAlarms()
	return res
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
	echoEnd  []int64        // by fault: when its echo ends, less the SLO window (echoOfFault)
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

	// Black box: journal entries tied to a user request by its id, and
	// the targets that billed tokens without a price.
	linked   int
	unpriced []string

	// From sums: all requests, those started outside every fault window
	// (the baseline) and inside one.
	all, base, fault tally
	cf               float64 // the counterfactual cost of all requests
	okEnd, allEnd    prefix  // successful and all requests by end time
	goodEnd          prefix  // good requests (the SLI) by end time
	// correctEnd and fastEnd count the requests that met the correctness
	// part, and the per-request latency part, by end time (parts apart:
	// BreachByPart).
	correctEnd, fastEnd prefix
	// Streamed TTFTs and non-streamed total times of successful requests
	// by bin of their end, kept when the SLO has a window percentile.
	ttftBins, totalBins [][]time.Duration
	baseTTFT            Percentiles
	baseITL             Percentiles
	baseTotal           Percentiles
	baseFailed          []time.Duration

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
	s.score(s.read())
	return s
}

// score computes what the scores read once the log is read.
func (s *scorer) score(byID map[string]int32) {
	s.link()
	s.badServed(byID)
	s.wrongAnswers(byID)
	s.sums()
}

func newScorerBase(in Input) *scorer {
	s := &scorer{in: in, slo: in.SLO.WithDefaults(), start: in.Start, end: in.End}
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

// WithDefaults returns the SLO with its default window when it has none.
func (o SLO) WithDefaults() SLO {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	return o
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
		if a.ended && a.ok {
			switch {
			case s.blackBox:
				// The journals say who served it (the latest answer),
				// whatever the answer said.
				if r.served < 0 || a.end >= s.atts[r.served].end {
					r.served = int32(i)
				}
			case r.target == 0 || r.target == a.tgt:
				r.served = int32(i)
			}
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
		if r.target == 0 && r.served >= 0 || s.blackBox && r.served >= 0 {
			r.target = s.atts[r.served].tgt
		}
		if s.blackBox && r.outcome == outServed && r.target != 0 {
			// A black box's fallback answers are degraded: served by a
			// target other than its route's primary.
			if p := s.primaryFor(s.routes.names[r.rt]); p != "" && s.names.names[r.target] != p {
				r.outcome = outDegraded
			}
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

// tgtTally is what the scores count per target.
type tgtTally struct {
	attempts, ok, served, bad int
	cost                      float64 // of its attempts
	costNZ                    float64 // the same, adding only nonzero costs
	hasCost                   bool    // some attempt had a nonzero cost
	warm                      int     // ended attempts with input tokens
	pass, n                   int     // quality
}

func ratio(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a / b
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
	for _, e := range s.in.Tallies {
		if ti, ok := s.names.find(e.Target); ok {
			ts[ti].n += e.N
			ts[ti].pass += e.Passed
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
		c := s.flaps(name, -1)
		sc.Openings, sc.Cycles, sc.Unhealthy = c.openings, c.cycles, c.unhealthy
		sc.ReDetections, sc.Oscillations, sc.FalsePositives, sc.Flaps = c.reDetections, c.oscillations, c.falsePositives, c.flaps()
		sc.UnnecessaryFallback = s.unnecessaryFallback(ti, name)
		out = append(out, sc)
	}
	return out
}

func (s *scorer) faultScores() []FaultScore {
	out := make([]FaultScore, 0, len(s.faults))
	w := int(s.slo.Window / bin)
	if w < 1 {
		w = 1
	}
	baseSpend := s.base.spendPerRequest()
	for fi, f := range s.faults {
		fs := FaultScore{Step: f.step, Target: f.target, Kind: f.kind, Start: f.start, End: f.end}
		lo, hi := s.binOf(f.start), s.binOf(f.end)

		// TTD.
		s.detect(&fs, f)

		// TTM: evaluate the window ending at each bin edge in (start, end].
		lastBad := -1
		for k := lo + 1; k <= hi; k++ {
			if s.sliBad(k, w) {
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
		s.breaches(&fs, lo, hi, w)
		fs.BreachByPart = s.breachByPart(lo, hi)
		fs.Returns = s.returns(f, fs)

		// TTR.
		s.recover(&fs, f)

		t := s.window(f)
		fs.Availability = rates(t.avail)
		fs.Latency = s.latency(&t)
		fs.Retry = s.retry(&t, f.start, f.end)
		fs.CostMultiplier = ratio(t.spendPerRequest(), baseSpend)
		fs.BadServed = t.bad
		c := s.flaps(f.target, fi)
		fs.ReDetections, fs.Oscillations, fs.Flaps = c.reDetections, c.oscillations, c.flaps()

		// Offered load on the faulted target.
		attS, _ := s.shareSeries(f.target, false)
		if d := f.end.Sub(f.start).Seconds(); d > 0 {
			fs.OfferedLoad = attS.sum(lo, hi) / d
		}
		fs.BaselineLoad = s.baselineLoad(f, attS)
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

// NormTarget turns "provider/model" into "provider:model".
func NormTarget(t string) string {
	if t == "" || strings.Contains(t, ":") {
		return t
	}
	if i := strings.IndexByte(t, '/'); i >= 0 {
		return t[:i] + ":" + t[i+1:]
	}
	return t
}
