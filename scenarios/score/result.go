package score

import (
	"time"

	"github.com/brownout-dev/brownout/events"
)

// SchemaVersion is the version of the [Result] JSON schema (result.json). It
// changes only when a field is renamed or removed or its meaning changes;
// adding fields keeps the version.
//
// Version 2 (issue 14): TTM reads good requests (the SLO's correctness and
// latency parts), TTD counts only detections caused after a step's start
// (no "already_open"), latency percentiles are of streamed (TTFT) and
// non-streamed (total) requests apart, and flaps are oscillations and
// false positives (re-detections apart).
const SchemaVersion = 2

// Mode says how a scenario was run.
type Mode string

// Run modes.
const (
	ModeSim  Mode = "sim"  // discrete-event simulation in virtual time
	ModeLive Mode = "live" // real HTTP on loopback, real time
)

// Result is everything a game day measured: the scores of every fault step and
// target, overall scores, and the verdict of each expectation. It is plain data
// and round-trips through encoding/json; durations are nanoseconds in fields
// whose JSON name ends in _ns. reports renders it.
type Result struct {
	Schema   int    `json:"schema"` // SchemaVersion
	Scenario string `json:"scenario"`
	File     string `json:"file,omitempty"`
	// Source is the scenario file's text, so a report can show it.
	Source string `json:"source,omitempty"`
	Mode   Mode   `json:"mode"`
	Seed   uint64 `json:"seed"`
	// Versions of what ran: "brownout" and, in live black-box runs, "gateway".
	Versions map[string]string `json:"versions,omitempty"`
	// Start is when traffic began (virtual time in sim mode: a fixed epoch).
	Start time.Time `json:"start"`
	// Duration is the scheduled length; Elapsed what actually ran (shorter
	// when a stop condition or a cancel cut the run).
	Duration time.Duration `json:"duration_ns"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	// Aborted is set when the run ended early; AbortReason says why
	// ("stop_when: success rate 41% < 50% for 30s", "canceled").
	Aborted     bool   `json:"aborted,omitempty"`
	AbortReason string `json:"abort_reason,omitempty"`
	SLO         SLO    `json:"slo"`
	// BlackBox is set when the gateway emitted no events and detection was
	// measured from the mocks' journals (traffic shift).
	BlackBox bool `json:"black_box,omitempty"`

	Overall Overall       `json:"overall"`
	Faults  []FaultScore  `json:"faults"`
	Targets []TargetScore `json:"targets"`
	Alerts  []AlertScore  `json:"alerts,omitempty"`
	// PromAlerts scores the team's Prometheus alerting rules
	// (alerts.prometheus_rules); nil without them.
	PromAlerts *PromAlerts `json:"prometheus_alerts,omitempty"`
	// Measured says, for every score an expectation can name (by the
	// expectation's name: "cost_multiplier", "degraded", "flaps",
	// "alerts"...), whether this run measured it. A black box hides its
	// breakers and alerts; a run without prices has no cost. An expectation
	// on a score that was not measured fails as "not measured", and one
	// that cannot be measured in the scenario's configuration is a scenario
	// error (gameday validate names it).
	Measured map[string]Measure `json:"measured,omitempty"`
	// Fleet scores the gateway's replicas (gateway.replicas, state); nil
	// for a gateway alone.
	Fleet *FleetScore `json:"fleet,omitempty"`
	// Expectations holds one verdict per checked expectation, in file order.
	Expectations []Verdict    `json:"expectations"`
	Pass         bool         `json:"pass"` // every expectation holds (and the run was not aborted)
	Events       EventSummary `json:"events"`

	log       []events.Event
	packed    *events.Packed // the simulator's log; Log unpacks it
	journal   []JournalEntry
	journalOf func() []JournalEntry // makes journal when it is not kept
	// Series is the run over time, for charts.
	Series Series `json:"series"`

	// TraceSample is one request's trace (live runs with Options.Traces).
	TraceSample *TraceSample `json:"trace_sample,omitempty"`
}

// Measure says whether a score was measured and, when not, why.
type Measure struct {
	Measured bool   `json:"measured"`
	Why      string `json:"why,omitempty"`
}

// SLO is the user-visible objective the run is judged against. A request is
// good when it succeeded, was not a corrupted answer (when Correctness) and
// met every per-request latency bound; the SLI is the share of good
// requests over the sliding Window, which must stay at or above
// SuccessRate, with the window's 95th percentiles within their bounds.
type SLO struct {
	SuccessRate float64       `json:"success_rate"` // fraction, e.g. 0.99
	Window      time.Duration `json:"window_ns"`    // sliding window, default 10s
	Correctness bool          `json:"correctness,omitempty"`
	// TTFT bounds streamed requests' time to first token, Latency
	// non-streamed requests' total time.
	TTFT    LatencyObjective `json:"ttft,omitzero"`
	Latency LatencyObjective `json:"latency,omitzero"`
}

// LatencyObjective bounds a latency per request (Max) or as the window's
// 95th percentile (P95); zero leaves that form out.
type LatencyObjective struct {
	Max time.Duration `json:"max_ns,omitempty"`
	P95 time.Duration `json:"p95_ns,omitempty"`
}

// Overall are the scores over the whole run.
type Overall struct {
	Availability Availability `json:"availability"`
	Latency      Latency      `json:"latency"`
	Retry        Retry        `json:"retry"`
	Cost         Cost         `json:"cost"`
	BadServed    int          `json:"bad_served"`
	Flaps        int          `json:"flaps"`
	// BreachTime is how long the windowed SLI was below the SLO over the
	// whole run, faults or not; BreachByPart how long each declared part
	// of the SLO was broken (PartSuccess...): which part broke it.
	BreachTime   time.Duration            `json:"breach_ns"`
	BreachByPart map[string]time.Duration `json:"breach_by_part_ns,omitempty"`
	// FalseAlarms are the detections, demotions and pages about a target
	// with no fault of its own active (before, between or after the
	// faults), and alerts fired outside every fault window; their count
	// is len(FalseAlarms).
	FalseAlarms []FalseAlarm `json:"false_alarms,omitempty"`
}

// FalseAlarm is a detection, demotion or page with no fault to find: a
// healthy target demoted, a detector firing on good answers, an alert
// paging while nothing was wrong.
type FalseAlarm struct {
	Time time.Time `json:"time"`
	// Target is the target it was about ("" for an alert).
	Target string `json:"target,omitempty"`
	// Source is "breaker", "health", "detector:<name>", "probe" or
	// "alert:<rule>"; Reason the event's reason, when it gave one.
	Source string `json:"source"`
	Reason string `json:"reason,omitempty"`
}

// Availability counts user requests by outcome. Rates are fractions of
// Requests; all zero when there were no requests.
type Availability struct {
	Requests int     `json:"requests"`
	Served   int     `json:"served"`   // in full, by the first tier
	Degraded int     `json:"degraded"` // by a lower tier
	Failed   int     `json:"failed"`
	Success  float64 `json:"success"` // (served + degraded) / requests
	// Good counts the requests that met every part of the SLO; GoodRate
	// is its share of Requests.
	Good     int     `json:"good"`
	GoodRate float64 `json:"good_rate"`
	// ServedRate, DegradedRate and FailedRate split Success.
	ServedRate   float64 `json:"served_rate"`
	DegradedRate float64 `json:"degraded_rate"`
	FailedRate   float64 `json:"failed_rate"`
}

// Percentiles are p50/p95/p99 of a latency sample.
type Percentiles struct {
	N   int           `json:"n"`
	P50 time.Duration `json:"p50_ns"`
	P95 time.Duration `json:"p95_ns"`
	P99 time.Duration `json:"p99_ns"`
}

// Latency compares the latencies of successful requests started outside
// every fault window (baseline) and inside (fault), streamed and
// non-streamed requests apart: time to first token and mean inter-token
// time of streams, total time of the others.
type Latency struct {
	BaselineTTFT       Percentiles `json:"baseline_ttft"`
	FaultTTFT          Percentiles `json:"fault_ttft"`
	BaselineInterToken Percentiles `json:"baseline_inter_token"`
	FaultInterToken    Percentiles `json:"fault_inter_token"`
	BaselineTotal      Percentiles `json:"baseline_total"`
	FaultTotal         Percentiles `json:"fault_total"`
	// Failed is how long users waited for an error (honest errors are fast).
	Failed Percentiles `json:"failed"`
	// TTFTPenalty and TotalPenalty are fault p95 / baseline p95; 0 when either
	// sample is empty.
	TTFTPenalty       float64 `json:"ttft_penalty"`
	InterTokenPenalty float64 `json:"inter_token_penalty"`
	TotalPenalty      float64 `json:"total_penalty"`
}

// Retry measures amplification: upstream attempts per user request.
type Retry struct {
	Requests      int     `json:"requests"`
	Attempts      int     `json:"attempts"`
	Amplification float64 `json:"amplification"` // attempts / requests
	// PeakAmplification is the highest attempts/requests ratio over any
	// 10-second window (windows with fewer than 5 requests are ignored);
	// PeakAt is that window's end.
	PeakAmplification float64   `json:"peak_amplification"`
	PeakAt            time.Time `json:"peak_at"`
	BudgetExhausted   int       `json:"budget_exhausted"` // budget.exhausted events
}

// Cost is spend from metered usage and the pricing table, in the price
// table's currency (USD per million tokens in the shipped examples).
type Cost struct {
	Total float64 `json:"total"`
	// Counterfactual is what the served requests would have cost at the
	// primary target's price, with the tokens they actually used.
	Counterfactual float64 `json:"counterfactual"`
	// FallbackPremium is Total - Counterfactual.
	FallbackPremium float64 `json:"fallback_premium"`
	// Multiplier is spend per user request during the fault windows over spend
	// per user request outside them; 0 when either side has no requests.
	Multiplier float64 `json:"multiplier"`
	// CacheWarmupPenalty is what input tokens that missed the prompt cache
	// cost beyond the target's warm hit ratio (see the scoring README).
	CacheWarmupPenalty float64            `json:"cache_warmup_penalty"`
	ByTarget           map[string]float64 `json:"by_target,omitempty"`
}

// FaultScore are the scores of one fault step on one target.
type FaultScore struct {
	Step   string    `json:"step"`
	Target string    `json:"target"` // provider:model
	Kind   string    `json:"kind,omitempty"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`

	// Detected is false when no detection caused after the fault's start
	// happened during it; TTD is then zero. DetectedBy names the first
	// detection: "breaker", "health", "detector:<name>", "probe" or
	// "traffic_shift".
	Detected   bool          `json:"detected"`
	TTD        time.Duration `json:"ttd_ns"`
	DetectedBy string        `json:"detected_by,omitempty"`
	// Masked is set when the target was already demoted (by MaskedBy, an
	// earlier step; "" when by no fault) as the fault started: TTD is then
	// the time to the first detection whose class matches this fault's
	// kind, and Detected false means "not re-detected".
	Masked   bool   `json:"masked,omitempty"`
	MaskedBy string `json:"masked_by,omitempty"`
	// ShiftFirst and ShiftServed are a black box's traffic shift by user
	// requests, from the fault's start: when the share of requests first
	// attempted on the target, and the share of served requests it
	// served, fell below half its baseline for good (nil: never). TTD is
	// the earlier of the two.
	ShiftFirst  *time.Duration `json:"shift_first_ns,omitempty"`
	ShiftServed *time.Duration `json:"shift_served_ns,omitempty"`
	// NotExercised is set when the target received no attempt and no
	// detection during the fault: neither detected nor missed.
	NotExercised bool `json:"not_exercised,omitempty"`

	// Impact is whether the windowed success rate ever fell below the SLO
	// during the fault. Mitigated is false when it never held again until the
	// fault ended; TTM is then zero.
	Impact    bool          `json:"impact"`
	Mitigated bool          `json:"mitigated"`
	TTM       time.Duration `json:"ttm_ns"`
	// FirstMitigation is the time from the fault's start to the first
	// moment the SLI was back at or above the SLO after it first fell
	// below (FirstMitigated false: it never came back); TTM is when it
	// came back for good. BreachTime is how long the windowed SLI was below
	// the SLO during the fault, Breaches the separate times it fell below,
	// and Relapses the times it fell below again after holding: with TTM
	// they tell a quick fix that relapsed from a slow one.
	FirstMitigated  bool          `json:"first_mitigated,omitempty"`
	FirstMitigation time.Duration `json:"first_mitigation_ns,omitempty"`
	BreachTime      time.Duration `json:"breach_ns"`
	Breaches        int           `json:"breaches"`
	// BreachByPart is how long each declared part of the SLO was broken
	// during the fault (see Overall.BreachByPart).
	BreachByPart map[string]time.Duration `json:"breach_by_part_ns,omitempty"`
	Relapses     int                      `json:"relapses"`
	// Returns counts the times the gateway let traffic back onto the
	// faulted target while the fault lasted (its breaker closed or its
	// health restored, then an attempt sent to it), after detecting it.
	Returns int `json:"returns"`

	// Recovered is false when the target's share never came back to 90% of its
	// baseline before the run (or the next fault on it) ended. BaselineShare
	// is its pre-fault share of successful attempts. Superseded means another
	// fault on the same target started when this one ended, so recovery is
	// measured on that one. CutShort means the run ended when the fault
	// did (a step that lasts until the end, or an aborted run): there was
	// no time to recover in.
	Recovered     bool          `json:"recovered"`
	TTR           time.Duration `json:"ttr_ns"`
	BaselineShare float64       `json:"baseline_share"`
	Superseded    bool          `json:"superseded,omitempty"`
	CutShort      bool          `json:"cut_short,omitempty"`

	Availability Availability `json:"availability"` // requests that started during the fault
	Latency      Latency      `json:"latency"`      // baseline vs this fault
	Retry        Retry        `json:"retry"`        // during the fault
	// OfferedLoad is attempts per second sent to the faulted target during
	// the fault; BaselineLoad before it; LoadRatio their quotient (0 when the
	// baseline is 0).
	OfferedLoad  float64 `json:"offered_load"`
	BaselineLoad float64 `json:"baseline_load"`
	LoadRatio    float64 `json:"load_ratio"`
	// CostMultiplier is spend per request during this fault over baseline.
	CostMultiplier float64 `json:"cost_multiplier"`
	BadServed      int     `json:"bad_served"`
	// ReDetections counts the target's demotions (breaker openings, unhealthy
	// markings; each kind apart) during the fault beyond the first;
	// Oscillations its demotions within one SLO window after the fault's end
	// that followed a recovery (demote → recover → demote). Flaps is
	// Oscillations: re-detecting a fault that lasts is not flapping.
	ReDetections int `json:"re_detections"`
	Oscillations int `json:"oscillations"`
	Flaps        int `json:"flaps"`
}

// RecoveryMeasured reports whether the step has a time to recover of its
// own: false when it is superseded (measured on the next step) or cut
// short (the run ended with it).
func (f *FaultScore) RecoveryMeasured() bool { return !f.Superseded && !f.CutShort }

// TargetScore are per-target totals over the run.
type TargetScore struct {
	Target   string  `json:"target"`
	Attempts int     `json:"attempts"`
	OK       int     `json:"ok"`     // successful attempts
	Served   int     `json:"served"` // user requests this target answered
	Share    float64 `json:"share"`  // of successful attempts
	Cost     float64 `json:"cost"`
	// Quality is the eval pass rate of the responses it served (1 when it
	// served none); QualityN the sample size.
	Quality  float64 `json:"quality"`
	QualityN int     `json:"quality_n"`
	// Breaker openings, half-open → open cycles and unhealthy markings;
	// then the demotions (openings, markings) split: re-detections within
	// a fault, oscillations after one (see FaultScore), and false positives
	// outside every fault window of the target (and one SLO window after
	// it). Flaps is Oscillations + FalsePositives.
	Openings       int `json:"openings"`
	Cycles         int `json:"cycles"`
	Unhealthy      int `json:"unhealthy"`
	ReDetections   int `json:"re_detections"`
	Oscillations   int `json:"oscillations"`
	FalsePositives int `json:"false_positives"`
	Flaps          int `json:"flaps"`
	// UnnecessaryFallback is the time the target, with no fault of its own
	// active, had less than half its baseline share of successful attempts
	// (over the SLO window): healthy but kept out of traffic.
	UnnecessaryFallback time.Duration `json:"unnecessary_fallback_ns"`
	BadServed           int           `json:"bad_served"`
	// Classes counts attempt outcome classes ("ok", "rate_limited", ...).
	Classes map[string]int `json:"classes,omitempty"`
}

// AlertScore is one alert rule's activity.
type AlertScore struct {
	Name     string    `json:"name"`
	Severity string    `json:"severity,omitempty"`
	Fired    int       `json:"fired"`
	FirstAt  time.Time `json:"first_at,omitzero"`
	Resolved int       `json:"resolved"`
	// Delivered and Undelivered count deliveries per sink name; an
	// undelivered alert is one nobody received.
	Delivered   map[string]int `json:"delivered,omitempty"`
	Undelivered map[string]int `json:"undelivered,omitempty"`
}

// Verdict is the outcome of one expectation.
type Verdict struct {
	Name   string `json:"name"`             // e.g. "ttd", "availability", "alert fallback_rate_high"
	Step   string `json:"step,omitempty"`   // the fault step it applies to, if any
	Target string `json:"target,omitempty"` // provider:model, if any
	Want   string `json:"want"`             // e.g. "<= 30s"
	Got    string `json:"got"`              // e.g. "12.4s", "not detected"
	Pass   bool   `json:"pass"`
}

// EventSummary counts the event log by kind.
type EventSummary struct {
	Total  int            `json:"total"`
	ByKind map[string]int `json:"by_kind"`
}

// Fault returns the score of the named step on target ("provider:model" or
// "provider/model"; "" for the step's first target).
func (r *Result) Fault(step, target string) (FaultScore, bool) {
	target = NormTarget(target)
	for _, f := range r.Faults {
		if f.Step == step && (target == "" || f.Target == target) {
			return f, true
		}
	}
	return FaultScore{}, false
}

// Target returns the per-target score ("provider:model" or "provider/model").
func (r *Result) Target(target string) (TargetScore, bool) {
	target = NormTarget(target)
	for _, t := range r.Targets {
		if t.Target == target {
			return t, true
		}
	}
	return TargetScore{}, false
}

// TTD returns the time to detect of a step, and whether it was detected.
func (r *Result) TTD(step string) (time.Duration, bool) {
	f, ok := r.Fault(step, "")
	return f.TTD, ok && f.Detected
}

// TTM returns the time to mitigate of a step, and whether it was mitigated.
func (r *Result) TTM(step string) (time.Duration, bool) {
	f, ok := r.Fault(step, "")
	return f.TTM, ok && f.Mitigated
}

// TTR returns the time to recover of a step, and whether it recovered.
func (r *Result) TTR(step string) (time.Duration, bool) {
	f, ok := r.Fault(step, "")
	return f.TTR, ok && f.Recovered
}

// Availability returns the overall success rate (served in full or degraded).
func (r *Result) Availability() float64 { return r.Overall.Availability.Success }

// RetryAmplification returns upstream attempts per user request over the run.
func (r *Result) RetryAmplification() float64 { return r.Overall.Retry.Amplification }

// Failed returns the verdicts that did not hold.
func (r *Result) Failed() []Verdict {
	var out []Verdict
	for _, v := range r.Expectations {
		if !v.Pass {
			out = append(out, v)
		}
	}
	return out
}
