package alerts

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/yamlfile"
)

var t0 = time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC)

const (
	primary  = "openai:gpt-4o"
	fallback = "anthropic:claude-sonnet"
)

// request feeds the events of one request served by the given targets in order
// (the last one succeeds unless outcome is failed).
func request(e *Evaluator, at time.Time, id, route string, ttft time.Duration, cost float64, outcome string, targets ...string) {
	e.Observe(events.Event{Time: at, Kind: events.RequestStart, RequestID: id, Route: route})
	for i, t := range targets {
		class := "server_error"
		if i == len(targets)-1 && outcome != events.OutcomeFailed {
			class = "ok"
		}
		e.Observe(events.Event{Time: at, Kind: events.AttemptStart, RequestID: id, Route: route, Target: t})
		e.Observe(events.Event{Time: at, Kind: events.AttemptEnd, RequestID: id, Route: route, Target: t, Class: class, TTFT: ttft, Cost: cost})
	}
	e.Observe(events.Event{Time: at, Kind: events.RequestEnd, RequestID: id, Route: route, Outcome: outcome})
}

func kinds(evs []events.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%s %s %s%s", e.Kind, e.Name, e.Route, e.Target))
	}
	return out
}

func TestFallbackRate(t *testing.T) {
	tests := []struct {
		name      string
		fallbacks int // of 100 requests
		want      []string
	}{
		{"healthy", 3, nil},
		{"warn only", 10, []string{"alert.fired warn chat"}},
		{"warn and page", 30, []string{"alert.fired warn chat", "alert.fired page chat"}},
		{"exactly at threshold does not fire", 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEvaluator([]Rule{
				{Name: "warn", Kind: FallbackRate, Severity: Warn, Window: yamlfile.Duration(time.Minute), Threshold: 0.05},
				{Name: "page", Kind: FallbackRate, Severity: Page, Window: yamlfile.Duration(time.Minute), Threshold: 0.25},
			})
			e.SetRoutes(map[string][]string{"chat": {primary, fallback}})
			for i := range 100 {
				at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
				if i < tt.fallbacks {
					request(e, at, fmt.Sprint(i), "chat", 0, 0, events.OutcomeServed, primary, fallback)
				} else {
					request(e, at, fmt.Sprint(i), "chat", 0, 0, events.OutcomeServed, primary)
				}
			}
			assert.Equal(t, tt.want, kinds(e.Evaluate(t0.Add(10*time.Second))))
			// Quiet traffic afterwards: once the window has slid past, the
			// alerts resolve.
			for i := range 20 {
				request(e, t0.Add(3*time.Minute+time.Duration(i)*time.Second), fmt.Sprint("q", i), "chat", 0, 0, events.OutcomeServed, primary)
			}
			res := e.Evaluate(t0.Add(3*time.Minute + 30*time.Second))
			for _, ev := range res {
				assert.Equal(t, events.AlertResolved, ev.Kind)
			}
			assert.Len(t, res, len(tt.want))
			assert.Empty(t, e.Firing())
		})
	}
}

func TestFallbackRateNeedsMinRequests(t *testing.T) {
	e := NewEvaluator([]Rule{{Name: "r", Kind: FallbackRate, Severity: Warn, Window: yamlfile.Duration(time.Minute), Threshold: 0.05, MinRequests: 5}})
	e.SetRoutes(map[string][]string{"chat": {primary, fallback}})
	for i := range 4 {
		request(e, t0, fmt.Sprint(i), "chat", 0, 0, events.OutcomeServed, fallback)
	}
	assert.Empty(t, e.Evaluate(t0))
	request(e, t0, "5", "chat", 0, 0, events.OutcomeServed, fallback)
	got := e.Evaluate(t0)
	require.Len(t, got, 1)
	assert.Equal(t, 1.0, got[0].Value)
}

