package scenarios

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
// caused after its start. A step that starts while its target is already
// demoted is masked by the step that demoted it: its detection is the first
// whose class matches this fault's. A target with no attempts and no
// detection during the step is not exercised.
func (s *scorer) detect(fs *FaultScore, f faultWin) {
	if s.blackBox {
		s.trafficShift(fs, f)
	} else {
		masked := s.demotedAt(f.target, f.start)
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

// demotedAt reports whether target's breaker is open or its health down
// just before t, by the transitions before t.
func (s *scorer) demotedAt(target string, t time.Time) bool {
	breaker, health := "", ""
	for _, tr := range s.trans {
		if tr.target != target || !tr.t.Before(t) {
			continue
		}
		if tr.kind == events.BreakerTransition {
			breaker = tr.to
		} else {
			health = tr.to
		}
	}
	return breaker == "open" || health == "unhealthy" || health == "down"
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
		if masked && !s.matches(f, tr) {
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
