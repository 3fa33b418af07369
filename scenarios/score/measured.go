package score

import (
	"slices"
	"strings"
)

// scoreNames are the scores an expectation can name, by the expectation's
// name (an alert expectation is "alerts").
var scoreNames = []string{
	"alerts", "attempts", "availability", "bad_served", "breach_time", "cost_multiplier", "degraded", "detected",
	"detected_by", "fail_time_p95", "failed", "false_alarms", "first_mitigation", "flaps", "good", "latency_penalty", "load_ratio",
	"peak_retry_amplification", "quality", "relapses", "retry_amplification", "share", "ttd", "ttft_p95",
	"ttm", "ttr", "unnecessary_fallback",
}

// Why a score is not measured.
const (
	WhyBlackBoxEvents = "a black-box gateway reports no breaker, health, detector, probe or alert events"
	whyNoPrimary      = "a black box does not say which target is its primary: set gateway.primary"
	whyNoPrices       = "no prices: neither the gateway config nor the providers file prices a target"
	whyNoRequestIDs   = "the gateway forwarded no X-Request-Id: the mocks' journals cannot be tied to user requests"
	whyNoServingTgt   = "no answer named the target that served it (no journal entry by request id, no known model in the response)"
)

// Unmeasurable returns the scores a configuration cannot measure, with
// why: a black box's events, its degraded answers without a primary, cost
// without prices. validate reports an expectation on one as a scenario
// error; detected_by traffic_shift is measured in a black box.
func Unmeasurable(blackBox, primaryKnown bool, prices map[string]Price) map[string]string {
	out := map[string]string{}
	if blackBox {
		for _, n := range []string{"alerts", "flaps", "detected_by", "false_alarms"} {
			out[n] = WhyBlackBoxEvents
		}
		if !primaryKnown {
			out["degraded"] = whyNoPrimary
		}
	}
	priced := false
	for _, p := range prices {
		if p != (Price{}) {
			priced = true
		}
	}
	if !priced {
		out["cost_multiplier"] = whyNoPrices
	}
	return out
}

// measured says, for every score, whether this run measured it: what the
// configuration cannot measure, and what this black box did not show (its
// requests' ids, the targets that served them, prices of targets it used).
func (s *scorer) measured() map[string]Measure {
	out := make(map[string]Measure, len(scoreNames))
	for _, n := range scoreNames {
		out[n] = Measure{Measured: true}
	}
	not := func(why string, names ...string) {
		for _, n := range names {
			out[n] = Measure{Why: why}
		}
	}
	primaryKnown := len(s.in.Primary) > 0 || s.in.PrimaryTarget != ""
	for n, why := range Unmeasurable(s.blackBox, primaryKnown, s.in.Prices) {
		not(why, n)
	}
	if s.blackBox && len(s.atts) > 0 && s.linked == 0 {
		not(whyNoRequestIDs, "bad_served", "quality", "retry_amplification", "peak_retry_amplification")
	}
	if s.blackBox && primaryKnown {
		served, named := 0, 0
		for i := range s.reqs {
			if r := &s.reqs[i]; r.ended && r.outcome != outFailed {
				served++
				if r.target != 0 {
					named++
				}
			}
		}
		if served > 0 && named == 0 {
			not(whyNoServingTgt, "degraded")
		}
	}
	if len(s.unpriced) > 0 && out["cost_multiplier"].Measured {
		u := slices.Compact(slices.Sorted(slices.Values(s.unpriced)))
		not("no price for "+strings.Join(u, ", ")+" (neither the gateway config nor the providers file prices it)", "cost_multiplier")
	}
	return out
}