func TestTTFTPenalty(t *testing.T) {
	rule := Rule{Name: "ttft", Kind: TTFTPenalty, Severity: Warn, Window: yamlfile.Duration(time.Minute), Threshold: 2, BaselineWindow: yamlfile.Duration(10 * time.Minute)}
	tests := []struct {
		name string
		slow time.Duration
		want int
	}{
		{"same as baseline", 200 * time.Millisecond, 0},
		{"1.5x stays quiet", 300 * time.Millisecond, 0},
		{"4x fires", 800 * time.Millisecond, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEvaluator([]Rule{rule})
			for i := range 100 { // baseline: 200ms over the 5 minutes before
				request(e, t0.Add(time.Duration(i)*3*time.Second), fmt.Sprint("b", i), "chat", 200*time.Millisecond, 0, events.OutcomeServed, primary)
			}
			now := t0.Add(6 * time.Minute)
			for i := range 20 {
				request(e, now.Add(-time.Duration(i)*time.Second), fmt.Sprint("s", i), "chat", tt.slow, 0, events.OutcomeServed, primary)
			}
			got := e.Evaluate(now)
			assert.Len(t, got, tt.want)
		})
	}
}

func TestSpend(t *testing.T) {
	e := NewEvaluator([]Rule{
		{Name: "spend", Kind: SpendRate, Severity: Page, Window: yamlfile.Duration(10 * time.Minute), Threshold: 5},
		{Name: "share", Kind: FallbackSpendShare, Severity: Warn, Window: yamlfile.Duration(10 * time.Minute), Threshold: 0.5},
	})
	e.SetRoutes(map[string][]string{"chat": {primary, fallback}})
	// $0.50 on the primary; $0.20 on a failed primary attempt then $0.20 on
	// the fallback; $0.40 more on the fallback: $1.30 in 10 minutes is
	// $7.80/h, with a fallback share of 0.6/1.3 = 46%.
	request(e, t0, "1", "chat", 0, 0.5, events.OutcomeServed, primary)
	request(e, t0.Add(time.Minute), "2", "chat", 0, 0.2, events.OutcomeServed, primary, fallback)
	request(e, t0.Add(time.Minute), "3", "chat", 0, 0.2, events.OutcomeServed, fallback)
	request(e, t0.Add(time.Minute), "4", "chat", 0, 0.2, events.OutcomeServed, fallback)
	got := e.Evaluate(t0.Add(2 * time.Minute))
	require.Equal(t, []string{"alert.fired spend "}, kinds(got))
	assert.InDelta(t, 7.8, got[0].Value, 1e-9)
	request(e, t0.Add(2*time.Minute), "5", "chat", 0, 1, events.OutcomeServed, fallback)
	got = e.Evaluate(t0.Add(2 * time.Minute))
	require.Equal(t, []string{"alert.fired share "}, kinds(got))
	assert.InDelta(t, 1.6/2.3, got[0].Value, 1e-9)
}

func TestFallbackUnexercised(t *testing.T) {
	e := NewEvaluator([]Rule{{Name: "dead", Kind: FallbackUnexercised, Severity: Warn, Window: yamlfile.Duration(7 * 24 * time.Hour)}})
	e.SetRoutes(map[string][]string{"chat": {primary, fallback, "gemini:flash"}})
	request(e, t0, "1", "chat", 0, 0, events.OutcomeServed, primary)
	request(e, t0.Add(3*24*time.Hour), "2", "chat", 0, 0, events.OutcomeServed, primary, fallback)
	assert.Empty(t, e.Evaluate(t0.Add(6*24*time.Hour)))
	got := e.Evaluate(t0.Add(8 * 24 * time.Hour))
	assert.Equal(t, []string{"alert.fired dead gemini:flash"}, kinds(got))
	got = e.Evaluate(t0.Add(11 * 24 * time.Hour))
	assert.Equal(t, []string{"alert.fired dead " + fallback}, kinds(got))
	request(e, t0.Add(12*24*time.Hour), "3", "chat", 0, 0, events.OutcomeServed, "gemini:flash")
	got = e.Evaluate(t0.Add(12 * 24 * time.Hour))
	assert.Equal(t, []string{"alert.resolved dead gemini:flash"}, kinds(got))
}

