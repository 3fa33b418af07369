package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/mockprovider"
)

// TestCachedTier: with every provider down, the cached tier answers with
// the last good answer to the same question, labelled stale; a different
// question gets the honest error.
func TestCachedTier(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, "cache: {ttl: 1ms, max_stale: 1h}\n"), gateway.Options{})
	first := g.do(t, false, nil)
	require.Equal(t, 200, first.status)
	time.Sleep(5 * time.Millisecond) // past the TTL: only the cached tier may use it
	for _, p := range []*mockprovider.Provider{m.alpha, m.beta, m.gamma} {
		addFault(t, p, `{kind: http_error, status: 500}`)
	}
	for _, stream := range []bool{false, true} {
		r := g.do(t, stream, nil)
		require.Equal(t, 200, r.status, r.body)
		assert.Equal(t, "stale", r.header.Get(gateway.HeaderCache))
		assert.Equal(t, "cached", r.header.Get(gateway.HeaderTier))
		assert.Equal(t, first.text, r.text, "the same answer, from the cache")
		if stream {
			assert.True(t, r.clean)
		}
	}
	resp := post(t, g.url, "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"another question"}]}`, nil)
	resp.Body.Close()
	assert.Equal(t, 503, resp.StatusCode)
	var degraded int
	for _, e := range g.log.Events() {
		if e.Kind == events.RequestEnd && e.Outcome == events.OutcomeDegraded && e.Tier == "cached" {
			degraded++
		}
	}
	assert.Equal(t, 2, degraded)
}

// TestIdempotency: concurrent duplicates share one upstream call; a retry
// within the TTL is replayed; the same key with another body is refused.
func TestIdempotency(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	addFault(t, m.alpha, `{kind: ttft, delay: 100ms}`) // keep the leader in flight
	const dup = 8
	bodies := make([]string, dup)
	replays := int32(0)
	var wg sync.WaitGroup
	for i := range dup {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := post(t, g.url, "/v1/chat/completions", openaiBody(false), map[string]string{"Idempotency-Key": "order-42"})
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			bodies[i] = string(b)
			if resp.Header.Get(gateway.HeaderReplay) == "true" {
				atomic.AddInt32(&replays, 1)
			}
		}()
	}
	wg.Wait()
	for _, b := range bodies {
		assert.Equal(t, bodies[0], b)
	}
	assert.Equal(t, int32(dup-1), replays)
	assert.Len(t, m.alpha.Model().Journal(), 1, "one upstream call for all duplicates")

	resp := post(t, g.url, "/v1/chat/completions", openaiBody(false), map[string]string{"Idempotency-Key": "order-42"})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, bodies[0], string(b), "a retry gets the stored answer")
	assert.Len(t, m.alpha.Model().Journal(), 1)

	resp = post(t, g.url, "/v1/chat/completions", openaiBody(true), map[string]string{"Idempotency-Key": "order-42"})
	resp.Body.Close()
	assert.Equal(t, 422, resp.StatusCode)
}

// TestMalformedRequest: a bad request gets the provider-shaped 400 naming
// the field, in the client's format, without an upstream call.
func TestMalformedRequest(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	tests := []struct {
		path, body, want string
	}{
		{"/v1/chat/completions", `{"model":"chat","messages":"hello"}`, "messages"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, "model"},
		{"/v1/chat/completions", `{not json`, "invalid_request"},
		{"/v1/messages", `{"model":"chat","max_tokens":10,"messages":[{"role":"robot","content":"x"}]}`, "role"},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.want, func(t *testing.T) {
			resp := post(t, g.url, tt.path, tt.body, nil)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, 400, resp.StatusCode)
			assert.Contains(t, string(b), tt.want)
			assert.Contains(t, string(b), `"error"`)
		})
	}
	assert.Empty(t, m.alpha.Model().Journal())
}

