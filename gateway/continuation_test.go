package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/openai"
)

// upstream is a scripted OpenAI-compatible provider on loopback: play
// answers each request it receives (decoded) with raw SSE text; a stream
// without its finish and [DONE] is a stream cut mid-answer.
type upstream struct {
	URL  string
	mu   sync.Mutex
	reqs []*llm.Request
}

func startUpstream(t *testing.T, play func(req *llm.Request, n int) (status int, body string)) *upstream {
	t.Helper()
	u := &upstream{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		req, err := openai.Codec{}.DecodeRequest(b)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		u.mu.Lock()
		u.reqs = append(u.reqs, req)
		n := len(u.reqs)
		u.mu.Unlock()
		status, body := play(req, n)
		if status != 200 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	u.URL = srv.URL
	return u
}

func (u *upstream) requests() []*llm.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*llm.Request(nil), u.reqs...)
}

// chunks writes an OpenAI stream of model: one chunk per delta, then (when
// finish is set) the finish chunk, the usage chunk when usage is set, and
// [DONE]. Raw lines in deltas (starting "data: ") go out as they are.
func chunks(model string, deltas []string, finish string, usage *llm.Usage) string {
	var b strings.Builder
	line := func(delta, fin string, u *llm.Usage) {
		ch := map[string]any{"id": "chatcmpl-" + model, "object": "chat.completion.chunk", "created": 1, "model": model}
		if u != nil {
			ch["choices"] = []any{}
			ch["usage"] = map[string]int{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens}
		} else {
			c := map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": nil}
			if fin != "" {
				c["finish_reason"] = fin
			} else {
				c["delta"] = map[string]any{"content": delta}
			}
			ch["choices"] = []any{c}
		}
		j, _ := json.Marshal(ch)
		fmt.Fprintf(&b, "data: %s\n\n", j)
	}
	for _, d := range deltas {
		if strings.HasPrefix(d, "data: ") {
			b.WriteString(d + "\n\n")
			continue
		}
		line(d, "", nil)
	}
	if finish == "" {
		return b.String() // cut: the connection closes here
	}
	line("", finish, nil)
	if usage != nil {
		line("", "", usage)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// hasPrefill reports whether req ends with an assistant message (the
// partial answer), and returns its text.
func hasPrefill(req *llm.Request) (string, bool) {
	if len(req.Messages) == 0 {
		return "", false
	}
	m := req.Messages[len(req.Messages)-1]
	if m.Role != llm.RoleAssistant {
		return "", false
	}
	var s strings.Builder
	for _, p := range m.Content {
		s.WriteString(p.Text)
	}
	return s.String(), true
}

// pair starts a gateway whose route "chat" has a primary (no prefill) and
// a fall-back; extraRoute is added to the route, extra to the file.
func pair(t *testing.T, primary, fallback *upstream, fallbackCaps, extraRoute, extra string) *gw {
	t.Helper()
	text := fmt.Sprintf(`version: 1
providers:
  - {name: p, kind: openai, base_url: "%s/v1", api_key: sk-p}
  - {name: f, kind: openai, base_url: "%s/v1", api_key: sk-f}
routes:
  - name: chat
%s
    targets:
      - {provider: p, model: primary-model, retry: {attempts: 1}, capabilities: {streaming: true}}
      - {provider: f, model: fallback-model, priority: 1, retry: {attempts: 1}, capabilities: %s}
policy:
  max_attempts: 4
  breaker: {min_samples: 1000}
%s`, primary.URL, fallback.URL, extraRoute, fallbackCaps, extra)
	cfg, err := gateway.ParseConfig("pair.yaml", []byte(text), gateway.LoadOptions{})
	require.NoError(t, err)
	return startGateway(t, cfg, gateway.Options{Logger: discardLogger()})
}

const prefillCaps = "{streaming: true, prefill: true}"

// stream is what a client read of an OpenAI stream: text, models named by
// the chunks, usage, the in-band error, [DONE], and the trailer.
type stream struct {
	text    string
	deltas  int
	models  []string
	usage   *llm.Usage
	errBody string
	done    bool
	header  http.Header
	trailer http.Header
}

func readStream(t *testing.T, g *gw, body string) *stream {
	t.Helper()
	resp := post(t, g.url, "/v1/chat/completions", body, nil)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	s := &stream{header: resp.Header}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			s.done = true
			continue
		}
		var ch struct {
			Model   string `json:"model"`
			Choices []struct {
				Delta struct {
					Content *string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				Prompt     int `json:"prompt_tokens"`
				Completion int `json:"completion_tokens"`
			} `json:"usage"`
			Error json.RawMessage `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &ch), data)
		if len(ch.Error) > 0 {
			s.errBody = string(ch.Error)
			continue
		}
		if len(s.models) == 0 || s.models[len(s.models)-1] != ch.Model {
			s.models = append(s.models, ch.Model)
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != nil && *c.Delta.Content != "" {
				s.text += *c.Delta.Content
				s.deltas++
			}
		}
		if ch.Usage != nil {
			s.usage = &llm.Usage{InputTokens: ch.Usage.Prompt, OutputTokens: ch.Usage.Completion}
		}
	}
	require.NoError(t, sc.Err())
	s.trailer = resp.Trailer
	return s
}

func streamBody(extra string) string {
	return `{"model":"chat","stream":true` + extra + `,"messages":[{"role":"user","content":"where did the cat sit?"}]}`
}

func only(evs []events.Event, k events.Kind) []events.Event {
	var out []events.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// cutPrimary streams "The cat sat on" and is cut.
func cutPrimary(t *testing.T) *upstream {
	return startUpstream(t, func(*llm.Request, int) (int, string) {
		return 200, chunks("primary-model", []string{"The", " cat", " sat", " on"}, "", nil)
	})
}

func TestContinuationRestartOverlap(t *testing.T) {
	primary := cutPrimary(t)
	fallback := startUpstream(t, func(req *llm.Request, _ int) (int, string) {
		// An OpenAI-compatible model given the prefill restarts its answer.
		return 200, chunks("fallback-model", []string{"The cat", " sat on", " the", " mat."}, "stop", nil)
	})
	g := pair(t, primary, fallback, prefillCaps, "", "")
	s := readStream(t, g, streamBody(""))

	require.Equal(t, "The cat sat on the mat.", s.text, "the overlap is skipped, never repeated")
	require.True(t, s.done, "a clean end")
	require.Empty(t, s.errBody)
	require.Equal(t, []string{"chat"}, s.models, "every chunk names the model the client asked for, before and after the continuation")
	require.Equal(t, "p:primary-model", s.header.Get(gateway.HeaderTarget))
	require.Equal(t, "f:fallback-model", s.trailer.Get(gateway.HeaderTarget), "the trailer names the target that produced the end")

	reqs := fallback.requests()
	require.Len(t, reqs, 1)
	prefill, ok := hasPrefill(reqs[0])
	require.True(t, ok)
	require.Equal(t, "The cat sat on", prefill)

	conts := only(g.log.Events(), events.StreamContinuation)
	require.Len(t, conts, 1)
	c := conts[0]
	assert.Equal(t, events.OutcomeContinued, c.Outcome)
	assert.Equal(t, "p:primary-model", c.From)
	assert.Equal(t, "f:fallback-model", c.To)
	assert.Contains(t, c.Reason, "restart: 14 bytes of overlap skipped")
	assert.Equal(t, 1.0, metricValue(t, g, `brownout_stream_continuations_total{outcome="continued",route="chat"}`))
}

func TestContinuationDiverges(t *testing.T) {
	primary := cutPrimary(t)
	fallback := startUpstream(t, func(*llm.Request, int) (int, string) {
		return 200, chunks("fallback-model", []string{"The cat", " sat", " under", " the table."}, "stop", nil)
	})
	g := pair(t, primary, fallback, prefillCaps, "", "")
	s := readStream(t, g, streamBody(""))

	require.Equal(t, "The cat sat on", s.text, "nothing of the diverging answer reaches the client")
	require.False(t, s.done, "never a clean end")
	require.Contains(t, s.errBody, "cut_mid_stream", "the in-band error is the failure that cut the stream")
	conts := only(g.log.Events(), events.StreamContinuation)
	require.Len(t, conts, 1)
	assert.Equal(t, events.OutcomeFailed, conts[0].Outcome)
	assert.Equal(t, "p:primary-model", conts[0].From)
	assert.Equal(t, "f:fallback-model", conts[0].To)
	ends := only(g.log.Events(), events.AttemptEnd)
	require.Len(t, ends, 2)
	assert.Equal(t, "invalid_output", ends[1].Class)
	reqEnd := only(g.log.Events(), events.RequestEnd)
	require.Len(t, reqEnd, 1)
	assert.Equal(t, events.OutcomeFailed, reqEnd[0].Outcome)
}

func TestContinuationPrefillRejectedThenReplay(t *testing.T) {
	primary := cutPrimary(t)
	fallback := startUpstream(t, func(req *llm.Request, _ int) (int, string) {
		if _, ok := hasPrefill(req); ok {
			return 400, `{"error":{"message":"assistant prefill is not supported","type":"invalid_request_error","param":"messages","code":null}}`
		}
		return 200, chunks("fallback-model", []string{"The cat sat", " on", " the mat."}, "stop", nil)
	})
	g := pair(t, primary, fallback, prefillCaps, "    replay: true", "")
	s := readStream(t, g, streamBody(""))

	require.Equal(t, "The cat sat on the mat.", s.text)
	require.True(t, s.done)
	reqs := fallback.requests()
	require.Len(t, reqs, 2, "the prefill, then the replay")
	_, first := hasPrefill(reqs[0])
	_, second := hasPrefill(reqs[1])
	require.True(t, first)
	require.False(t, second, "the replay is the original request")
	conts := only(g.log.Events(), events.StreamContinuation)
	require.Len(t, conts, 1)
	assert.Equal(t, events.OutcomeReplayed, conts[0].Outcome)
	assert.Equal(t, "f:fallback-model", s.trailer.Get(gateway.HeaderTarget))
}

// A fall-back that ignores the prefill (it answers from scratch with an
// opener) fails the join check; on a route with replay: true it is asked
// again with the original request, and its replay completes the answer.
func TestContinuationIgnoredPrefillThenReplay(t *testing.T) {
	primary := cutPrimary(t)
	fallback := startUpstream(t, func(req *llm.Request, _ int) (int, string) {
		if _, ok := hasPrefill(req); ok {
			return 200, chunks("fallback-model", []string{"Sure!", " The cat", " sat on the mat."}, "stop", nil)
		}
		return 200, chunks("fallback-model", []string{"The cat sat", " on", " the mat."}, "stop", nil)
	})
	g := pair(t, primary, fallback, prefillCaps, "    replay: true", "")
	s := readStream(t, g, streamBody(""))

	require.Equal(t, "The cat sat on the mat.", s.text)
	require.True(t, s.done)
	require.Empty(t, s.errBody)
	reqs := fallback.requests()
	require.Len(t, reqs, 2, "the prefill, then the replay")
	_, second := hasPrefill(reqs[1])
	require.False(t, second, "the replay is the original request")
	conts := only(g.log.Events(), events.StreamContinuation)
	require.Len(t, conts, 2)
	assert.Equal(t, events.OutcomeFailed, conts[0].Outcome)
	assert.Contains(t, conts[0].Reason, "does not join")
	assert.Equal(t, events.OutcomeReplayed, conts[1].Outcome)
}

// The prefill is sent without the whitespace the partial answer ends with
// (Anthropic rejects a prefill that ends with whitespace); the space the
// fall-back writes again before its next word is not forwarded twice.
func TestContinuationPrefillTrimmed(t *testing.T) {
	primary := startUpstream(t, func(*llm.Request, int) (int, string) {
		return 200, chunks("primary-model", []string{"The", " cat", " sat", " on", " "}, "", nil)
	})
	fallback := startUpstream(t, func(*llm.Request, int) (int, string) {
		return 200, chunks("fallback-model", []string{" the", " mat."}, "stop", nil)
	})
	g := pair(t, primary, fallback, prefillCaps, "", "")
	s := readStream(t, g, streamBody(""))
	require.Equal(t, "The cat sat on the mat.", s.text)
	require.True(t, s.done)
	prefill, ok := hasPrefill(fallback.requests()[0])
	require.True(t, ok)
	require.Equal(t, "The cat sat on", prefill)
}

// continuation.instruction adds the continuation instruction to the
// prefill request, after the client's system prompt.
func TestContinuationInstruction(t *testing.T) {
	for _, on := range []bool{false, true} {
		fallback := startUpstream(t, func(*llm.Request, int) (int, string) {
			return 200, chunks("fallback-model", []string{" the", " mat."}, "stop", nil)
		})
		extra := ""
		if on {
			extra = "continuation: {instruction: true}"
		}
		g := pair(t, cutPrimary(t), fallback, prefillCaps, "", extra)
		s := readStream(t, g, `{"model":"chat","stream":true,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"where did the cat sit?"}]}`)
		require.Equal(t, "The cat sat on the mat.", s.text)
		reqs := fallback.requests()
		require.Len(t, reqs, 1)
		var roles []llm.Role
		for _, m := range reqs[0].Messages {
			roles = append(roles, m.Role)
		}
		if !on {
			require.Equal(t, []llm.Role{llm.RoleSystem, llm.RoleUser, llm.RoleAssistant}, roles)
			continue
		}
		require.Equal(t, []llm.Role{llm.RoleSystem, llm.RoleSystem, llm.RoleUser, llm.RoleAssistant}, roles)
		require.Equal(t, "be brief", reqs[0].Messages[0].Text())
		require.Equal(t, lifecycle.Instruction, reqs[0].Messages[1].Text())
	}
}

func TestContinuationReplayDiverges(t *testing.T) {
	primary := cutPrimary(t)
	fallback := startUpstream(t, func(*llm.Request, int) (int, string) {
		return 200, chunks("fallback-model", []string{"A cat sat", " on the mat."}, "stop", nil)
	})
	g := pair(t, primary, fallback, "{streaming: true}", "    replay: true", "")
	s := readStream(t, g, streamBody(""))
	require.Equal(t, "The cat sat on", s.text)
	require.False(t, s.done)
	require.NotEmpty(t, s.errBody)
	conts := only(g.log.Events(), events.StreamContinuation)
	require.Len(t, conts, 1)
	assert.Equal(t, events.OutcomeFailed, conts[0].Outcome)
}

const badEvent = "data: {\"id\":\"chatcmpl-x\",\"choices\":[{\"delta\":{\"content\":"

func TestMalformedEventSkipped(t *testing.T) {
	tests := []struct {
		name    string
		bad     int
		extra   string
		text    string
		done    bool
		skipped int
	}{
		{name: "one malformed event is skipped", bad: 1, text: "The cat sat on the mat.", done: true, skipped: 1},
		{name: "up to the limit", bad: 2, extra: "  max_malformed_events: 2", text: "The cat sat on the mat.", done: true, skipped: 2},
		{name: "past the limit the attempt fails", bad: 2, extra: "  max_malformed_events: 1", text: "The cat", skipped: 1},
		{name: "none tolerated", bad: 1, extra: "  max_malformed_events: -1", text: "The cat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deltas := []string{"The", " cat"}
			for range tt.bad {
				deltas = append(deltas, badEvent)
			}
			deltas = append(deltas, " sat", " on", " the", " mat.")
			primary := startUpstream(t, func(*llm.Request, int) (int, string) {
				return 200, chunks("primary-model", deltas, "stop", nil)
			})
			fallback := startUpstream(t, func(*llm.Request, int) (int, string) {
				return 500, `{"error":{"message":"down","type":"server_error"}}`
			})
			g := pair(t, primary, fallback, "{streaming: true}", "", tt.extra)
			s := readStream(t, g, streamBody(""))
			require.Equal(t, tt.text, s.text)
			require.Equal(t, tt.done, s.done)
			mal := only(g.log.Events(), events.StreamMalformed)
			require.Len(t, mal, tt.skipped)
			for i, e := range mal {
				assert.Equal(t, "p:primary-model", e.Target)
				assert.Equal(t, float64(i+1), e.Value)
				assert.Equal(t, "unparseable event after token 2 skipped", e.Reason)
			}
			if tt.skipped > 0 {
				assert.Equal(t, float64(tt.skipped), metricValue(t, g, `brownout_stream_malformed_events_total{model="primary-model",provider="p",target="p:primary-model"}`))
			}
			end := only(g.log.Events(), events.AttemptEnd)[0]
			if tt.done {
				assert.Equal(t, "ok", end.Class)
			} else {
				assert.Equal(t, "malformed_stream", end.Class)
				assert.Contains(t, s.errBody, "malformed")
			}
		})
	}
}

// A stream continued with max_tokens: the fall-back gets the budget left,
// the client receives max_tokens deltas, and the usage it reads counts what
// it received, while the attempt records keep what each upstream billed.
func TestContinuationBudgetAndUsage(t *testing.T) {
	primary := startUpstream(t, func(*llm.Request, int) (int, string) {
		return 200, chunks("primary-model", []string{"a", " b", " c", " d", " e", " f"}, "", nil)
	})
	fallback := startUpstream(t, func(req *llm.Request, _ int) (int, string) {
		var deltas []string
		for i := range req.MaxTokens {
			deltas = append(deltas, fmt.Sprintf(" %d", i))
		}
		// Billed: the prompt (10) and the prefill (6) as input, its own output.
		return 200, chunks("fallback-model", deltas, "length", &llm.Usage{InputTokens: 16, OutputTokens: len(deltas)})
	})
	g := pair(t, primary, fallback, prefillCaps, "", "")
	s := readStream(t, g, streamBody(`,"max_tokens":10,"stream_options":{"include_usage":true}`))

	require.Equal(t, "a b c d e f 0 1 2 3", s.text)
	require.Equal(t, 10, s.deltas, "max_tokens deltas, no more")
	require.True(t, s.done)
	reqs := fallback.requests()
	require.Len(t, reqs, 1)
	require.Equal(t, 4, reqs[0].MaxTokens, "the continuation budget: max_tokens less what was delivered")
	require.NotNil(t, s.usage)
	require.Equal(t, 10, s.usage.OutputTokens, "the usage counts what the client received")
	require.Equal(t, 10, s.usage.InputTokens, "the client's prompt, not the prefill")

	ends := only(g.log.Events(), events.AttemptEnd)
	require.Len(t, ends, 2)
	assert.Equal(t, 16, ends[1].InputTokens, "the attempt record keeps what the fall-back billed")
	assert.Equal(t, 4, ends[1].OutputTokens)
}

func metricValue(t *testing.T, g *gw, series string) float64 {
	t.Helper()
	resp, err := http.Get(g.url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			_, err := fmt.Sscan(v, &f)
			require.NoError(t, err)
			return f
		}
	}
	t.Fatalf("no series %s in /metrics", series)
	return 0
}