func TestBreakerFlapping(t *testing.T) {
	e := NewEvaluator([]Rule{{Name: "flap", Kind: BreakerFlapping, Severity: Warn, Window: yamlfile.Duration(10 * time.Minute), Threshold: 3}})
	for i := range 4 {
		e.Observe(events.Event{Time: t0.Add(time.Duration(i) * time.Minute), Kind: events.BreakerTransition, Target: primary, From: "half_open", To: "open"})
		e.Observe(events.Event{Time: t0.Add(time.Duration(i)*time.Minute + 30*time.Second), Kind: events.BreakerTransition, Target: primary, From: "open", To: "half_open"})
	}
	got := e.Evaluate(t0.Add(5 * time.Minute))
	require.Equal(t, []string{"alert.fired flap " + primary}, kinds(got))
	assert.Equal(t, 4.0, got[0].Value)
	assert.Len(t, e.Firing(), 1)
	assert.Equal(t, []string{"alert.resolved flap " + primary}, kinds(e.Evaluate(t0.Add(20*time.Minute))))
}

// TestDemotionFlapping: health letting traffic back onto a sick target four
// times in 15 minutes (the relapses of a brownout) fires; recoveries and
// another target's demotions do not count; the alert resolves when the
// demotions leave the window, alone or beside a breaker rule.
func TestDemotionFlapping(t *testing.T) {
	for _, withBreaker := range []bool{false, true} {
		rules := []Rule{{Name: "relapse", Kind: DemotionFlapping, Severity: Warn, Window: yamlfile.Duration(15 * time.Minute), Threshold: 3}}
		if withBreaker { // with a rule that reads the request series too
			rules = append(rules, Rule{Name: "fb", Kind: FallbackRate, Severity: Warn, Window: yamlfile.Duration(time.Minute), Threshold: 0.5})
		}
		e := NewEvaluator(rules)
		for i := range 4 {
			at := t0.Add(time.Duration(i) * 3 * time.Minute)
			e.Observe(events.Event{Time: at, Kind: events.HealthChange, Target: primary, From: "healthy", To: "unhealthy", Reason: "sla_first_token"})
			e.Observe(events.Event{Time: at.Add(90 * time.Second), Kind: events.HealthChange, Target: primary, From: "unhealthy", To: "healthy", Reason: "cooldown_elapsed"})
			if i < 3 {
				e.Observe(events.Event{Time: at, Kind: events.HealthChange, Target: fallback, From: "healthy", To: "unhealthy"})
			}
		}
		got := e.Evaluate(t0.Add(10 * time.Minute))
		require.Equal(t, []string{"alert.fired relapse " + primary}, kinds(got), "with breaker rule %v", withBreaker)
		assert.Equal(t, 4.0, got[0].Value)
		assert.Contains(t, got[0].Reason, "demoted 4 times in 15m0s, bound 3")
		assert.Equal(t, primary, e.Firing()[0].Target)
		// At 16m the first demotion (0m) has left the window: 3, not above 3.
		assert.Equal(t, []string{"alert.resolved relapse " + primary}, kinds(e.Evaluate(t0.Add(16*time.Minute))))
	}
}

