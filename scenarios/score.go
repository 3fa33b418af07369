package scenarios

import (
	"cmp"
	"iter"
	"math"
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

type reqRec struct {
	id       string
	route    string
	start    time.Time
	end      time.Time
	ended    bool
	outcome  string
	target   string
	ttft     time.Duration
	dur      time.Duration
	attempts int
	cost     float64
	served   *attRec // the attempt that answered
	first    *attRec // the first attempt whose tokens reached the user
}

type attRec struct {
	req            string
	target         string
	start, end     time.Time
	class          string
	ttft           time.Duration
	in, out, cache int
	cost           float64
	ended          bool
	stream         bool
}

type faultWin struct {
	step, target, kind string
	start, end         time.Time
}

type transition struct {
	t      time.Time
	target string
	from   string
	to     string
	kind   events.Kind
}

// Score computes every score of DESIGN.md from in. It is a pure function:
// the same input gives the same result. The returned Result has Overall,
// Faults, Targets, Alerts, Events and BlackBox set; the caller fills in the
// scenario's identity and the verdicts.
func Score(in Input) *Result {
	s := newScorer(in)
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

type scorer struct {
	in       Input
	slo      SLO
	blackBox bool
	start    time.Time
	end      time.Time
	nbins    int

	reqs     []*reqRec
	byID     map[string]*reqRec
	atts     []*attRec
	faults   []faultWin
	trans    []transition // breaker and health, in log order
	signals  []transition // detector signals and probe detections
	budget   int
	alertEv  []events.Event
	summary  EventSummary
	tgtNames []string
	bad      map[string]bool // request ids served corrupted
}

func newScorer(in Input) *scorer {
	// About six events per request: size the request and attempt tables
	// so they are not rehashed and copied as they grow.
	est := len(in.Events)/6 + 16
	s := &scorer{in: in, slo: in.SLO, start: in.Start, end: in.End, byID: make(map[string]*reqRec, est),
		reqs: make([]*reqRec, 0, est), atts: make([]*attRec, 0, est)}
	if s.slo.Window <= 0 {
		s.slo.Window = defaultWindow
	}
	s.summary = EventSummary{ByKind: map[string]int{}}
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
	s.nbins = int(s.end.Sub(s.start)/bin) + 1
	if s.nbins < 1 {
		s.nbins = 1
	}
	openAtt := make(map[string]*attRec, 64) // request id -> the attempt in flight
	probeStreak := map[string]int{}
	targets := map[string]bool{}
	for _, ev := range in.all() {
		e := &ev
		s.summary.Total++
		s.summary.ByKind[string(e.Kind)]++
		if e.Target != "" && e.Kind != events.FaultStart && e.Kind != events.FaultEnd {
			targets[e.Target] = true
		}
		switch e.Kind {
		case events.RequestStart:
			r := &reqRec{id: e.RequestID, route: e.Route, start: e.Time}
			s.reqs = append(s.reqs, r)
			s.byID[e.RequestID] = r
		case events.RequestEnd:
			r := s.byID[e.RequestID]
			if r == nil {
				r = &reqRec{id: e.RequestID, route: e.Route, start: e.Time.Add(-e.Duration)}
				s.reqs = append(s.reqs, r)
				s.byID[e.RequestID] = r
			}
			r.ended, r.end, r.outcome, r.target = true, e.Time, e.Outcome, e.Target
			r.ttft, r.dur = e.TTFT, e.Duration
			if r.dur == 0 {
				r.dur = e.Time.Sub(r.start)
			}
		case events.AttemptStart:
			a := &attRec{req: e.RequestID, target: e.Target, start: e.Time}
			s.atts = append(s.atts, a)
			openAtt[e.RequestID] = a // a request has one attempt in flight at a time
		case events.AttemptEnd:
			a := openAtt[e.RequestID]
			if a != nil && a.target == e.Target {
				delete(openAtt, e.RequestID)
			} else {
				start := e.Time.Add(-e.Duration)
				a = &attRec{req: e.RequestID, target: e.Target, start: start}
				s.atts = append(s.atts, a)
			}
			a.ended, a.end, a.class, a.ttft, a.stream = true, e.Time, e.Class, e.TTFT, e.Stream
			a.in, a.out, a.cache, a.cost = e.InputTokens, e.OutputTokens, e.CachedTokens, e.Cost
			if a.cost == 0 {
				if p, ok := in.Prices[e.Target]; ok {
					a.cost = p.Cost(a.in, a.cache, a.out)
				}
			}
		case events.FaultStart:
			s.faults = append(s.faults, faultWin{step: e.Name, target: e.Target, kind: e.Reason, start: e.Time, end: s.end})
		case events.FaultEnd:
			for j := len(s.faults) - 1; j >= 0; j-- {
				f := &s.faults[j]
				if f.step == e.Name && f.target == e.Target && f.end.Equal(s.end) && !f.start.After(e.Time) {
					f.end = e.Time
					break
				}
			}
		case events.BreakerTransition, events.HealthChange:
			s.trans = append(s.trans, transition{t: e.Time, target: e.Target, from: normState(e.From), to: normState(e.To), kind: e.Kind})
		case events.DetectorSignal:
			s.signals = append(s.signals, transition{t: e.Time, target: e.Target, to: "detector:" + e.Name, kind: e.Kind})
		case events.ProbeResult:
			if e.Class == probeRateLimited {
				break // not a failure, not a success
			}
			if e.OK {
				probeStreak[e.Target] = 0
			} else {
				probeStreak[e.Target]++
				if probeStreak[e.Target] == probeThreshold {
					s.signals = append(s.signals, transition{t: e.Time, target: e.Target, to: "probe", kind: e.Kind})
				}
			}
		case events.BudgetExhausted:
			s.budget++
		case events.AlertFired, events.AlertResolved, events.AlertDelivered:
			s.alertEv = append(s.alertEv, *e)
		}
	}
	s.blackBox = in.BlackBox || (len(s.atts) == 0 && len(in.Journal) > 0)
	if s.blackBox && len(s.atts) == 0 {
		// Attempts as the mocks saw them.
		for _, j := range in.Journal {
			class := j.Outcome
			s.atts = append(s.atts, &attRec{req: j.RequestID, target: j.Target, start: j.Time, end: j.Time, ended: true, class: class, out: j.OutputTokens})
			targets[j.Target] = true
		}
	}
	for _, j := range in.Journal {
		targets[j.Target] = true
	}
	for _, f := range s.faults {
		targets[f.target] = true
	}
	// Link attempts to requests.
	for _, a := range s.atts {
		r := s.byID[a.req]
		if r == nil {
			continue
		}
		if r.first == nil && a.ended && a.ttft > 0 && (a.class == "ok" || (a.stream && a.out > 0)) {
			// The first attempt whose tokens reached the user (a stream
			// that failed mid-answer still showed its first token).
			r.first = a
		}
		r.attempts++
		r.cost += a.cost
		if a.ended && a.class == "ok" && (r.target == "" || r.target == a.target) {
			r.served = a
		}
	}
	// Requests: fill TTFT from the first attempt that reached the user when
	// request.end lacks it.
	for _, r := range s.reqs {
		if r.ttft == 0 && r.first != nil {
			r.ttft = r.first.start.Sub(r.start) + r.first.ttft
		}
		if r.target == "" && r.served != nil {
			r.target = r.served.target
		}
	}
	// Bad served: the last journal entry of a successful request is
	// corrupted. Only requests with a corrupted entry need looking at.
	s.bad = map[string]bool{}
	last := map[string]*JournalEntry{}
	for i := range in.Journal {
		if in.Journal[i].Corrupted {
			last[in.Journal[i].RequestID] = nil
		}
	}
	if len(last) > 0 {
		for i := range in.Journal {
			j := &in.Journal[i]
			if p, ok := last[j.RequestID]; ok && (p == nil || !j.Time.Before(p.Time)) {
				last[j.RequestID] = j
			}
		}
		for id, j := range last {
			r := s.byID[id]
			if r == nil || !r.ended || r.outcome == events.OutcomeFailed {
				continue
			}
			if j.Corrupted && (r.target == "" || j.Target == r.target) {
				s.bad[id] = true
			}
		}
	}
	for t := range targets {
		s.tgtNames = append(s.tgtNames, t)
	}
	slices.Sort(s.tgtNames)
	return s
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

func (s *scorer) binOf(t time.Time) int {
	i := int(t.Sub(s.start) / bin)
	return min(max(i, 0), s.nbins-1)
}

// prefix returns the prefix sums of a per-bin count.
type prefix []float64

func (p prefix) sum(from, to int) float64 { // bins [from, to)
	from = max(from, 0)
	to = min(to, len(p)-1)
	if to <= from {
		return 0
	}
	return p[to] - p[from]
}

func (s *scorer) series(add func(put func(t time.Time, v float64))) prefix {
	bins := make([]float64, s.nbins)
	add(func(t time.Time, v float64) {
		if t.Before(s.start) {
			return
		}
		bins[s.binOf(t)] += v
	})
	p := make(prefix, s.nbins+1)
	for i, v := range bins {
		p[i+1] = p[i] + v
	}
	return p
}

func availability(reqs []*reqRec) Availability {
	var a Availability
	for _, r := range reqs {
		if !r.ended {
			continue
		}
		a.Requests++
		switch r.outcome {
		case events.OutcomeServed:
			a.Served++
		case events.OutcomeDegraded:
			a.Degraded++
		default:
			a.Failed++
		}
	}
	if a.Requests > 0 {
		n := float64(a.Requests)
		a.ServedRate = float64(a.Served) / n
		a.DegradedRate = float64(a.Degraded) / n
		a.FailedRate = float64(a.Failed) / n
		a.Success = float64(a.Served+a.Degraded) / n
	}
	return a
}

func percentiles(ds []time.Duration) Percentiles {
	p := Percentiles{N: len(ds)}
	if len(ds) == 0 {
		return p
	}
	slices.Sort(ds)
	rank := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(len(ds)))) - 1
		return ds[min(max(i, 0), len(ds)-1)]
	}
	p.P50, p.P95, p.P99 = rank(0.50), rank(0.95), rank(0.99)
	return p
}

