package gateway_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TestFaultClasses injects each fault class into the primary and checks
// what the client sees: failures before the first token are invisible (the
// equivalent target answers), failures mid-stream continue on the
// prefill-capable equivalent (the client gets one whole answer ending with
// [DONE]), and faults that are the provider's final word (content filter)
// come back in the client's format.
func TestFaultClasses(t *testing.T) {
	type want struct {
		status int
		target string
		// continued: the answer began on the primary and finished on the
		// equivalent (mid-stream fail-over).
		continued bool
		class     string // the primary attempt's class in attempt.end
	}
	tests := []struct {
		name   string
		fault  string
		stream []bool
		want   want
	}{
		{"429", `{kind: http_error, status: 429}`, both, want{200, "beta:claude-sonnet", false, "rate_limited"}},
		{"500", `{kind: http_error, status: 500}`, both, want{200, "beta:claude-sonnet", false, "server_error"}},
		{"503 overloaded", `{kind: http_error, status: 503}`, both, want{200, "beta:claude-sonnet", false, "overloaded"}},
		{"reset", `{kind: reset}`, both, want{200, "beta:claude-sonnet", false, "reset"}},
		{"no response", `{kind: no_response, for: 6s}`, both, want{200, "beta:claude-sonnet", false, "timeout_ttft"}},
		{"slow first token", `{kind: ttft, delay: 6s}`, streamOnly, want{200, "beta:claude-sonnet", false, "timeout_ttft"}},
		{"slow headers", `{kind: slow_headers, delay: 6s}`, both, want{200, "beta:claude-sonnet", false, "timeout_ttft"}},
		{"expired key", `{kind: auth_failure}`, both, want{200, "beta:claude-sonnet", false, "auth"}},
		{"rejected parameter", `{kind: reject_param, param: temperature}`, both, want{200, "beta:claude-sonnet", false, "bad_request_param"}},
		{"context length", `{kind: context_length, window: 1}`, both, want{200, "beta:claude-sonnet", false, "context_length"}},
		{"stall mid-stream", `{kind: stall, after: 5, for: 6s}`, streamOnly, want{200, "alpha:gpt-4o", true, "stall"}},
		{"cut mid-stream", `{kind: cut, after: 5}`, streamOnly, want{200, "alpha:gpt-4o", true, "cut_mid_stream"}},
		// One malformed event in a stream that goes on is skipped
		// (policy.max_malformed_events; TestMalformedEventSkipped).
		{"malformed chunk", `{kind: malformed_chunk, at: 5}`, streamOnly, want{200, "alpha:gpt-4o", false, "ok"}},
		{"slow tokens below the floor", `{kind: token_rate, rate: 4}`, streamOnly, want{200, "alpha:gpt-4o", true, "token_rate_floor"}},
		{"missing [DONE]", `{kind: missing_done}`, streamOnly, want{200, "alpha:gpt-4o", false, "ok"}},
		{"content filter on the prompt", `{kind: content_filter, stage: prompt}`, both, want{400, "", false, "content_filter"}},
	}
	for _, tt := range tests {
		for _, stream := range tt.stream {
			name := tt.name + map[bool]string{false: "/complete", true: "/stream"}[stream]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				m := startMocks(t)
				cfg := m.config(t, "")
				if tt.want.class == "token_rate_floor" {
					cfg.Routes[0].Targets[0].Timeouts.TokenRateFloor = 20
					cfg.Routes[0].Targets[0].Timeouts.Grace = yamlfile.Duration(200 * time.Millisecond)
				}
				g := startGateway(t, cfg, gateway.Options{})
				addFault(t, m.alpha, tt.fault)
				r := g.do(t, stream, nil)
				require.Equal(t, tt.want.status, r.status, r.body)
				evs := g.log.Events()
				var first events.Event
				for _, e := range evs {
					if e.Kind == events.AttemptEnd {
						first = e
						break
					}
				}
				assert.Equal(t, "alpha:gpt-4o", first.Target)
				assert.Equal(t, tt.want.class, first.Class)
				if tt.want.status != 200 {
					assert.Contains(t, r.body, `"error"`)
					assert.Equal(t, 0, len(m.beta.Model().Journal()), "the provider's refusal is final")
					return
				}
				assert.Equal(t, tt.want.target, r.header.Get(gateway.HeaderTarget))
				require.NotEmpty(t, r.text)
				if stream {
					assert.True(t, r.clean, "a served stream ends with [DONE]")
					assert.Empty(t, r.errEv)
				}
				if tt.want.continued {
					// The equivalent continued the partial answer: it got the
					// partial text as an assistant prefill.
					j := m.beta.Model().Journal()
					require.Len(t, j, 1)
					assert.Greater(t, countKind(evs, events.AttemptEnd), 1)
				}
			})
		}
	}
}

