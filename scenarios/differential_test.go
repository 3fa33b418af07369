package scenarios

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// diffCase is one short scripted game day the differential test plays in
// both engines. Requests arrive every 250ms (at 0.25s, 0.5s, 0.75s, and
// 1s when the run lasts longer); a step from 0.4s to 0.9s meets the second
// and third.
type diffCase struct {
	name string
	// covers names what the case exercises: fault kinds, step kinds
	// ("step:kill"), client cancels ("cancel:backoff") and "continuation".
	covers []string
	// traffic is the one traffic entry's extra fields (flow style), and
	// duration the run's length (default 1s).
	traffic  string
	duration string
	// timeline is the timeline's entries, flow style.
	timeline []string
	// route is the route traffic asks for (default chat); rate its rate
	// (default 4/s).
	route, rate string
	// gateway replaces the gateway entry's fields (flow style; default
	// config: gateway.yaml).
	gateway string
	// inline declares the gateway in the scenario (gateway: {routes,
	// policy}) instead of gateway.yaml: the live engine builds its file;
	// inlineRoute adds lines to its chat route (each "\n      field: value").
	inline      bool
	inlineRoute string
	// mutate changes the loaded scenario (what validation would refuse);
	// wantErr is then the error both engines must stop with, no result.
	mutate  func(*Scenario)
	wantErr error
}

// inlineGateway is gateway.yaml's chat route and policy, declared inline.
const inlineGateway = `gateway:
  routes:
    - name: chat{{route}}
      tiers: [primary, equivalent]
      targets:
        - {provider: a, model: m, tier: primary, retry: {attempts: 2, base: 20ms, cap: 40ms, retry_after_cap: 5s},
           timeouts: {connect: 500ms, first_token: 600ms, idle: 400ms, total: 5s}}
        - {provider: b, model: m2, tier: equivalent, fallback_candidate: true, retry: {attempts: 1},
           capabilities: {streaming: true, tools: true, structured_output: true, prefill: true},
           timeouts: {connect: 500ms, first_token: 600ms, idle: 400ms, total: 5s}}
  policy:
    max_attempts: 4
    retry_budget: {ratio: 100%, min_retries: 100, window: 10s}
    breaker: {window: 30s, error_rate: 90%, min_samples: 1000, open_for: 30s}
    health: {failures: 1000, window: 30s, cooldown: 1m}
`

func faultStep(spec string) []string {
	return []string{"{name: f, at: 400ms, for: 500ms, target: a/m, fault: " + spec + "}"}
}

