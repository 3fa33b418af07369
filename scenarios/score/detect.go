package score

import (
	"slices"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/events"
)

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

// detect scores a fault's detection: the first detection about its target
// caused after its start that can be this fault's. A detection whose reason
// names a signal (an SLA kind, a detector) counts only for the faults that
// signal names. A step that starts while its target is already demoted by a
// signal that can be its own is masked by the step that demoted it: its
// detection is the first whose class matches this fault's. A target with no
// attempts and no detection during the step is not exercised.
func (s *scorer) detect(fs *FaultScore, f faultWin) {
	if s.blackBox {
		s.trafficShift(fs, f)
	} else {
		masked := s.demotedAt(f, f.start)
		if masked {
			fs.Masked, fs.MaskedBy = true, s.maskedBy(f)
		}
		if d, ok := s.firstDetection(f, masked); ok {
			fs.Detected, fs.TTD, fs.DetectedBy = true, d.t.Sub(f.start), d.to
		}
	}
	if !fs.Detected && !s.exercised(f) {
		fs.NotExercised = true
	}
}

// demotedAt reports whether f's target's breaker is open or its health down
// just before t, by the transitions before t, for a reason that can be f's
// own signal: a target demoted for a slow first token is not demoted for a
// token-rate fault that starts meanwhile.
func (s *scorer) demotedAt(f faultWin, t time.Time) bool {
	var breaker, health transition
	for _, tr := range s.trans {
		if tr.target != f.target || !tr.t.Before(t) {
			continue
		}
		if tr.kind == events.BreakerTransition {
			breaker = tr
		} else {
			health = tr
		}
	}
	open := breaker.to == "open" && !otherSignal(f.kind, breaker.reason)
	down := (health.to == "unhealthy" || health.to == "down") && !otherSignal(f.kind, health.reason)
	return open || down
}

// signalKinds are the fault kinds each named detection reason can be
// caused by: the gateway's SLA cutoffs and the output detectors. A reason
// missing here (passive health's "failures", a breaker's error rate, a
// probe) names no signal; its class is read from the failed attempts.
var signalKinds = map[string][]string{
	"sla_first_token":           {"ttft", "slow_headers", "no_response"},
	"sla_time_per_output_token": {"token_rate", "stall"},
	"finish_length":             {"truncate"},
	"token_wall":                {"truncate"},
	"json_invalid":              {"malformed_json_content", "truncate"},
	"refusal_rate":              {"refusal", "content_filter"},
	"empty_tool_args":           {"empty_tool_args", "truncate"},
}

// otherSignal reports whether reason names a signal that a fault of kind
// cannot cause (a kind unknown to the scorer is caused by anything).
func otherSignal(kind, reason string) bool {
	kinds, named := signalKinds[reason]
	if !named {
		return false
	}
	if _, known := faultClasses[kind]; !known {
		return false
	}
	return !slices.Contains(kinds, kind)
}

// maskedBy names the step that demoted f's target before f started: the
// latest other fault on it that started before f did ("" for none: a
// demotion outside every fault).
func (s *scorer) maskedBy(f faultWin) string {
	by, at := "", time.Time{}
	for _, g := range s.faults {
		if g.target == f.target && g.step != f.step && g.start.Before(f.start) && !g.start.Before(at) {
			by, at = g.step, g.start
		}
	}
	return by
}