var (
	both       = []bool{false, true}
	streamOnly = []bool{true}
)

// TestMidStreamNoPrefill: when no remaining target can continue a partial
// answer, the stream ends with an explicit in-band error — never [DONE] —
// and the error is the failure that cut the stream.
func TestMidStreamNoPrefill(t *testing.T) {
	m := startMocks(t)
	cfg := m.config(t, "")
	cfg.Routes[0].Targets[1].Capabilities.Prefill = false
	g := startGateway(t, cfg, gateway.Options{})
	addFault(t, m.alpha, `{kind: cut, after: 5}`)
	r := g.do(t, true, nil)
	require.Equal(t, 200, r.status)
	assert.False(t, r.clean, "no [DONE] after a truncated answer")
	require.NotEmpty(t, r.errEv)
	assert.Contains(t, r.errEv, "cut_mid_stream")
	assert.NotEmpty(t, r.text, "the partial answer reached the client")
	assert.Empty(t, m.beta.Model().Journal())
	assert.Empty(t, m.gamma.Model().Journal())
}

// TestMidStreamFallbackRejectsPrefill: the fall-back's own 400 (it refuses
// the prefill) must not mask the original failure.
func TestMidStreamFallbackRejectsPrefill(t *testing.T) {
	m := startMocks(t)
	cfg := m.config(t, "")
	cfg.Routes[0].Targets = cfg.Routes[0].Targets[:2] // no third target
	g := startGateway(t, cfg, gateway.Options{})
	addFault(t, m.alpha, `{kind: stall, after: 5, for: 6s}`)
	addFault(t, m.beta, `{kind: http_error, status: 400, message: "prefill not supported"}`)
	r := g.do(t, true, nil)
	require.Equal(t, 200, r.status)
	assert.False(t, r.clean)
	require.NotEmpty(t, r.errEv)
	assert.Contains(t, r.errEv, "stall")
	assert.NotContains(t, r.errEv, "prefill not supported")
}

// TestHonestErrorIsFast: with every tier down the client gets a
// provider-shaped 503 with the configured Retry-After, in its own format, after
// one attempt per target (no waiting: retries are off in this config).
func TestHonestErrorIsFast(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	for _, p := range []*mockprovider.Provider{m.alpha, m.beta, m.gamma} {
		addFault(t, p, `{kind: http_error, status: 503}`)
	}
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		body := openaiBody(false)
		if path == "/v1/messages" {
			body = anthropicBody(false)
		}
		resp := post(t, g.url, path, body, nil)
		resp.Body.Close()
		assert.Equal(t, 503, resp.StatusCode, path)
		assert.Equal(t, "7", resp.Header.Get("Retry-After"), path)
	}
	for _, p := range []*mockprovider.Provider{m.alpha, m.beta, m.gamma} {
		assert.Len(t, p.Model().Journal(), 2, "one attempt per target per request")
	}
}

// TestRetrySameTarget: a transient 429 with Retry-After is retried on the
// same target after the wait, invisibly to the client.
func TestRetrySameTarget(t *testing.T) {
	m := startMocks(t)
	cfg := m.config(t, "")
	cfg.Routes[0].Targets[0].Retry.Attempts = 2
	cfg.Routes[0].Targets[0].Retry.Base = yamlfile.Duration(time.Millisecond)
	g := startGateway(t, cfg, gateway.Options{})
	addFault(t, m.alpha, `{kind: http_error, status: 429, retry_after: 1s, first: 1}`)
	for _, stream := range both {
		r := g.do(t, stream, nil)
		require.Equal(t, 200, r.status, r.body)
		assert.Equal(t, "alpha:gpt-4o", r.header.Get(gateway.HeaderTarget))
	}
	assert.Len(t, m.alpha.Model().Journal(), 3, "the first request was tried twice on the primary")
	assert.Empty(t, m.beta.Model().Journal())
	var ends []events.Event
	for _, e := range g.log.Events() {
		if e.Kind == events.AttemptEnd {
			ends = append(ends, e)
		}
	}
	require.Len(t, ends, 3)
	assert.Equal(t, "rate_limited", ends[0].Class)
	assert.Equal(t, 2, ends[1].Attempt)
	assert.GreaterOrEqual(t, ends[1].Time.Sub(ends[0].Time), time.Second, "the retry honoured Retry-After")
}