var diffCases = []diffCase{
	{name: "auth_failure", covers: []string{"auth_failure"}, timeline: faultStep("{kind: auth_failure}")},
	{name: "reject_param", covers: []string{"reject_param"}, traffic: "temperature: 0.5", timeline: faultStep("{kind: reject_param, param: temperature}")},
	{name: "context_length", covers: []string{"context_length"}, timeline: faultStep("{kind: context_length, window: 10}")},
	{name: "http_error", covers: []string{"http_error"}, timeline: faultStep("{kind: http_error, status: 503}")},
	{name: "inline_gateway", covers: []string{"gateway:inline"}, inline: true, timeline: faultStep("{kind: http_error, status: 503}")},
	{name: "http_error_in_band", covers: []string{"http_error", "continuation"}, timeline: faultStep("{kind: http_error, status: 529, after: 3}")},
	{name: "reset", covers: []string{"reset"}, timeline: faultStep("{kind: reset}")},
	{name: "no_response", covers: []string{"no_response"}, timeline: faultStep("{kind: no_response, for: 2s}")},
	{name: "refusal", covers: []string{"refusal"}, timeline: faultStep("{kind: refusal}")},
	{name: "content_filter", covers: []string{"content_filter"}, timeline: faultStep("{kind: content_filter, stage: prompt}")},
	{name: "quality_drop", covers: []string{"quality_drop"}, timeline: faultStep("{kind: quality_drop}")},
	{name: "malformed_json_content", covers: []string{"malformed_json_content"}, timeline: faultStep("{kind: malformed_json_content}")},
	{name: "empty_tool_args", covers: []string{"empty_tool_args"}, timeline: faultStep("{kind: empty_tool_args}")},
	{name: "truncate", covers: []string{"truncate"}, timeline: faultStep("{kind: truncate, at: 4}")},
	{name: "token_rate", covers: []string{"token_rate", "continuation"}, timeline: faultStep("{kind: token_rate, rate: 1}")},
	{name: "ttft", covers: []string{"ttft"}, timeline: faultStep("{kind: ttft, delay: 2s}")},
	{name: "slow_headers", covers: []string{"slow_headers"}, timeline: faultStep("{kind: slow_headers, delay: 2s}")},
	{name: "stall", covers: []string{"stall", "continuation"}, timeline: faultStep("{kind: stall, after: 3, for: 2s}")},
	{name: "cut", covers: []string{"cut", "continuation"}, timeline: faultStep("{kind: cut, after: 3}")},
	{name: "malformed_chunk", covers: []string{"malformed_chunk", "continuation"}, timeline: faultStep("{kind: malformed_chunk, at: 3}")},
	{name: "missing_done", covers: []string{"missing_done"}, timeline: faultStep("{kind: missing_done}")},
	// The route's primary (a/slow) streams for 0.7s: the kill cuts the
	// first request mid-stream (it continues on b), refuses the next two,
	// and the restarted a serves the last.
	{name: "kill_restart", covers: []string{"step:kill", "continuation"}, duration: "1250ms", route: "slowchat",
		timeline: []string{"{name: down, at: 450ms, for: 450ms, kill: a}"}},
	{name: "reload_valid", covers: []string{"step:reload"}, timeline: []string{"{name: swap, at: 400ms, reload: {config: gateway-b-first.yaml}}"}},
	{name: "reload_invalid", covers: []string{"step:reload"}, timeline: []string{"{name: bad, at: 400ms, reload: {config: ../gateway-bad.yaml}}"}},
	{name: "sink_down", covers: []string{"step:sink_down"}, timeline: []string{"{name: quiet, at: 400ms, for: 500ms, sink_down: oncall}"}},
	{name: "cancel_before_first_token", covers: []string{"cancel:first_token"}, traffic: "client_timeout: 300ms",
		timeline: faultStep("{kind: ttft, delay: 2s}")},
	{name: "cancel_mid_stream", covers: []string{"cancel:mid_stream"}, traffic: "client_timeout: 400ms",
		timeline: faultStep("{kind: token_rate, rate: 5}")},
	// Two replicas share their breakers; the store goes down for 0.5s:
	// both fall back to local state at once, and both resync at their
	// next retry (a second later).
	{name: "store_down", covers: []string{"step:store_down"}, duration: "1750ms",
		gateway:  "config: gateway-fleet.yaml, replicas: 2, state: redis",
		timeline: []string{"{name: away, at: 400ms, for: 500ms, store: down}"}},
	// The store answers 15ms late: replica 2's breaker opens on a 503 at
	// 0.5s and its proposal reaches the store; replica 1 obeys it when the
	// late publication arrives, before req-3 (0.75s). Live, the delay
	// applies to every round trip, and a replica's first calls make
	// several (connection handshake, script load): a delay near the 100ms
	// timeout fails them there, where the simulator charges it once.
	{name: "store_slow", covers: []string{"step:store_slow"},
		gateway: "config: gateway-fleet.yaml, replicas: 2, state: redis",
		timeline: []string{"{name: late, at: 300ms, for: 600ms, store: {slow: 15ms}}",
			"{name: f, at: 400ms, for: 500ms, target: a/m, fault: {kind: http_error, status: 503}}"}},
	// Two replicas share their retry budgets (2 retries a window; see
	// testdata/fleetshare) while a/m fails throughout, a request every
	// 0.5s: requests 1-2 retry on a/m; each replica learns the other's
	// retries within two Shares live (the replicas' tickers are not
	// aligned; one in the simulator), before the next request, and
	// requests 3-4 find the fleet's budget spent (with local budgets all
	// four would retry).
	{name: "shared_budget", covers: []string{"fleet:budget"}, duration: "2250ms", rate: "2/s",
		gateway:  "config: ../fleetshare/gateway-budget.yaml, replicas: 2, state: redis",
		timeline: []string{"{name: f, at: 100ms, for: 2s, target: a/m, fault: {kind: http_error, status: 503}}"}},
	// Replica 2 demotes a/m on req-2's failure (0.5s); replica 1 learns it
	// at its next share and sends req-3 (0.75s) to b without trying a.
	{name: "shared_health", covers: []string{"fleet:health"},
		gateway:  "config: ../fleetshare/gateway-health.yaml, replicas: 2, state: redis",
		timeline: faultStep("{kind: http_error, status: 503}")},
	{name: "cancel_during_backoff", covers: []string{"cancel:backoff"}, traffic: "client_timeout: 500ms",
		timeline: faultStep("{kind: http_error, status: 429, retry_after: 1s}")},
	// Agents' first turns: every answer a tool call streamed as argument
	// deltas, cut after 3. Deltas sent, no target can continue the call:
	// the request ends with the in-band error, no failover (the simulator
	// once committed every cut stream as text and failed it over).
	{name: "tool_call_cut", covers: []string{"traffic:tools"}, traffic: "tools: 100%",
		timeline: faultStep("{kind: cut, after: 3}")},
	// Unstreamed requests: a 503 retried, then failed over.
	{name: "non_streamed", covers: []string{"traffic:non_streamed"}, traffic: "stream: 0%",
		timeline: faultStep("{kind: http_error, status: 503}")},
	// A route marked structured validates every answer, with or without
	// response_format: prose where JSON was due is invalid output and fails
	// over (the simulator once validated only requests with
	// response_format, and served these).
	{name: "structured_route", covers: []string{"route:structured"}, traffic: "stream: 0%", inline: true,
		inlineRoute: "\n      structured: true", timeline: faultStep("{kind: malformed_json_content}")},
	// A fault the mock refuses stops the run with the error in both
	// engines (live once skipped it and played on).
	{name: "fault_refused", covers: []string{"step:fault_refused"}, timeline: faultStep("{kind: http_error, status: 503}"),
		mutate: func(s *Scenario) { s.Timeline[0].Fault.Kind = "no_such_kind" }, wantErr: ErrInvalid},
}