func TestRuleValidate(t *testing.T) {
	ok := Rule{Name: "r", Kind: FallbackRate, Severity: Warn, Window: yamlfile.Duration(time.Minute), Threshold: 0.1}
	tests := []struct {
		name  string
		edit  func(*Rule)
		field string
	}{
		{"valid", func(*Rule) {}, ""},
		{"no name", func(r *Rule) { r.Name = "" }, "name"},
		{"bad kind", func(r *Rule) { r.Kind = "nope" }, "kind"},
		{"share above 1", func(r *Rule) { r.Threshold = 2 }, "threshold"},
		{"bad severity", func(r *Rule) { r.Severity = "info" }, "severity"},
		{"no window", func(r *Rule) { r.Window = 0 }, "window"},
		{"ttft multiplier below 1", func(r *Rule) { r.Kind = TTFTPenalty; r.Threshold = 0.5 }, "threshold"},
		{"bad target", func(r *Rule) { r.Target = "gpt" }, "target"},
		{"demotion count below 1", func(r *Rule) { r.Kind = DemotionFlapping; r.Threshold = 0 }, "threshold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.edit(&r)
			err := r.Validate()
			if tt.field == "" {
				assert.NoError(t, err)
				return
			}
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
	for _, r := range DefaultRules() {
		assert.NoError(t, r.Validate(), r.Name)
	}
}

func TestThresholdYAML(t *testing.T) {
	var v struct {
		A Threshold `yaml:"a"`
		B Threshold `yaml:"b"`
	}
	_, err := yamlfile.Decode("t.yaml", []byte("a: 25%\nb: 2.5\n"), &v)
	require.NoError(t, err)
	assert.InDelta(t, 0.25, float64(v.A), 1e-12)
	assert.InDelta(t, 2.5, float64(v.B), 1e-12)
	_, err = yamlfile.Decode("t.yaml", []byte("a: lots\n"), &v)
	assert.ErrorContains(t, err, "t.yaml:1:4")
}

// End events that carry neither route nor target are attributed from the
// request's start and attempts (no SetRoutes: the primary is the first
// target tried), interleaved and with request ids used again: the alerts
// are those of the same traffic with complete events.
func TestEventsAttributedFromTheRequest(t *testing.T) {
	rules := []Rule{
		{Name: "fb", Kind: FallbackRate, Severity: Warn, Window: yamlfile.Duration(time.Minute), Threshold: 0.2},
		{Name: "share", Kind: FallbackSpendShare, Severity: Warn, Route: "chat", Window: yamlfile.Duration(time.Minute), Threshold: 0.3},
	}
	feed := func(bare bool) []string {
		e := NewEvaluator(rules)
		for i := range 60 {
			at := t0.Add(time.Duration(i) * time.Second)
			for j, route := range []string{"chat", "batch"} {
				id := fmt.Sprint("r", (i*2+j)%7) // ids come back
				targets := []string{primary}
				if route == "chat" && i%2 == 0 || route == "batch" && i%10 == 0 {
					targets = append(targets, fallback)
				}
				e.Observe(events.Event{Time: at, Kind: events.RequestStart, RequestID: id, Route: route})
				for k, tg := range targets {
					class := "ok"
					if k < len(targets)-1 {
						class = "server_error"
					}
					e.Observe(events.Event{Time: at, Kind: events.AttemptStart, RequestID: id, Route: route, Target: tg})
					end := events.Event{Time: at, Kind: events.AttemptEnd, RequestID: id, Route: route, Target: tg, Class: class, Cost: 0.01}
					if bare {
						end.Route = ""
					}
					e.Observe(end)
				}
				end := events.Event{Time: at, Kind: events.RequestEnd, RequestID: id, Route: route, Target: targets[len(targets)-1], Outcome: events.OutcomeServed}
				if bare {
					end.Route, end.Target = "", ""
				}
				e.Observe(end)
			}
		}
		return kinds(e.Evaluate(t0.Add(time.Minute)))
	}
	want := feed(false)
	require.Equal(t, []string{"alert.fired fb chat", "alert.fired share chat"}, want)
	assert.Equal(t, want, feed(true))
}

// Data only one rule kind reads is kept only when such a rule exists.
func TestEvaluatorKeepsOnlyWhatRulesRead(t *testing.T) {
	feed := func(e *Evaluator) {
		request(e, t0, "1", "chat", 300*time.Millisecond, 0.1, events.OutcomeServed, primary, fallback)
		e.Observe(events.Event{Time: t0, Kind: events.BreakerTransition, Target: primary, From: "closed", To: "open"})
	}
	min := yamlfile.Duration(time.Minute)
	e := NewEvaluator([]Rule{{Name: "fb", Kind: FallbackRate, Severity: Warn, Window: min, Threshold: 0.5}})
	feed(e)
	assert.Empty(t, e.lastOK.list)
	assert.Empty(t, e.openings)
	assert.Nil(t, e.series["chat"].buckets[0].ttft)

	e = NewEvaluator([]Rule{
		{Name: "ttft", Kind: TTFTPenalty, Severity: Warn, Window: min, Threshold: 2},
		{Name: "idle", Kind: FallbackUnexercised, Severity: Warn, Window: min},
		{Name: "flap", Kind: BreakerFlapping, Severity: Warn, Window: min, Threshold: 3},
	})
	feed(e)
	assert.Equal(t, []targetOK{{fallback, t0}}, e.lastOK.list)
	assert.Len(t, e.openings[primary], 1)
	assert.Equal(t, uint32(1), e.series["chat"].buckets[0].ttftN)
}