func TestModelsAndProbes(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	resp, err := http.Get(g.url + "/v1/models")
	require.NoError(t, err)
	var models struct {
		Data []struct {
			ID      string   `json:"id"`
			Targets []string `json:"targets"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&models))
	resp.Body.Close()
	require.Len(t, models.Data, 1)
	assert.Equal(t, "chat", models.Data[0].ID)
	assert.Equal(t, []string{"alpha:gpt-4o", "beta:claude-sonnet", "gamma:gemini-flash"}, models.Data[0].Targets)
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(g.url + p)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode, p)
	}
}

// TestAdmin: the admin API needs the token; state has breakers and the
// config version; events stream as SSE.
func TestAdmin(t *testing.T) {
	m := startMocks(t)
	cfg := m.config(t, "")
	cfg.Admin.Token = gateway.NewSecret("admin-token")
	g := startGateway(t, cfg, gateway.Options{})
	get := func(path, tok string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, g.url+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	for _, tok := range []string{"", "wrong", "admin-tokenX"} {
		resp := get("/admin/state", tok)
		resp.Body.Close()
		assert.Equal(t, 401, resp.StatusCode, tok)
	}
	resp := get("/admin/state", "admin-token")
	var st gateway.State
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	resp.Body.Close()
	assert.NotEmpty(t, st.ConfigVersion)
	require.Len(t, st.Policy.Targets, 3)
	assert.Equal(t, "closed", string(st.Policy.Targets[0].Breaker))

	resp = get("/admin/events", "admin-token")
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	rd := bufio.NewReader(resp.Body)
	_, err := rd.ReadString('\n') // the opening comment
	require.NoError(t, err)
	g.do(t, false, nil)
	seen := map[string]bool{}
	for !seen["request.end"] {
		line, err := rd.ReadString('\n')
		require.NoError(t, err)
		if k, ok := strings.CutPrefix(strings.TrimSpace(line), "event: "); ok {
			seen[k] = true
		}
	}
	assert.True(t, seen["request.start"] && seen["attempt.start"] && seen["attempt.end"])
}

// TestMetrics: the scrape has the brownout_ metrics with Prometheus names.
func TestMetrics(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	addFault(t, m.alpha, `{kind: http_error, status: 429}`)
	g.do(t, false, nil)
	resp, err := http.Get(g.url + "/metrics")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	for _, want := range []string{
		`brownout_requests_total{outcome="degraded",route="chat",tier="equivalent"} 1`,
		`brownout_attempts_total{class="rate_limited",model="gpt-4o",provider="alpha",target="alpha:gpt-4o"} 1`,
		`brownout_attempts_total{class="ok",model="claude-sonnet",provider="beta",target="beta:claude-sonnet"} 1`,
		`brownout_fallbacks_total{from="alpha:gpt-4o",route="chat",to="beta:claude-sonnet"} 1`,
		`brownout_time_to_first_token_seconds_bucket{model="claude-sonnet",provider="beta",target="beta:claude-sonnet",le="+Inf"} 1`,
		`brownout_attempt_duration_seconds_count{model="claude-sonnet",provider="beta",target="beta:claude-sonnet"} 1`,
		`brownout_tokens_total{kind="output",model="claude-sonnet",provider="beta",target="beta:claude-sonnet"} 24`,
		`brownout_cost_dollars_total{model="claude-sonnet",provider="beta",target="beta:claude-sonnet"}`,
		`brownout_breaker_state{model="gpt-4o",provider="alpha",state="closed",target="alpha:gpt-4o"} 1`,
		`brownout_retry_budget_allowed_retries{route="chat"}`,
		`brownout_requests_in_flight 0`,
	} {
		assert.Contains(t, text, want)
	}
}

// TestPanicRecovered: a panic while serving one request is a 500 for it,
// and the gateway keeps serving.
func TestPanicRecovered(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{Events: events.SinkFunc(func(e events.Event) {
		if e.Kind == events.AttemptStart && e.Attempt == 1 && strings.HasSuffix(e.RequestID, "-boom") {
			panic("boom")
		}
	}), Logger: discardLogger()})
	resp := post(t, g.url, "/v1/chat/completions", openaiBody(false), map[string]string{"X-Request-Id": "x-boom"})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 500, resp.StatusCode)
	assert.Contains(t, string(b), "internal gateway error")
	r := g.do(t, false, nil)
	assert.Equal(t, 200, r.status)
}

// TestAlertDelivery: a fired alert goes to every sink; a webhook that fails
// is retried, then reported as alert.delivered with OK false.
func TestAlertDelivery(t *testing.T) {
	var got atomic.Int32
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p map[string]any
		_ = json.NewDecoder(r.Body).Decode(&p)
		if p["alert"] == "FallbackRateCritical" && r.Header.Get("X-Token") == "hook-secret" {
			got.Add(1)
		}
	}))
	defer ok.Close()
	var tries atomic.Int32
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tries.Add(1)
		w.WriteHeader(502)
	}))
	defer broken.Close()
	m := startMocks(t)
	log := &events.Log{}
	cfg := m.config(t, fmt.Sprintf(`alerts:
  evaluate_every: 1h
  rules:
    - {name: FallbackRateCritical, kind: fallback_rate, severity: page, window: 5m, threshold: 25%%, min_requests: 2}
  sinks:
    - {name: oncall, kind: webhook, url: "%s", headers: {X-Token: hook-secret}, retries: 1, backoff: 1ms, timeout: 1s}
    - {name: broken, kind: webhook, url: "%s/secret-path", retries: 2, backoff: 1ms, timeout: 1s}
    - {name: log, kind: log}
`, ok.URL, broken.URL))
	g := startGateway(t, cfg, gateway.Options{Events: log, Logger: discardLogger()})
	addFault(t, m.alpha, `{kind: http_error, status: 500}`)
	for range 3 {
		require.Equal(t, 200, g.do(t, false, nil).status)
	}
	fired := g.srv.EvaluateAlerts(time.Now())
	require.Len(t, fired, 1)
	assert.Equal(t, events.AlertFired, fired[0].Kind)
	deadline := time.Now().Add(5 * time.Second)
	var delivered []events.Event
	for time.Now().Before(deadline) && len(delivered) < 3 {
		delivered = nil
		for _, e := range log.Events() {
			if e.Kind == events.AlertDelivered {
				delivered = append(delivered, e)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.Len(t, delivered, 3)
	bySink := map[string]events.Event{}
	for _, e := range delivered {
		bySink[e.Sink] = e
	}
	assert.True(t, bySink["oncall"].OK)
	assert.True(t, bySink["log"].OK)
	assert.False(t, bySink["broken"].OK)
	assert.Contains(t, bySink["broken"].Reason, "502")
	assert.NotContains(t, bySink["broken"].Reason, "secret-path", "webhook URLs may hold tokens")
	assert.Equal(t, int32(3), tries.Load(), "one try and two retries")
	assert.Equal(t, int32(1), got.Load())

	resp, err := http.Get(g.url + "/metrics")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(b), `brownout_alert_deliveries_total{result="failed",sink="broken"} 1`)
	assert.Contains(t, string(b), `brownout_alerts_fired_total{rule="FallbackRateCritical",severity="page"} 1`)
}

// TestGracefulShutdown: a stream in flight when shutdown starts finishes.
func TestGracefulShutdown(t *testing.T) {
	m := mockprovider.StartTest(t, mockprovider.ProviderSpec{Name: "slow", Format: "openai", Seed: 1,
		Models: []mockprovider.ModelSpec{{Name: "m", TokensPerSecond: 100, OutputTokens: mockprovider.Length{Min: 30, Max: 30}}}})
	cfg, err := gateway.ParseConfig("g.yaml", []byte(fmt.Sprintf(`version: 1
providers: [{name: slow, kind: openai, base_url: "%s/v1"}]
routes: [{name: chat, targets: [{provider: slow, model: m}]}]
shutdown: {lame_duck: 0s, drain: 5s}
`, m.URL)), gateway.LoadOptions{})
	require.NoError(t, err)
	srv, err := gateway.New(cfg, gateway.Options{Logger: discardLogger()})
	require.NoError(t, err)
	defer srv.Close()
	ln, err := newListener()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	g := &gw{srv: srv, url: "http://" + ln.Addr().String()}
	resp := post(t, g.url, "/v1/chat/completions", openaiBody(true), nil)
	require.Equal(t, 200, resp.StatusCode)
	rd := bufio.NewReader(resp.Body)
	_, err = rd.ReadString('\n')
	require.NoError(t, err)
	cancel() // shutdown starts while the stream is in flight
	rest, err := io.ReadAll(rd)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Contains(t, string(rest), "data: [DONE]", "the stream drained to its end")
	require.NoError(t, <-served)
}

// TestExactCache: with cache.exact a fresh answer to the same normalized
// request is served without an upstream call, across formats.
func TestExactCache(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, "cache: {exact: true, ttl: 1h}\n"), gateway.Options{})
	first := g.do(t, false, nil)
	require.Equal(t, 200, first.status)
	again := g.do(t, true, nil) // streamed this time: same normalized request
	require.Equal(t, 200, again.status)
	assert.Equal(t, "hit", again.header.Get(gateway.HeaderCache))
	assert.Equal(t, first.text, again.text)
	assert.True(t, again.clean)
	assert.Len(t, m.alpha.Model().Journal(), 1, "served from the cache")
	other := post(t, g.url, "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"something else"}]}`, nil)
	other.Body.Close()
	assert.Empty(t, other.Header.Get(gateway.HeaderCache))
	assert.Len(t, m.alpha.Model().Journal(), 2)
}

// TestMetricsGenAI: target-labelled series also carry provider and model,
// so dashboards can group by either; the OpenTelemetry GenAI client
// metrics appear only when metrics.genai is on, with the semantic
// conventions' provider names (the mocks alpha and beta are spoken to as
// openai and anthropic).
func TestMetricsGenAI(t *testing.T) {
	scrape := func(g *gw) string {
		resp, err := http.Get(g.url + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	m := startMocks(t)
	off := startGateway(t, m.config(t, ""), gateway.Options{})
	off.do(t, false, nil)
	text := scrape(off)
	assert.Contains(t, text, `brownout_attempts_total{class="ok",model="gpt-4o",provider="alpha",target="alpha:gpt-4o"} 1`)
	assert.NotContains(t, text, "gen_ai_", "GenAI metrics are off by default")

	on := startGateway(t, m.config(t, "metrics: {genai: true}\n"), gateway.Options{})
	addFault(t, m.alpha, `{kind: http_error, status: 429}`)
	on.do(t, false, nil)
	text = scrape(on)
	for _, want := range []string{
		`gen_ai_client_token_usage_count{gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-sonnet",gen_ai_token_type="input"} 1`,
		`gen_ai_client_token_usage_sum{gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-sonnet",gen_ai_token_type="output"} 24`,
		`gen_ai_client_operation_duration_seconds_count{error_type="",gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-sonnet"} 1`,
		`gen_ai_client_operation_duration_seconds_count{error_type="rate_limited",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="gpt-4o"} 1`,
	} {
		assert.Contains(t, text, want)
	}
}