// scenario returns the case's game day.
func (c *diffCase) scenario() (*Scenario, error) {
	route := c.route
	if route == "" {
		route = "chat"
	}
	rate := c.rate
	if rate == "" {
		rate = "4/s"
	}
	traffic := "route: " + route + ", rate: " + rate + ", arrival: uniform, prompt_tokens: 20"
	if !strings.Contains(c.traffic, "stream:") {
		traffic += ", stream: 100%"
	}
	if c.traffic != "" {
		traffic += ", " + c.traffic
	}
	dur := c.duration
	if dur == "" {
		dur = "1s"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nname: diff-%s\nseed: 7\nduration: %s\n", c.name, dur)
	b.WriteString("providers: {file: providers.yaml}\n")
	switch {
	case c.inline:
		b.WriteString(strings.Replace(inlineGateway, "{{route}}", c.inlineRoute, 1))
	case c.gateway != "":
		fmt.Fprintf(&b, "gateway: {%s}\n", c.gateway)
	default:
		b.WriteString("gateway: {config: gateway.yaml}\n")
	}
	fmt.Fprintf(&b, "traffic:\n  - {%s}\ntimeline:\n", traffic)
	for _, st := range c.timeline {
		fmt.Fprintf(&b, "  - %s\n", st)
	}
	b.WriteString("alerts: {sinks: [{name: oncall, kind: log}]}\n")
	return Parse("testdata/diff/"+c.name+".yaml", []byte(b.String()))
}

// transcript is what the differential test compares of a run's log: per
// request, the sequence of its events; and the sequence of the others.
// Events keep their kind, target, class, outcome, tier and attempt count
// (and the fault kind, step name or reload verdict of step events; the
// name, target and verdict of detector, probe, alert and prefill verdict
// events), not their times, statuses or token counts.
type transcript struct {
	Requests map[string][]string
	Steps    []string
}

func transcriptOf(log []events.Event) transcript {
	tr := transcript{Requests: map[string][]string{}}
	for i := range log {
		e := &log[i]
		var s string
		switch e.Kind {
		case events.RequestStart, events.RequestEnd, events.AttemptStart, events.AttemptEnd, events.TierServed,
			events.BudgetExhausted:
			s = fmt.Sprintf("%s target=%s class=%s outcome=%s tier=%s attempt=%d", e.Kind, e.Target, e.Class, e.Outcome, e.Tier, e.Attempt)
			tr.Requests[e.RequestID] = append(tr.Requests[e.RequestID], s)
		case events.FaultStart, events.FaultEnd:
			tr.Steps = append(tr.Steps, fmt.Sprintf("%s %s target=%s reason=%s", e.Kind, e.Name, e.Target, e.Reason))
		case events.ConfigReload:
			tr.Steps = append(tr.Steps, fmt.Sprintf("%s ok=%v", e.Kind, e.OK))
		case events.StreamMalformed:
			s = fmt.Sprintf("%s target=%s attempt=%d reason=%s", e.Kind, e.Target, e.Attempt, e.Reason)
			tr.Requests[e.RequestID] = append(tr.Requests[e.RequestID], s)
		case events.StreamContinuation:
			s = fmt.Sprintf("%s from=%s to=%s outcome=%s attempt=%d", e.Kind, e.From, e.To, e.Outcome, e.Attempt)
			tr.Requests[e.RequestID] = append(tr.Requests[e.RequestID], s)
		case events.BreakerTransition, events.HealthChange:
			tr.Steps = append(tr.Steps, fmt.Sprintf("%s target=%s", e.Kind, e.Target))
		case events.StateDegraded:
			tr.Steps = append(tr.Steps, fmt.Sprintf("%s ok=%v", e.Kind, e.OK))
		case events.DetectorSignal, events.ProbeResult, events.AlertFired, events.AlertResolved, events.PrefillVerdict:
			tr.Steps = append(tr.Steps, fmt.Sprintf("%s name=%s target=%s ok=%v", e.Kind, e.Name, e.Target, e.OK))
		}
	}
	return tr
}

// fleetCounts is what the differential test compares of a fleet's score:
// its counts, per replica too (nil for a gateway alone).
func fleetCounts(f *score.FleetScore) []int {
	if f == nil {
		return nil
	}
	out := []int{f.Replicas, f.OutageRequests, f.PrimaryAttempts, f.HalfOpenTrials, f.TrialsPerRecovery, f.Degraded, f.Resynced}
	for _, r := range f.PerReplica {
		out = append(out, r.Replica, r.Requests, r.Attempts)
	}
	return out
}

// TestDifferential plays each case in the simulator and live (in-process
// mocks and gateway over loopback): the two transcripts must be equal, and
// so must a fleet's scores (the shared_* and store_* cases).
func TestDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("live runs take about a second each")
	}
	if raceEnabled {
		// Live cases have real-time margins of ~100 ms that the race
		// detector's slowdown overruns; make test plays them without it.
		t.Skip("live timing under the race detector; run without -race (make test does)")
	}
	for _, c := range diffCases {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.scenario()
			if err != nil {
				t.Fatal(err)
			}
			if s.Gateway.shared() {
				requireRedis(t)
			}
			if c.mutate != nil {
				c.mutate(s)
			}
			sim, err := Run(context.Background(), s, Options{Mode: score.ModeSim})
			if c.wantErr != nil {
				live, lerr := Run(context.Background(), s, Options{Mode: score.ModeLive})
				if !errors.Is(err, c.wantErr) || !errors.Is(lerr, c.wantErr) || sim != nil || live != nil {
					t.Fatalf("sim: %v, live: %v; want both to stop with %v and no result", err, lerr, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			live, err := Run(context.Background(), s, Options{Mode: score.ModeLive})
			if err != nil {
				t.Fatal(err)
			}
			want, got := transcriptOf(sim.Log()), transcriptOf(live.Log())
			if len(want.Requests) == 0 {
				t.Fatal("the simulation served no request")
			}
			for _, id := range slices.Sorted(maps.Keys(want.Requests)) {
				t.Logf("%s: %s", id, strings.Join(want.Requests[id], " | "))
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("live differs from the simulation (-sim +live):\n%s", d)
			}
			if d := cmp.Diff(fleetCounts(sim.Fleet), fleetCounts(live.Fleet)); d != "" {
				t.Errorf("the fleet's scores differ (-sim +live):\n%s", d)
			}
		})
	}
}

