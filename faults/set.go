package faults

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// Active is a fault in a Set: its spec, when it was activated and its counters.
type Active struct {
	ID    string    `json:"id"`
	Spec  Spec      `json:"spec"`
	Since time.Time `json:"since"`
	// Matched counts requests that passed the static selectors inside the
	// window; Applied counts those the fault was applied to.
	Matched int `json:"matched"`
	Applied int `json:"applied"`

	fault Fault
	seq   int
	// ids is []string{ID}, the FaultIDs of a plan only this fault
	// touched (shared, read-only; capped so an append copies).
	ids []string
}

// Set is the faults active on one provider. It is not safe for concurrent
// use; the provider model serializes access.
type Set struct {
	active []*Active
	seq    int
	// selected is Apply's scratch selection.
	selected []*Active
}

// Add validates and activates a fault at now and returns its id (the spec's
// ID, or "f1", "f2"... when empty). Adding an id that is active replaces it.
// A fault added at the zero time is activated by the first request it sees
// (so the time windows of faults listed in a providers file start with the
// traffic).
func (s *Set) Add(now time.Time, spec Spec) (string, error) {
	f, err := New(spec)
	if err != nil {
		return "", err
	}
	s.seq++
	if spec.ID == "" {
		spec.ID = "f" + strconv.Itoa(s.seq)
		for s.find(spec.ID) >= 0 {
			s.seq++
			spec.ID = "f" + strconv.Itoa(s.seq)
		}
	}
	a := &Active{ID: spec.ID, Spec: spec, Since: now, fault: f, seq: s.seq}
	a.ids = []string{a.ID}
	if i := s.find(spec.ID); i >= 0 {
		s.active[i] = a
	} else {
		s.active = append(s.active, a)
	}
	// Keep application order: kind order, then activation order.
	sort.SliceStable(s.active, func(i, j int) bool {
		oi, oj := order(s.active[i].Spec.Kind), order(s.active[j].Spec.Kind)
		if oi != oj {
			return oi < oj
		}
		return s.active[i].seq < s.active[j].seq
	})
	return spec.ID, nil
}

func (s *Set) find(id string) int {
	for i, a := range s.active {
		if a.ID == id {
			return i
		}
	}
	return -1
}

// Remove deactivates the fault with id and reports whether it was active.
func (s *Set) Remove(id string) bool {
	i := s.find(id)
	if i < 0 {
		return false
	}
	s.active = append(s.active[:i], s.active[i+1:]...)
	return true
}

// Reset removes every fault.
func (s *Set) Reset() { s.active = nil }

// MatchesHeaders reports whether any active fault selects on request
// headers, so callers can skip collecting them otherwise.
func (s *Set) MatchesHeaders() bool {
	for _, a := range s.active {
		if len(a.Spec.Header) > 0 {
			return true
		}
	}
	return false
}

// Len returns the number of active faults.
func (s *Set) Len() int { return len(s.active) }

// List returns copies of the active faults, in application order.
func (s *Set) List() []Active {
	out := make([]Active, len(s.active))
	for i, a := range s.active {
		out[i] = *a
	}
	return out
}

// Select returns the faults that apply to the request described by e at now,
// in application order, and advances their counters. Probabilities are drawn
// from e.Rand (one draw per fault that reaches its probability check with a
// probability strictly between 0 and 1), so the same seed and the same
// requests select the same faults.
func (s *Set) Select(now time.Time, e *Env) []*Active {
	return s.selectInto(nil, now, e)
}

// selectInto is Select, appending to out.
func (s *Set) selectInto(out []*Active, now time.Time, e *Env) []*Active {
	for _, a := range s.active {
		if a.Since.IsZero() {
			a.Since = now // activated by its first request
		}
		sel := &a.Spec.Selector
		// Concurrent requests reach Select in any order, so now may lie a
		// little before Since (the first request's time); such a request is
		// treated as arriving at activation, as x/time/rate copes with time
		// going backwards.
		elapsed := max(now.Sub(a.Since), 0)
		if !sel.inWindow(elapsed) || !sel.matchStatic(e) {
			continue
		}
		if m, ok := a.fault.(Matcher); ok && !m.Matches(e) {
			continue
		}
		a.Matched++
		if sel.First > 0 && a.Matched > sel.First {
			continue
		}
		if sel.Every > 0 && a.Matched%sel.Every != 0 {
			continue
		}
		p := sel.probability(elapsed)
		if p <= 0 || (p < 1 && e.Rand.Float64() >= p) {
			continue
		}
		a.Applied++
		out = append(out, a)
	}
	return out
}

// Apply applies the selected faults to p in order, stopping once the plan is
// terminal, and records their kinds and ids in p.Fault and p.FaultIDs.
// p.FaultIDs may be shared with other plans: it is read-only.
func Apply(selected []*Active, p *Plan, e *Env) {
	applied := 0
	for _, a := range selected {
		if p.Terminal() {
			break
		}
		a.fault.Apply(p, e)
		applied++
	}
	switch {
	case applied == 0:
	case applied == 1 && p.Fault == "" && len(p.FaultIDs) == 0:
		// The common case, without allocating.
		p.Fault, p.FaultIDs = string(selected[0].Spec.Kind), selected[0].ids
	default:
		var b strings.Builder
		b.WriteString(p.Fault)
		ids := make([]string, 0, len(p.FaultIDs)+applied)
		ids = append(ids, p.FaultIDs...)
		for _, a := range selected[:applied] {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(string(a.Spec.Kind))
			ids = append(ids, a.ID)
		}
		p.Fault, p.FaultIDs = b.String(), ids
	}
}

// Apply selects and applies the set's faults to p; it is Select then Apply.
func (s *Set) Apply(now time.Time, p *Plan, e *Env) {
	if len(s.active) == 0 {
		return
	}
	s.selected = s.selectInto(s.selected[:0], now, e)
	Apply(s.selected, p, e)
	clear(s.selected) // hold no removed fault
}