func ratio(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a / b
}

func (s *scorer) inAnyFault(t time.Time) bool {
	for _, f := range s.faults {
		if !t.Before(f.start) && t.Before(f.end) {
			return true
		}
	}
	return false
}

func (s *scorer) latency(base, fault []*reqRec) Latency {
	collect := func(rs []*reqRec) (ttft, total []time.Duration) {
		for _, r := range rs {
			if !r.ended || r.outcome == events.OutcomeFailed {
				continue
			}
			if r.ttft > 0 {
				ttft = append(ttft, r.ttft)
			}
			total = append(total, r.dur)
		}
		return
	}
	bt, bd := collect(base)
	ft, fd := collect(fault)
	l := Latency{
		BaselineTTFT: percentiles(bt), FaultTTFT: percentiles(ft),
		BaselineTotal: percentiles(bd), FaultTotal: percentiles(fd),
	}
	var failed []time.Duration
	for _, rs := range [][]*reqRec{base, fault} {
		for _, r := range rs {
			if r.ended && r.outcome == events.OutcomeFailed {
				failed = append(failed, r.dur)
			}
		}
	}
	l.Failed = percentiles(failed)
	l.TTFTPenalty = ratio(float64(l.FaultTTFT.P95), float64(l.BaselineTTFT.P95))
	l.TotalPenalty = ratio(float64(l.FaultTotal.P95), float64(l.BaselineTotal.P95))
	return l
}