// TestDifferentialCoversEveryKind: every fault kind, every step kind, the
// three client cancels and a mid-stream continuation have a differential
// case.
func TestDifferentialCoversEveryKind(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range diffCases {
		for _, k := range c.covers {
			covered[k] = true
		}
	}
	need := []string{"cancel:first_token", "cancel:mid_stream", "cancel:backoff", "continuation", "gateway:inline"}
	for _, k := range faults.Kinds() {
		need = append(need, string(k))
	}
	for _, k := range StepKinds {
		if k != StepFault { // every fault case is a fault step
			need = append(need, "step:"+k.String())
		}
	}
	for _, k := range need {
		if !covered[k] {
			t.Errorf("no differential case covers %s", k)
		}
	}
}

// TestSimReloadDetectorsAndAlerts: a reload to a config that turns the
// detectors on and adds an alert rule changes the simulator's detectors and
// alert evaluator as it changes the gateway's (it once swapped only the
// decision core); a reload back to the same settings keeps them.
func TestSimReloadDetectorsAndAlerts(t *testing.T) {
	c := diffCase{name: "reload_alerts", timeline: []string{"{name: swap, at: 400ms, reload: {config: gateway-alerts.yaml}}"}}
	s, err := c.scenario()
	if err != nil {
		t.Fatal(err)
	}
	m, err := newSim(context.Background(), s, s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if m.det != nil || m.alerts != nil {
		t.Fatalf("before the reload: detectors %v, alerts %v; want none (gateway.yaml disables them)", m.det != nil, m.alerts != nil)
	}
	m.run()
	if m.err != nil {
		t.Fatal(m.err)
	}
	if m.det == nil || m.alerts == nil || len(m.alertRules) != 1 || m.alertRules[0].Name != "FallbackRateHigh" {
		t.Fatalf("after the reload: detectors %v, alert rules %v; want the new config's", m.det != nil, m.alertRules)
	}
	det, ev := m.det, m.alerts
	m.configure(m.alertRules, *m.detCfg, s.env.policy.Routes)
	if m.det != det || m.alerts != ev {
		t.Error("a reload with the same detector settings and rules rebuilt them")
	}
}
