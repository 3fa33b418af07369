package alerts

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/brownout-dev/brownout/events"
)

// bucketWidth is the resolution of every sliding window.
const bucketWidth = 5 * time.Second

// histBuckets log-spaced TTFT buckets: upper bound of bucket i is 2^(i/4) ms.
const histBuckets = 72

// histIndexLog is the histogram bucket of d: ceil(4·log2(ms)), clamped.
func histIndexLog(d time.Duration) int {
	ms := float64(d) / float64(time.Millisecond)
	if ms <= 1 {
		return 0
	}
	i := int(math.Ceil(4 * math.Log2(ms)))
	return min(i, histBuckets-1)
}

// histFrom[i] is the shortest duration histIndexLog puts in bucket i or
// later (histIndexLog never decreases as d grows), so histIndex can compare
// instead of taking a logarithm per sample and still agree exactly.
var histFrom = func() (t [histBuckets]time.Duration) {
	for i := 1; i < histBuckets; i++ {
		lo, hi := t[i-1], time.Duration(math.MaxInt64)
		for lo < hi {
			mid := lo + (hi-lo)/2
			if histIndexLog(mid) >= i {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		t[i] = lo
	}
	return t
}()

// histStart[k] is histIndex of the shortest duration of bit length k
// (bits.Len64): from it, the index of any duration of that length is a few
// steps up histFrom, since a bucket is a quarter of a doubling wide.
var histStart = func() (t [64]uint8) {
	for k := 1; k < 64; k++ {
		t[k] = uint8(histSearch(time.Duration(1) << (k - 1)))
	}
	return t
}()

// histIndex is histIndexLog(d), by a short walk up histFrom.
func histIndex(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	i := int(histStart[bits.Len64(uint64(d))]) // d > 0: length 1 to 63
	for i < histBuckets-1 && histFrom[i+1] <= d {
		i++
	}
	return i
}

// histSearch is histIndexLog(d), by binary search in histFrom.
func histSearch(d time.Duration) int {
	lo, hi := 0, histBuckets-1 // the answer is in [lo, hi]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if histFrom[mid] <= d {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func histBound(i int) time.Duration {
	return time.Duration(math.Pow(2, float64(i)/4) * float64(time.Millisecond))
}

type bucket struct {
	idx       int64
	requests  float64
	fallbacks float64
	cost      float64
	fbCost    float64
	ttftN     uint32
	ttft      *[histBuckets]uint32 // allocated on the first sample
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// series is a sliding window of buckets, oldest first.
type series struct {
	buckets []bucket
}

func (s *series) at(t time.Time) *bucket {
	idx := t.UnixNano() / int64(bucketWidth)
	n := len(s.buckets)
	if n > 0 && s.buckets[n-1].idx == idx {
		return &s.buckets[n-1]
	}
	if n > 0 && s.buckets[n-1].idx > idx {
		// An event from the past (events may arrive slightly out of order):
		// find or insert its bucket.
		i, found := slices.BinarySearchFunc(s.buckets, idx, func(b bucket, x int64) int { return cmpInt(b.idx, x) })
		if !found {
			s.buckets = slices.Insert(s.buckets, i, bucket{idx: idx})
		}
		return &s.buckets[i]
	}
	s.buckets = append(s.buckets, bucket{idx: idx})
	return &s.buckets[len(s.buckets)-1]
}

func (s *series) prune(before time.Time) {
	idx := before.UnixNano() / int64(bucketWidth)
	i := 0
	for i < len(s.buckets) && s.buckets[i].idx < idx {
		i++
	}
	if i > 0 {
		s.buckets = append(s.buckets[:0], s.buckets[i:]...)
	}
}

// sum adds up the buckets whose start lies in [from, to).
func (s *series) sum(from, to time.Time) (b bucket, hist [histBuckets]uint32) {
	lo, hi := from.UnixNano()/int64(bucketWidth), to.UnixNano()/int64(bucketWidth)
	for i := range s.buckets {
		x := &s.buckets[i]
		if x.idx < lo || x.idx >= hi {
			continue
		}
		b.requests += x.requests
		b.fallbacks += x.fallbacks
		b.cost += x.cost
		b.fbCost += x.fbCost
		b.ttftN += x.ttftN
		if x.ttft != nil {
			for j, c := range x.ttft {
				hist[j] += c
			}
		}
	}
	return b, hist
}

func quantile(hist *[histBuckets]uint32, n uint32, q float64) time.Duration {
	if n == 0 {
		return 0
	}
	rank := uint32(math.Ceil(q * float64(n)))
	var cum uint32
	for i, c := range hist {
		cum += c
		if cum >= rank {
			return histBound(i)
		}
	}
	return histBound(histBuckets - 1)
}

// routeInfo caches what AttemptEnd and RequestEnd look up by route name.
type routeInfo struct {
	name    string
	s       *series // e.series[name]
	targets []string
}

type alertKey struct {
	rule int
	key  string
}

// Alert is one firing alert.
type Alert struct {
	Rule     string    `json:"rule"`
	Severity Severity  `json:"severity"`
	Route    string    `json:"route,omitempty"`
	Target   string    `json:"target,omitempty"`
	Since    time.Time `json:"since"`
	Value    float64   `json:"value"`
}

// Evaluator evaluates rules over observed events. It is not safe for
// concurrent use; the gateway serialises calls.
type Evaluator struct {
	rules     []Rule
	routes    map[string][]string // route → targets, primary first
	reqs      inflight
	series    map[string]*series // by route; "" is all traffic
	lastOK    lastOK
	openings  map[string][]time.Time // breaker openings by target
	demotions map[string][]time.Time // health.change to unhealthy by target
	started   time.Time
	retention time.Duration
	active    map[alertKey]*Alert

	// all is e.series[""] once it exists; known caches route for the
	// routes seen (a few are searched faster than a map is hashed), last
	// is the one seen last.
	all   *series
	known []*routeInfo
	last  *routeInfo
	// The data only some rule kinds read is kept only when a rule of that
	// kind exists: TTFT histograms, last successes, breaker openings,
	// demotions.
	useTTFT, useLastOK, useOpenings, useDemotions bool
	// useSeries: some rule reads the request and cost windows, so
	// requests are followed from start to end; without one, request
	// events only feed lastOK (when used).
	useSeries bool
}

// NewEvaluator returns an evaluator of rules. Rules are assumed valid (see
// Rule.Validate).
func NewEvaluator(rules []Rule) *Evaluator {
	e := &Evaluator{
		rules:     slices.Clone(rules),
		routes:    map[string][]string{},
		reqs:      newInflight(),
		series:    map[string]*series{},
		openings:  map[string][]time.Time{},
		demotions: map[string][]time.Time{},
		active:    map[alertKey]*Alert{},
	}
	for _, r := range rules {
		switch r.Kind {
		case TTFTPenalty:
			e.useTTFT = true
			e.useSeries = true
		case FallbackRate, SpendRate, FallbackSpendShare:
			e.useSeries = true
		case FallbackUnexercised:
			e.useLastOK = true
		case BreakerFlapping:
			e.useOpenings = true
		case DemotionFlapping:
			e.useDemotions = true
		}
		ret := r.Window.D()
		if r.Kind == TTFTPenalty && r.Baseline == 0 {
			ret += r.baselineWindow()
		}
		if r.Kind != FallbackUnexercised && ret > e.retention {
			e.retention = ret
		}
	}
	return e
}

// SetRoutes tells the evaluator each route's targets ("provider:model"), the
// primary first. Without it the primary of a request is the first target it
// tried, and fallback_unexercised has no fallbacks to watch.
func (e *Evaluator) SetRoutes(routes map[string][]string) {
	e.last, e.known = nil, nil
	e.routes = make(map[string][]string, len(routes))
	for k, v := range routes {
		e.routes[k] = slices.Clone(v)
	}
}

func (e *Evaluator) seriesFor(route string) *series {
	s := e.series[route]
	if s == nil {
		s = &series{}
		e.series[route] = s
	}
	return s
}

// route returns the series of a non-empty route and its configured
// targets, creating the series like seriesFor.
func (e *Evaluator) route(name string) *routeInfo {
	if ri := e.last; ri != nil && ri.name == name {
		return ri
	}
	for _, ri := range e.known {
		if ri.name == name {
			e.last = ri
			return ri
		}
	}
	ri := &routeInfo{name: name, s: e.seriesFor(name), targets: e.routes[name]}
	if len(e.known) < maxKnownRoutes {
		e.known = append(e.known, ri)
	}
	e.last = ri
	return ri
}

// maxKnownRoutes bounds the routes route caches: past it a route seen
// again is looked up in the maps again.
const maxKnownRoutes = 16

// allSeries is seriesFor("").
func (e *Evaluator) allSeries() *series {
	if e.all == nil {
		e.all = e.seriesFor("")
	}
	return e.all
}

func (e *Evaluator) primary(route string, rs *reqState) string {
	if ts := e.routes[route]; len(ts) > 0 {
		return ts[0]
	}
	if rs != nil {
		return rs.first
	}
	return ""
}

// primaryOf is primary for a route looked up with route (ri nil for "").
func (e *Evaluator) primaryOf(ri *routeInfo, rs *reqState) string {
	if ri == nil {
		return e.primary("", rs)
	}
	if len(ri.targets) > 0 {
		return ri.targets[0]
	}
	if rs != nil {
		return rs.first
	}
	return ""
}

// Observe feeds one event. Events of kinds no rule uses are ignored.
func (e *Evaluator) Observe(ev events.Event) { e.ObserveEvent(&ev) }

// ObserveEvent is Observe with the event passed by reference, which spares
// the caller a copy of it per event. The evaluator keeps no reference to
// ev.
func (e *Evaluator) ObserveEvent(ev *events.Event) {
	if e.started.IsZero() || ev.Time.Before(e.started) {
		e.started = ev.Time
	}
	if !e.useSeries {
		switch {
		case ev.Kind == events.AttemptEnd && ev.Class == "ok" && e.useLastOK:
			e.lastOK.set(ev.Target, ev.Time)
		case ev.Kind == events.BreakerTransition && e.useOpenings && ev.To == "open":
			e.openings[ev.Target] = append(e.openings[ev.Target], ev.Time)
		case ev.Kind == events.HealthChange && e.useDemotions && ev.To == unhealthy:
			e.demotions[ev.Target] = append(e.demotions[ev.Target], ev.Time)
		}
		return
	}
	switch ev.Kind {
	case events.RequestStart:
		rs := e.reqs.put(ev.RequestID) // zeroed also for an id used again
		rs.route, rs.start = ev.Route, ev.Time
	case events.AttemptStart:
		rs := e.reqs.get(ev.RequestID)
		if rs != nil && rs.first == "" {
			rs.first = ev.Target
		}
	case events.AttemptEnd:
		rs := e.reqs.get(ev.RequestID)
		route := ev.Route
		if route == "" && rs != nil {
			route = rs.route
		}
		if rs != nil && rs.first == "" {
			rs.first = ev.Target
		}
		var ri *routeInfo
		if route != "" {
			ri = e.route(route)
		}
		fallback := ev.Target != e.primaryOf(ri, rs)
		hist := -1 // the TTFT bucket of a successful attempt
		if e.useTTFT && ev.Class == "ok" && ev.TTFT > 0 {
			hist = histIndex(ev.TTFT)
		}
		s := e.allSeries()
		for {
			b := s.at(ev.Time)
			b.cost += ev.Cost
			if fallback {
				b.fbCost += ev.Cost
			}
			if hist >= 0 {
				if b.ttft == nil {
					b.ttft = new([histBuckets]uint32)
				}
				b.ttft[hist]++
				b.ttftN++
			}
			if ri == nil || s == ri.s {
				break
			}
			s = ri.s
		}
		if ev.Class == "ok" {
			if e.useLastOK {
				e.lastOK.set(ev.Target, ev.Time)
			}
			if rs != nil {
				rs.servedBy = ev.Target
			}
		}
	case events.RequestEnd:
		slot := e.reqs.find(ev.RequestID)
		var rs *reqState
		if slot >= 0 {
			rs = &e.reqs.slots[slot].rs
		}
		route := ev.Route
		if route == "" && rs != nil {
			route = rs.route
		}
		served := ev.Target
		if served == "" && rs != nil {
			served = rs.servedBy
		}
		var ri *routeInfo
		if route != "" {
			ri = e.route(route)
		}
		fallback := ev.Outcome != events.OutcomeServed || served == "" || served != e.primaryOf(ri, rs)
		if slot >= 0 {
			e.reqs.remove(slot)
		}
		s := e.allSeries()
		for {
			b := s.at(ev.Time)
			b.requests++
			if fallback {
				b.fallbacks++
			}
			if ri == nil || s == ri.s {
				break
			}
			s = ri.s
		}
	case events.BreakerTransition:
		if e.useOpenings && ev.To == "open" {
			e.openings[ev.Target] = append(e.openings[ev.Target], ev.Time)
		}
	case events.HealthChange:
		if e.useDemotions && ev.To == unhealthy {
			e.demotions[ev.Target] = append(e.demotions[ev.Target], ev.Time)
		}
	}
}

// Firing returns the alerts firing now, ordered by rule then key.
func (e *Evaluator) Firing() []Alert {
	keys := make([]alertKey, 0, len(e.active))
	for k := range e.active {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b alertKey) int {
		if a.rule != b.rule {
			return a.rule - b.rule
		}
		if a.key < b.key {
			return -1
		}
		if a.key > b.key {
			return 1
		}
		return 0
	})
	out := make([]Alert, len(keys))
	for i, k := range keys {
		out[i] = *e.active[k]
	}
	return out
}

// Evaluate checks every rule at now and returns alert.fired and
// alert.resolved events for the alerts that changed state, in rule order.
func (e *Evaluator) Evaluate(now time.Time) []events.Event {
	var out []events.Event
	for i, r := range e.rules {
		for _, c := range e.check(now, r) {
			k := alertKey{i, c.key}
			a := e.active[k]
			switch {
			case c.firing && a == nil:
				a = &Alert{Rule: r.Name, Severity: r.Severity, Since: now, Value: c.value}
				if r.Kind == FallbackUnexercised || r.Kind == BreakerFlapping || r.Kind == DemotionFlapping {
					a.Target = c.key
				} else {
					a.Route = c.key
				}
				e.active[k] = a
				out = append(out, e.event(events.AlertFired, now, a, c.reason))
			case c.firing:
				a.Value = c.value
			case !c.firing && a != nil:
				delete(e.active, k)
				a.Value = c.value
				out = append(out, e.event(events.AlertResolved, now, a, c.reason))
			}
		}
	}
	e.prune(now)
	return out
}

func (e *Evaluator) event(kind events.Kind, now time.Time, a *Alert, reason string) events.Event {
	return events.Event{Time: now, Kind: kind, Name: a.Rule, Severity: string(a.Severity),
		Route: a.Route, Target: a.Target, Value: a.Value, Reason: reason}
}

type verdict struct {
	key    string
	firing bool
	value  float64
	reason string
}

func (e *Evaluator) routeKeys(r Rule) []string {
	if r.Route != "" {
		return []string{r.Route}
	}
	keys := make([]string, 0, len(e.series))
	for k := range e.series {
		if k != "" {
			keys = append(keys, k)
		}
	}
	for k := range e.routes {
		if _, ok := e.series[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func (e *Evaluator) check(now time.Time, r Rule) []verdict {
	w := r.Window.D()
	from := now.Add(-w)
	var out []verdict
	switch r.Kind {
	case FallbackRate:
		for _, route := range e.routeKeys(r) {
			s := e.series[route]
			if s == nil {
				out = append(out, verdict{key: route})
				continue
			}
			b, _ := s.sum(from, now.Add(bucketWidth))
			v := verdict{key: route}
			if b.requests > 0 {
				v.value = b.fallbacks / b.requests
			}
			v.firing = b.requests >= float64(r.minRequests()) && v.value > float64(r.Threshold)
			v.reason = fmt.Sprintf("fallback rate %.1f%% (%d of %d requests) over %s, threshold %.1f%%",
				100*v.value, int(b.fallbacks), int(b.requests), w, 100*float64(r.Threshold))
			out = append(out, v)
		}
	case TTFTPenalty:
		for _, route := range e.routeKeys(r) {
			s := e.series[route]
			v := verdict{key: route}
			if s == nil {
				out = append(out, v)
				continue
			}
			cur, hist := s.sum(from, now.Add(bucketWidth))
			p95 := quantile(&hist, cur.ttftN, 0.95)
			base := r.Baseline.D()
			if base == 0 {
				bb, bh := s.sum(from.Add(-r.baselineWindow()), from)
				if bb.ttftN >= uint32(r.minRequests()) {
					base = quantile(&bh, bb.ttftN, 0.95)
				}
			}
			if base > 0 && cur.ttftN > 0 {
				v.value = float64(p95) / float64(base)
			}
			v.firing = base > 0 && cur.ttftN >= uint32(r.minRequests()) && v.value > float64(r.Threshold)
			v.reason = fmt.Sprintf("p95 TTFT %s over %s is %.2f× the baseline %s, threshold %.2f×",
				p95, w, v.value, base, float64(r.Threshold))
			out = append(out, v)
		}
	case SpendRate, FallbackSpendShare:
		s := e.series[r.Route]
		v := verdict{key: r.Route}
		if s != nil {
			b, _ := s.sum(from, now.Add(bucketWidth))
			if r.Kind == SpendRate {
				v.value = b.cost * float64(time.Hour) / float64(w)
				v.firing = v.value > float64(r.Threshold)
				v.reason = fmt.Sprintf("spend rate $%.4f/h over %s, budget $%.4f/h", v.value, w, float64(r.Threshold))
			} else {
				if b.cost > 0 {
					v.value = b.fbCost / b.cost
				}
				v.firing = v.value > float64(r.Threshold)
				v.reason = fmt.Sprintf("fallback spend share %.1f%% ($%.4f of $%.4f) over %s, threshold %.1f%%",
					100*v.value, b.fbCost, b.cost, w, 100*float64(r.Threshold))
			}
		}
		out = append(out, v)
	case FallbackUnexercised:
		for _, t := range e.fallbackTargets(r) {
			last, ok := e.lastOK.get(t)
			if !ok {
				last = e.started
			}
			idle := now.Sub(last)
			v := verdict{key: t, value: idle.Seconds()}
			v.firing = !last.IsZero() && idle > w
			v.reason = fmt.Sprintf("fallback %s served no request for %s (bound %s)", t, idle.Round(time.Second), w)
			out = append(out, v)
		}
	case BreakerFlapping:
		out = flaps(out, e.openings, r, from, now, "breaker of %s opened %d times in %s, bound %d")
	case DemotionFlapping:
		out = flaps(out, e.demotions, r, from, now, "%s demoted %d times in %s, bound %d")
	}
	return out
}

// flaps appends a verdict per target of byTarget (or r.Target): the count
// of its times in [from, now] against r.Threshold. format takes the target,
// the count, the window and the bound.
func flaps(out []verdict, byTarget map[string][]time.Time, r Rule, from, now time.Time, format string) []verdict {
	keys := make([]string, 0, len(byTarget))
	if r.Target != "" {
		keys = append(keys, r.Target)
	} else {
		for k := range byTarget {
			keys = append(keys, k)
		}
		slices.Sort(keys)
	}
	for _, t := range keys {
		n := 0
		for _, at := range byTarget[t] {
			if !at.Before(from) && !at.After(now) {
				n++
			}
		}
		v := verdict{key: t, value: float64(n)}
		v.firing = float64(n) > float64(r.Threshold)
		v.reason = fmt.Sprintf(format, t, n, r.Window.D(), int(r.Threshold))
		out = append(out, v)
	}
	return out
}

func (e *Evaluator) fallbackTargets(r Rule) []string {
	if r.Target != "" {
		return []string{r.Target}
	}
	seen := map[string]bool{}
	var out []string
	for route, ts := range e.routes {
		if r.Route != "" && route != r.Route {
			continue
		}
		for _, t := range ts[min(1, len(ts)):] {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (e *Evaluator) prune(now time.Time) {
	keep := now.Add(-e.retention - bucketWidth)
	for _, s := range e.series {
		s.prune(keep)
	}
	pruneTimes(e.openings, now.Add(-e.keepFor(BreakerFlapping)))
	pruneTimes(e.demotions, now.Add(-e.keepFor(DemotionFlapping)))
	// Requests that never ended (a lost request.end) must not leak.
	e.reqs.removeIf(func(rs *reqState) bool { return now.Sub(rs.start) > time.Hour })
}

// keepFor is the longest window of the rules of kind k.
func (e *Evaluator) keepFor(k Kind) time.Duration {
	var keep time.Duration
	for _, r := range e.rules {
		if r.Kind == k && r.Window.D() > keep {
			keep = r.Window.D()
		}
	}
	return keep
}

// pruneTimes drops the times before keep, and the targets left with none.
func pruneTimes(byTarget map[string][]time.Time, keep time.Time) {
	for t, ts := range byTarget {
		i := 0
		for i < len(ts) && ts[i].Before(keep) {
			i++
		}
		if i == len(ts) {
			delete(byTarget, t)
		} else {
			byTarget[t] = ts[i:]
		}
	}
}

// unhealthy is the health.change To of a demotion (policy.Unhealthy; the
// policy package is not imported for one string).
const unhealthy = "unhealthy"