func (s *scorer) baselineReqs() []*reqRec {
	var out []*reqRec
	for _, r := range s.reqs {
		if !s.inAnyFault(r.start) {
			out = append(out, r)
		}
	}
	return out
}

func (s *scorer) faultReqs() []*reqRec {
	var out []*reqRec
	for _, r := range s.reqs {
		if s.inAnyFault(r.start) {
			out = append(out, r)
		}
	}
	return out
}

func (s *scorer) reqsIn(from, to time.Time) []*reqRec {
	var out []*reqRec
	for _, r := range s.reqs {
		if !r.start.Before(from) && r.start.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

func (s *scorer) retry(reqs []*reqRec, from, to time.Time) Retry {
	rt := Retry{}
	for _, r := range reqs {
		rt.Requests++
		rt.Attempts += r.attempts
	}
	rt.Amplification = ratio(float64(rt.Attempts), float64(rt.Requests))
	// Peak over sliding 10s windows of request start times.
	in := func(t time.Time) bool { return !t.Before(from) && t.Before(to) }
	reqS := s.series(func(put func(time.Time, float64)) {
		for _, r := range s.reqs {
			if in(r.start) {
				put(r.start, 1)
			}
		}
	})
	attS := s.series(func(put func(time.Time, float64)) {
		for _, r := range s.reqs {
			if in(r.start) {
				put(r.start, float64(r.attempts))
			}
		}
	})
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

// counterfactual prices each served request's answering usage at its route's
// primary price.
func (s *scorer) counterfactual(reqs []*reqRec) float64 {
	total := 0.0
	for _, r := range reqs {
		if r.served == nil {
			continue
		}
		a := r.served
		if p, ok := s.in.Prices[s.primaryFor(r.route)]; ok {
			total += p.Cost(a.in, a.cache, a.out)
		} else {
			total += a.cost
		}
	}
	return total
}

func spendPerRequest(reqs []*reqRec) float64 {
	if len(reqs) == 0 {
		return 0
	}
	t := 0.0
	for _, r := range reqs {
		t += r.cost
	}
	return t / float64(len(reqs))
}

// warmupPenalty: per target, the cost of input tokens that missed the prompt
// cache beyond the target's warm hit ratio (its hit ratio over the later half
// of its attempts).
func (s *scorer) warmupPenalty() float64 {
	byT := map[string][]*attRec{}
	for _, a := range s.atts {
		if a.ended && a.in > 0 {
			byT[a.target] = append(byT[a.target], a)
		}
	}
	pen := 0.0
	for _, t := range s.tgtNames {
		as := byT[t]
		p, ok := s.in.Prices[t]
		if len(as) < 2 || !ok || p.InputPerMTok <= p.CachedInputPerMTok {
			continue
		}
		var in, cached int
		for _, a := range as[len(as)/2:] {
			in += a.in
			cached += a.cache
		}
		h := float64(cached) / float64(in)
		for _, a := range as {
			if miss := h*float64(a.in) - float64(a.cache); miss > 0 {
				pen += miss * (p.InputPerMTok - p.CachedInputPerMTok) / 1e6
			}
		}
	}
	return pen
}

func (s *scorer) overall() Overall {
	var o Overall
	o.Availability = availability(s.reqs)
	base, fault := s.baselineReqs(), s.faultReqs()
	o.Latency = s.latency(base, fault)
	o.Retry = s.retry(s.reqs, s.start, s.end.Add(time.Nanosecond))
	o.Retry.BudgetExhausted = s.budget
	c := Cost{ByTarget: map[string]float64{}}
	for _, a := range s.atts {
		c.Total += a.cost
		if a.cost != 0 {
			c.ByTarget[a.target] += a.cost
		}
	}
	c.Counterfactual = s.counterfactual(s.reqs)
	c.FallbackPremium = c.Total - c.Counterfactual
	c.Multiplier = ratio(spendPerRequest(fault), spendPerRequest(base))
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
	okTotal := 0
	for _, a := range s.atts {
		if a.ended && a.class == "ok" {
			okTotal++
		}
	}
	quality := map[string][2]int{} // pass, n
	if len(s.in.Evals) > 0 {
		for _, e := range s.in.Evals {
			q := quality[e.Target]
			q[1]++
			if e.Pass {
				q[0]++
			}
			quality[e.Target] = q
		}
	} else {
		for _, r := range s.reqs {
			if r.ended && r.outcome != events.OutcomeFailed && r.target != "" && r.served != nil {
				q := quality[r.target]
				q[1]++
				if !s.bad[r.id] {
					q[0]++
				}
				quality[r.target] = q
			}
		}
	}
	for _, t := range s.tgtNames {
		ts := TargetScore{Target: t, Classes: map[string]int{}}
		for _, a := range s.atts {
			if a.target != t {
				continue
			}
			ts.Attempts++
			ts.Cost += a.cost
			if a.ended {
				ts.Classes[a.class]++
				if a.class == "ok" {
					ts.OK++
				}
			}
		}
		for _, r := range s.reqs {
			if r.ended && r.outcome != events.OutcomeFailed && r.target == t {
				ts.Served++
				if s.bad[r.id] {
					ts.BadServed++
				}
			}
		}
		ts.Share = ratio(float64(ts.OK), float64(okTotal))
		q := quality[t]
		ts.QualityN = q[1]
		ts.Quality = 1
		if q[1] > 0 {
			ts.Quality = float64(q[0]) / float64(q[1])
		}
		ts.Openings, ts.Cycles, ts.Unhealthy, ts.FalsePositives, ts.Flaps = s.flaps(t)
		if len(ts.Classes) == 0 {
			ts.Classes = nil
		}
		out = append(out, ts)
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

// shareSeries returns per-bin counts of attempts (okOnly: successful ones) on
// target and on all targets.
func (s *scorer) shareSeries(target string, okOnly bool) (mine, all prefix) {
	pick := func(a *attRec) bool { return !okOnly || (a.ended && a.class == "ok") }
	at := func(a *attRec) time.Time {
		if okOnly {
			return a.end
		}
		return a.start
	}
	mine = s.series(func(put func(time.Time, float64)) {
		for _, a := range s.atts {
			if a.target == target && pick(a) {
				put(at(a), 1)
			}
		}
	})
	all = s.series(func(put func(time.Time, float64)) {
		for _, a := range s.atts {
			if pick(a) {
				put(at(a), 1)
			}
		}
	})
	return
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
		t := s.start.Add(time.Duration(k) * bin)
		if s.inAnyFault(t) {
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
	okS := s.series(func(put func(time.Time, float64)) {
		for _, r := range s.reqs {
			if r.ended && r.outcome != events.OutcomeFailed {
				put(r.end, 1)
			}
		}
	})
	totS := s.series(func(put func(time.Time, float64)) {
		for _, r := range s.reqs {
			if r.ended {
				put(r.end, 1)
			}
		}
	})
	base := s.baselineReqs()
	baseSpend := spendPerRequest(base)
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

		reqs := s.reqsIn(f.start, f.end)
		fs.Availability = availability(reqs)
		fs.Latency = s.latency(base, reqs)
		fs.Retry = s.retry(reqs, f.start, f.end)
		fs.CostMultiplier = ratio(spendPerRequest(reqs), baseSpend)
		for _, r := range reqs {
			if s.bad[r.id] {
				fs.BadServed++
			}
		}
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