// firstDetection returns the first detection of f's target in
// [f.start, f.end]: a detector signal, a probe threshold crossing, a breaker
// opening or a health demotion, named in to. Masked, only a detection whose
// class matches f's kind counts.
func (s *scorer) firstDetection(f faultWin, masked bool) (transition, bool) {
	best := transition{}
	found := false
	consider := func(tr transition, by string) {
		if tr.target != f.target || tr.t.Before(f.start) || tr.t.After(f.end) {
			return
		}
		if found && !tr.t.Before(best.t) {
			return
		}
		if otherSignal(f.kind, tr.reason) || (masked && !s.matches(f, tr)) {
			return
		}
		best, found = tr, true
		best.to = by
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
	return best, found
}

// exercised reports whether f's target received an attempt during f.
func (s *scorer) exercised(f faultWin) bool {
	ti, ok := s.names.find(f.target)
	if !ok {
		return false
	}
	for i := range s.atts {
		if a := &s.atts[i]; a.tgt == ti && a.start >= f.from && a.start < f.to {
			return true
		}
	}
	return false
}

// faultClasses are the attempt outcome classes each fault kind causes; a
// kind missing here matches every detection.
var faultClasses = map[string][]string{
	"http_error":             {"rate_limited", "overloaded", "server_error"},
	"reset":                  {"reset", "connect_error", "cut_mid_stream"},
	"kill":                   {"reset", "connect_error", "cut_mid_stream"},
	"no_response":            {"timeout_ttft", "timeout_total", "connect_error"},
	"ttft":                   {"timeout_ttft", "timeout_total"},
	"slow_headers":           {"timeout_ttft", "timeout_total"},
	"token_rate":             {"token_rate_floor", "stall", "timeout_total"},
	"stall":                  {"stall", "timeout_total"},
	"cut":                    {"cut_mid_stream"},
	"malformed_chunk":        {"malformed_stream"},
	"missing_done":           {"malformed_stream", "cut_mid_stream"},
	"truncate":               {"truncated", "invalid_output"},
	"malformed_json_content": {"invalid_output"},
	"empty_tool_args":        {"invalid_output"},
	"quality_drop":           {"invalid_output"},
	"refusal":                {"invalid_output", "content_filter"},
	"content_filter":         {"content_filter"},
	"auth_failure":           {"auth"},
	"reject_param":           {"bad_request_param"},
	"context_length":         {"context_length"},
}

// contentKinds are the fault kinds that output checks (detectors) detect.
var contentKinds = map[string]bool{
	"truncate": true, "malformed_json_content": true, "empty_tool_args": true, "quality_drop": true, "refusal": true,
}

// matches reports whether a detection's class matches f's kind: a detector
// signal for a content fault; a probe whose failing class the kind causes;
// a breaker opening or health demotion whose target's latest failed attempt
// since f started (ended at or before it) has such a class.
func (s *scorer) matches(f faultWin, tr transition) bool {
	classes, known := faultClasses[f.kind]
	if !known {
		return true
	}
	switch tr.kind {
	case events.DetectorSignal:
		return contentKinds[f.kind]
	case events.ProbeResult:
		return slices.Contains(classes, tr.from)
	}
	c, ok := s.lastFailure(f, s.off(tr.t))
	return ok && slices.Contains(classes, c)
}

// lastFailure returns the class of f's target's latest failed attempt that
// ended in [f.start, t].
func (s *scorer) lastFailure(f faultWin, t int64) (string, bool) {
	ti, ok := s.names.find(f.target)
	if !ok {
		return "", false
	}
	best, class := int64(0), int32(-1)
	for i := range s.atts {
		a := &s.atts[i]
		if a.tgt == ti && a.ended && !a.ok && a.end >= f.from && a.end <= t && (class < 0 || a.end >= best) {
			best, class = a.end, a.class
		}
	}
	if class < 0 {
		return "", false
	}
	return s.classes.names[class], true
}

// trafficShift: when the black box moved user requests off f's target. By
// requests, two figures: the share of requests whose first attempt went to
// the target (the gateway stopped trying it first) and the share of served
// requests it served (users were answered elsewhere), each from the first
// window end after which it stays below half its baseline until the fault
// ends; TTD is the earlier. Without request ids in the journals and without
// answers naming their target, it falls back to the target's share of
// attempts (calls).
func (s *scorer) trafficShift(fs *FaultScore, f faultWin) {
	if s.shiftedBefore(f) {
		// Masked: the target was already out of traffic as the fault
		// started; its TTD would be 0s, so it is "not re-detected".
		fs.Masked, fs.MaskedBy = true, s.maskedBy(f)
		return
	}
	sh := s.requestShares(f.target)
	if !sh.hasFirst && !sh.hasServed {
		mine, all := s.shareSeries(f.target, false)
		if d, ok := s.shift(f, mine, all); ok {
			fs.Detected, fs.DetectedBy, fs.TTD = true, "traffic_shift", d
		}
		return
	}
	if d, ok := s.shift(f, sh.firstMine, sh.firstAll); ok && sh.hasFirst {
		fs.ShiftFirst = &d
	}
	if d, ok := s.shift(f, sh.servedMine, sh.servedAll); ok && sh.hasServed {
		fs.ShiftServed = &d
	}
	for _, d := range []*time.Duration{fs.ShiftFirst, fs.ShiftServed} {
		if d != nil && (!fs.Detected || *d < fs.TTD) {
			fs.Detected, fs.DetectedBy, fs.TTD = true, "traffic_shift", *d
		}
	}
}

// shift returns when the share mine/all fell below half its baseline
// share for good during f: the first window end from which it stays there
// until f ends (windows without traffic do not count either way).
// shiftedBefore reports whether f's target had already lost half its
// baseline share of traffic in the SLO window before f started, by every
// measure the black box allows.
func (s *scorer) shiftedBefore(f faultWin) bool {
	sh := s.requestShares(f.target)
	var ms, as []prefix
	if sh.hasFirst {
		ms, as = append(ms, sh.firstMine), append(as, sh.firstAll)
	}
	if sh.hasServed {
		ms, as = append(ms, sh.servedMine), append(as, sh.servedAll)
	}
	if len(ms) == 0 {
		mine, all := s.shareSeries(f.target, false)
		ms, as = append(ms, mine), append(as, all)
	}
	w := int(s.slo.Window / bin)
	lo := s.binOf(f.start)
	for i := range ms {
		baseline := s.baselineShare(f, ms[i], as[i])
		n := as[i].sum(lo-w, lo)
		if baseline == 0 || n == 0 || ms[i].sum(lo-w, lo)/n >= baseline/2 {
			return false
		}
	}
	return true
}

func (s *scorer) shift(f faultWin, mine, all prefix) (time.Duration, bool) {
	baseline := s.baselineShare(f, mine, all)
	if baseline == 0 {
		return 0, false
	}
	w := int(s.slo.Window / bin)
	lo, hi := s.binOf(f.start), s.binOf(f.end)
	if n := all.sum(lo-w, lo); n > 0 && mine.sum(lo-w, lo)/n < baseline/2 {
		// Traffic had left the target before the fault started (a
		// healthy target demoted in the baseline): nothing the fault
		// caused, never a detection of it.
		return 0, false
	}
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
	if first < 0 {
		return 0, false
	}
	return s.start.Add(time.Duration(first) * bin).Sub(f.start), true
}

// reqShares are per-bin counts of user requests by start: those whose
// first attempt went to a target and those with a known first attempt;
// those the target served and those served by a known target.
type reqShares struct {
	firstMine, firstAll, servedMine, servedAll prefix
	hasFirst, hasServed                        bool
}

// requestShares counts a black box's user requests for target's traffic
// shift: the first attempt of each from the journals (by request id), its
// serving target from the journals or the answer.
func (s *scorer) requestShares(target string) reqShares {
	ti, _ := s.names.find(target)
	first := make([]int32, len(s.reqs)) // attempt index + 1, 0 for none
	for i := range s.atts {
		a := &s.atts[i]
		if a.ri < 0 {
			continue
		}
		if f := first[a.ri]; f == 0 || a.start < s.atts[f-1].start {
			first[a.ri] = int32(i) + 1
		}
	}
	fm, fa, sm, sa := s.newBins(), s.newBins(), s.newBins(), s.newBins()
	var out reqShares
	for i := range s.reqs {
		r := &s.reqs[i]
		if r.start < 0 {
			continue
		}
		b := s.binAt(r.start)
		if f := first[i]; f > 0 {
			out.hasFirst = true
			fa[b]++
			if s.atts[f-1].tgt == ti {
				fm[b]++
			}
		}
		if r.ended && r.outcome != outFailed && r.target != 0 {
			out.hasServed = true
			sa[b]++
			if r.target == ti {
				sm[b]++
			}
		}
	}
	out.firstMine, out.firstAll, out.servedMine, out.servedAll = counts(fm), counts(fa), counts(sm), counts(sa)
	return out
}
