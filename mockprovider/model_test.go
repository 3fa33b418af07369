package mockprovider_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func userReq(model, text string) *llm.Request {
	return &llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(text)}}}}
}

func newModel(t testing.TB, s mockprovider.ProviderSpec) *mockprovider.Model {
	t.Helper()
	m, err := mockprovider.NewModel(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func realistic() mockprovider.ProviderSpec {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.Models[0].TTFT = faults.Latency{Median: yamlfile.Duration(400 * time.Millisecond), P99: yamlfile.Duration(2 * time.Second)}
	s.Models[0].TokensPerSecond = 60
	s.Models[0].Jitter = 0.3
	s.Models[0].OutputTokens = mockprovider.Length{Min: 20, Max: 200}
	s.Faults = []faults.Spec{
		{Kind: faults.KindHTTPError, Status: 429, Selector: faults.Selector{Probability: pct(0.2)}},
		{Kind: faults.KindStall, For: yamlfile.Duration(5 * time.Second), Selector: faults.Selector{Probability: pct(0.3)}},
	}
	return s
}

func pct(v float64) *yamlfile.Percent { p := yamlfile.Percent(v); return &p }

// TestPlanDeterminism: the same seed and the same requests give the same
// plans; another seed gives other plans.
func TestPlanDeterminism(t *testing.T) {
	run := func(seed uint64) []*mockprovider.Plan {
		s := realistic()
		s.Seed = seed
		m := newModel(t, s)
		var out []*mockprovider.Plan
		for i := range 50 {
			now := t0.Add(time.Duration(i) * 100 * time.Millisecond)
			req := userReq("gpt-4o", fmt.Sprintf("question %d", i))
			req.Stream = i%2 == 0
			p := m.Plan(now, req, mockprovider.Meta{RequestID: fmt.Sprint(i)})
			m.Finish(now.Add(p.End()), p)
			out = append(out, p)
		}
		return out
	}
	a, b, c := run(1), run(1), run(2)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different plans")
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds, same plans")
	}
	faulted := 0
	for _, p := range a {
		if p.Fault != "" {
			faulted++
		}
		if p.Status == 200 && p.Response.Usage.OutputTokens != len(p.Chunks) {
			t.Fatalf("usage %d for %d chunks", p.Response.Usage.OutputTokens, len(p.Chunks))
		}
	}
	if faulted == 0 || faulted == len(a) {
		t.Fatalf("%d of %d plans faulted", faulted, len(a))
	}
}

func TestPlanTiming(t *testing.T) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.Models[0].TTFT = faults.Fixed(500 * time.Millisecond)
	s.Models[0].TokensPerSecond = 20
	m := newModel(t, s)
	p := m.Plan(t0, userReq("gpt-4o", "hi"), mockprovider.Meta{})
	if len(p.TokenTimes) != 40 || p.TTFT != 500*time.Millisecond || p.TokenTimes[0] != p.TTFT ||
		p.TokenTimes[39] != 500*time.Millisecond+39*50*time.Millisecond {
		t.Fatalf("ttft %v, %d tokens, last %v", p.TTFT, len(p.TokenTimes), p.TokenTimes[len(p.TokenTimes)-1])
	}
}

func TestPlanValidation(t *testing.T) {
	s := spec("anthropic", llm.FormatAnthropic, "claude-*")
	s.Models[0].ContextWindow = 100
	m := newModel(t, s)
	tests := []struct {
		name   string
		req    *llm.Request
		status int
		typ    llm.ErrorType
	}{
		{"unknown model", userReq("gpt-4o", "hi"), 404, llm.ErrNotFound},
		{"glob model", userReq("claude-haiku", "hi"), 200, ""},
		{"context window", userReq("claude-haiku", strings.Repeat("x", 400)), 400, llm.ErrContextLength},
		{"prefill refused", &llm.Request{Model: "claude-haiku", Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}},
			{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("{")}},
		}}, 400, llm.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := m.Plan(t0, tt.req, mockprovider.Meta{})
			defer m.Finish(t0, p)
			if p.Status != tt.status || (p.Err != nil && p.Err.Type != tt.typ) {
				t.Fatalf("status %d err %+v", p.Status, p.Err)
			}
		})
	}
	s.Models[0].Prefill = mockprovider.PrefillContinue
	m = newModel(t, s)
	p := m.Plan(t0, tests[3].req, mockprovider.Meta{})
	if p.Status != 200 {
		t.Fatalf("prefill accepted: %d %+v", p.Status, p.Err)
	}
}

func TestPlanContent(t *testing.T) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.Rules = append(s.Rules, mockprovider.Rule{Regex: `(?i)^summari[sz]e`, Answer: "A summary."})
	m := newModel(t, s)
	weather := llm.Tool{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","required":["city","days"],"properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1,"maximum":7}}}`)}
	search := llm.Tool{Name: "search", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
	tests := []struct {
		name  string
		req   func() *llm.Request
		check func(t *testing.T, p *mockprovider.Plan)
	}{
		{"regex rule", func() *llm.Request { return userReq("gpt-4o", "Summarize this") }, func(t *testing.T, p *mockprovider.Plan) {
			if p.Response.Content != "A summary." {
				t.Fatalf("%q", p.Response.Content)
			}
		}},
		{"filler of the planned length", func() *llm.Request { return userReq("gpt-4o", "anything") }, func(t *testing.T, p *mockprovider.Plan) {
			if len(p.Chunks) != 40 || len(p.Response.Content) != 160 || p.Response.FinishReason != llm.FinishStop {
				t.Fatalf("%d chunks, %q", len(p.Chunks), p.Response.Content)
			}
		}},
		{"max_tokens truncates", func() *llm.Request { r := userReq("gpt-4o", "anything"); r.MaxTokens = 7; return r }, func(t *testing.T, p *mockprovider.Plan) {
			if len(p.Chunks) != 7 || p.Response.FinishReason != llm.FinishLength || p.Response.Usage.OutputTokens != 7 {
				t.Fatalf("%d chunks, %s", len(p.Chunks), p.Response.FinishReason)
			}
		}},
		{"rule tool call when offered", func() *llm.Request {
			r := userReq("gpt-4o", "weather in Paris?")
			r.Tools = []llm.Tool{search, weather}
			return r
		}, func(t *testing.T, p *mockprovider.Plan) {
			tc := p.Response.ToolCalls
			if len(tc) != 1 || tc[0].Name != "get_weather" || tc[0].Arguments != `{"city":"Paris"}` || p.Response.FinishReason != llm.FinishToolCalls || !strings.HasPrefix(tc[0].ID, "call_") {
				t.Fatalf("%+v", p.Response)
			}
		}},
		{"rule tool call not offered", func() *llm.Request { return userReq("gpt-4o", "weather in Paris?") }, func(t *testing.T, p *mockprovider.Plan) {
			if len(p.Response.ToolCalls) != 0 || p.Response.Content == "" {
				t.Fatalf("%+v", p.Response)
			}
		}},
		{"tool_choice none", func() *llm.Request {
			r := userReq("gpt-4o", "weather in Paris?")
			r.Tools = []llm.Tool{weather}
			r.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceNone}
			return r
		}, func(t *testing.T, p *mockprovider.Plan) {
			if len(p.Response.ToolCalls) != 0 {
				t.Fatalf("%+v", p.Response)
			}
		}},
		{"tool_choice required generates arguments from the schema", func() *llm.Request {
			r := userReq("gpt-4o", "hello")
			r.Tools = []llm.Tool{weather}
			r.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceRequired}
			return r
		}, func(t *testing.T, p *mockprovider.Plan) {
			var args struct {
				City string `json:"city"`
				Days int    `json:"days"`
			}
			tc := p.Response.ToolCalls
			if len(tc) != 1 || json.Unmarshal([]byte(tc[0].Arguments), &args) != nil || args.City == "" || args.Days < 1 || args.Days > 7 {
				t.Fatalf("%+v", p.Response)
			}
		}},
		{"json_object", func() *llm.Request {
			r := userReq("gpt-4o", "hello")
			r.ResponseFormat = &llm.ResponseFormat{Type: llm.ResponseJSONObject}
			return r
		}, func(t *testing.T, p *mockprovider.Plan) {
			if !json.Valid([]byte(p.Response.Content)) {
				t.Fatalf("%q", p.Response.Content)
			}
		}},
		{"non-JSON rule answer with a schema", func() *llm.Request {
			r := userReq("gpt-4o", "capital of France?")
			r.ResponseFormat = &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Schema: json.RawMessage(`{"type":"object","properties":{"capital":{"type":"string"}},"required":["capital"]}`)}
			return r
		}, func(t *testing.T, p *mockprovider.Plan) {
			var v map[string]string
			if json.Unmarshal([]byte(p.Response.Content), &v) != nil || v["capital"] == "" {
				t.Fatalf("%q", p.Response.Content)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := m.Plan(t0, tt.req(), mockprovider.Meta{})
			defer m.Finish(t0, p)
			if p.Status != 200 {
				t.Fatalf("status %d %+v", p.Status, p.Err)
			}
			tt.check(t, p)
			if p.Response.Usage.OutputTokens != len(p.Chunks) {
				t.Fatalf("usage %d, %d chunks", p.Response.Usage.OutputTokens, len(p.Chunks))
			}
		})
	}
}

func TestPromptTokens(t *testing.T) {
	req := userReq("m", strings.Repeat("abcd", 25)) // 100 bytes = 25 tokens
	if got := mockprovider.PromptTokens(req); got != 3+4+25 {
		t.Fatalf("got %d", got)
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, URL: "https://x/y.png"}}})
	if got := mockprovider.PromptTokens(req); got != 3+4+25+4+85 {
		t.Fatalf("with an image: %d", got)
	}
}

func TestPromptCache(t *testing.T) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.PromptCache = &mockprovider.CacheSpec{TTL: yamlfile.Duration(5 * time.Minute), MinTokens: 50}
	m := newModel(t, s)
	system := llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart(strings.Repeat("You are helpful. ", 30))}}
	ask := func(now time.Time, q string) int {
		req := &llm.Request{Model: "gpt-4o", Messages: []llm.Message{system, {Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(q)}}}}
		p := m.Plan(now, req, mockprovider.Meta{})
		m.Finish(now, p)
		return p.Response.Usage.CachedInputTokens
	}
	if got := ask(t0, "first"); got != 0 {
		t.Fatalf("cold cache: %d cached", got)
	}
	systemTokens := 3 + 4 + faults.CountTokens(system.Text())
	if got := ask(t0.Add(time.Minute), "second"); got != systemTokens {
		t.Fatalf("warm cache: %d cached, want the system prompt's %d", got, systemTokens)
	}
	if got := ask(t0.Add(10*time.Minute), "third"); got != 0 {
		t.Fatalf("expired cache: %d cached", got)
	}
}

func TestCapacity(t *testing.T) {
	t.Run("rpm sheds with retry-after and headers", func(t *testing.T) {
		for _, f := range []llm.Format{llm.FormatOpenAI, llm.FormatAnthropic, llm.FormatGemini} {
			s := spec("p", f, "m")
			s.Capacity = mockprovider.Capacity{RPM: 60}
			m := newModel(t, s)
			var shed *mockprovider.Plan
			for i := range 61 {
				p := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
				m.Finish(t0, p)
				if p.Status != 200 {
					if i != 60 {
						t.Fatalf("%s: request %d shed", f, i)
					}
					shed = p
				}
			}
			if shed == nil || shed.Status != 429 || shed.Err.Type != llm.ErrRateLimit || shed.Err.RetryAfter != time.Second {
				t.Fatalf("%s: %+v", f, shed)
			}
			switch f {
			case llm.FormatOpenAI:
				if shed.Headers["x-ratelimit-remaining-requests"] != "0" || shed.Headers["x-ratelimit-limit-requests"] != "60" || shed.Headers["retry-after"] != "1" {
					t.Fatalf("headers %v", shed.Headers)
				}
			case llm.FormatAnthropic:
				if shed.Headers["anthropic-ratelimit-requests-remaining"] != "0" || shed.Headers["retry-after"] != "1" {
					t.Fatalf("headers %v", shed.Headers)
				}
			}
			// A second later one request fits again.
			if p := m.Plan(t0.Add(time.Second), userReq("m", "hi"), mockprovider.Meta{}); p.Status != 200 {
				t.Fatalf("%s: after refill: %d", f, p.Status)
			}
			if j := m.Journal(); j[60].Outcome != mockprovider.OutcomeShed || j[60].Shed != "rpm" {
				t.Fatalf("journal %+v", j[60])
			}
		}
	})
	t.Run("tpm", func(t *testing.T) {
		s := spec("p", llm.FormatOpenAI, "m")
		s.Capacity = mockprovider.Capacity{TPM: 100} // each request costs 3+4+1 + 40
		m := newModel(t, s)
		p1 := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
		p2 := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
		p3 := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
		if p1.Status != 200 || p2.Status != 200 || p3.Status != 429 || p3.Headers["x-ratelimit-remaining-tokens"] != "4" || p3.Err.ProviderType != "tokens" {
			t.Fatalf("%d %d %d %v", p1.Status, p2.Status, p3.Status, p3.Headers)
		}
	})
	t.Run("concurrency", func(t *testing.T) {
		for _, tc := range []struct {
			f      llm.Format
			status int
		}{{llm.FormatOpenAI, 429}, {llm.FormatAnthropic, 529}, {llm.FormatGemini, 503}} {
			s := spec("p", tc.f, "m")
			s.Models[0].Capacity = mockprovider.Capacity{MaxConcurrency: 2}
			m := newModel(t, s)
			a := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
			b := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
			c := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
			if a.Status != 200 || b.Status != 200 || c.Status != tc.status {
				t.Fatalf("%s: %d %d %d", tc.f, a.Status, b.Status, c.Status)
			}
			m.Finish(t0, c)
			m.Finish(t0, a)
			m.Finish(t0, a) // twice: released once
			d := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
			e := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
			if d.Status != 200 || e.Status != tc.status {
				t.Fatalf("%s after a release: %d %d", tc.f, d.Status, e.Status)
			}
			if st := m.Stats(); st.InFlight != 3 || st.Shed != 2 {
				t.Fatalf("stats %+v", st)
			}
		}
	})
	// Finishing releases the capacity of an attempt whose journal entry was
	// dropped (a bounded journal) or cleared (Reset), once.
	for _, lose := range []string{"dropped", "reset"} {
		t.Run("release after the entry is "+lose, func(t *testing.T) {
			s := spec("p", llm.FormatOpenAI, "m")
			s.Models[0].Capacity = mockprovider.Capacity{MaxConcurrency: 2}
			s.JournalSize = 10
			m := newModel(t, s)
			a := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
			b := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
			if lose == "dropped" {
				for range 30 { // shed, finished: pushes a and b out of the journal
					m.Finish(t0, m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{}))
				}
				if j := m.Journal(); len(j) > 10 || j[0].Seq <= b.Seq {
					t.Fatalf("journal still holds the open attempts: %d entries from seq %d", len(j), j[0].Seq)
				}
			} else {
				m.Reset()
			}
			if p := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{}); p.Status != 429 {
				t.Fatalf("with two open attempts: %d", p.Status)
			}
			m.Finish(t0, a)
			m.Finish(t0, a)
			m.Finish(t0, b)
			c := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
			d := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
			e := m.Plan(t0, userReq("m", "hi"), mockprovider.Meta{})
			if c.Status != 200 || d.Status != 200 || e.Status != 429 {
				t.Fatalf("after the releases: %d %d %d", c.Status, d.Status, e.Status)
			}
		})
	}
}

func TestJournalAndStats(t *testing.T) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	m := newModel(t, s)
	if _, err := m.AddFault(t0, faults.Spec{Kind: faults.KindTruncate, At: intp(8), Selector: faults.Selector{Header: map[string]string{"x-chaos": "1"}}}); err != nil {
		t.Fatal(err)
	}
	p := m.Plan(t0, userReq("gpt-4o", "hi"), mockprovider.Meta{RequestID: "a", Headers: map[string]string{"x-chaos": "1"}})
	m.Finish(t0.Add(time.Second), p)
	q := m.Plan(t0, userReq("gpt-4o", "hi"), mockprovider.Meta{RequestID: "b"})
	j := m.Journal()
	if len(j) != 2 || j[0].RequestID != "a" || j[0].Fault != "truncate" || !j[0].Corrupted || j[0].TokensSent != 8 ||
		j[0].Outcome != mockprovider.OutcomeOK || j[0].FinishReason != llm.FinishLength || !j[0].End.Equal(t0.Add(time.Second)) {
		t.Fatalf("%+v", j[0])
	}
	if j[1].Outcome != mockprovider.OutcomePending || j[1].Fault != "" {
		t.Fatalf("%+v", j[1])
	}
	m.Finish(t0, q)
	st := m.Stats()
	if st.Requests != 2 || st.Faulted != 1 || st.Corrupted != 1 || st.TokensSent != 48 || st.ByOutcome["ok"] != 2 || st.InFlight != 0 || st.Faults != 1 {
		t.Fatalf("%+v", st)
	}
	m.Reset()
	if len(m.Journal()) != 0 || len(m.Faults()) != 0 || m.Stats().Requests != 0 {
		t.Fatal("reset kept state")
	}
}

func TestJournalBounded(t *testing.T) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.JournalSize = 100
	m := newModel(t, s)
	for range 1000 {
		p := m.Plan(t0, userReq("gpt-4o", "hi"), mockprovider.Meta{})
		m.Finish(t0, p)
	}
	j := m.Journal()
	if len(j) > 100 || j[len(j)-1].Seq != 1000 || j[len(j)-1].Outcome != mockprovider.OutcomeOK {
		t.Fatalf("%d entries, last %+v", len(j), j[len(j)-1])
	}
}

func TestFiller(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 7, 100} {
		f := mockprovider.Filler(r, n)
		if faults.CountTokens(f) != n {
			t.Fatalf("Filler(%d) has %d tokens", n, faults.CountTokens(f))
		}
	}
}

func TestPlannedOutcome(t *testing.T) {
	tests := []struct {
		name   string
		spec   faults.Spec
		stream bool
		want   mockprovider.Outcome
		sent   int
	}{
		{"cut", faults.Spec{Kind: faults.KindCut, After: intp(10)}, true, mockprovider.OutcomeCut, 10},
		{"cut beyond the answer", faults.Spec{Kind: faults.KindCut, After: intp(100)}, true, mockprovider.OutcomeOK, 40},
		{"stall close", faults.Spec{Kind: faults.KindStall, After: intp(4), For: yamlfile.Duration(time.Second), Close: true}, true, mockprovider.OutcomeCut, 4},
		{"malformed", faults.Spec{Kind: faults.KindMalformedChunk, At: intp(3)}, true, mockprovider.OutcomeMalformed, 40},
		{"missing done", faults.Spec{Kind: faults.KindMissingDone}, true, mockprovider.OutcomeNoDone, 40},
		{"missing done, not streamed", faults.Spec{Kind: faults.KindMissingDone}, false, mockprovider.OutcomeOK, 40},
		{"reset", faults.Spec{Kind: faults.KindReset}, true, mockprovider.OutcomeReset, 0},
		{"in-band error", faults.Spec{Kind: faults.KindHTTPError, Status: 529, After: intp(7)}, true, mockprovider.OutcomeError, 7},
		{"hold", faults.Spec{Kind: faults.KindNoResponse, For: yamlfile.Duration(time.Second)}, false, mockprovider.OutcomeNoResponse, 0},
		{"error", faults.Spec{Kind: faults.KindAuthFailure}, false, mockprovider.OutcomeError, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spec("openai", llm.FormatOpenAI, "gpt-4o")
			s.Faults = []faults.Spec{tt.spec}
			m := newModel(t, s)
			req := userReq("gpt-4o", "hi")
			req.Stream = tt.stream
			p := m.Plan(t0, req, mockprovider.Meta{})
			o, sent := mockprovider.PlannedOutcome(p)
			if o != tt.want || sent != tt.sent {
				t.Fatalf("got %s %d, want %s %d", o, sent, tt.want, tt.sent)
			}
			m.Finish(t0.Add(p.End()), p)
			if e := m.Journal()[0]; e.Outcome != tt.want || e.TokensSent != tt.sent {
				t.Fatalf("journal %+v", e)
			}
		})
	}
}

// TestTokenTiming: tokens follow TTFT at the model's rate, each gap within
// ±jitter of the nominal gap, varied, averaging the nominal gap.
func TestTokenTiming(t *testing.T) {
	const gap = 20 * time.Millisecond // 50 tokens/s
	tests := []struct {
		name   string
		tps    float64
		jitter float64
		n      int
	}{
		{"jitter, long", 50, 0.2, 400},
		{"jitter, 1 token", 50, 0.2, 1},
		{"jitter, 2 tokens", 50, 0.2, 2},
		{"jitter, 7 tokens", 50, 0.2, 7},
		{"no jitter", 50, 0, 33},
		{"no rate: all at TTFT", 0, 0.2, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spec("openai", llm.FormatOpenAI, "gpt-4o")
			s.Models[0].TTFT = faults.Latency{Median: yamlfile.Duration(300 * time.Millisecond), P99: yamlfile.Duration(time.Second)}
			s.Models[0].TokensPerSecond = tt.tps
			s.Models[0].Jitter = yamlfile.Percent(tt.jitter)
			s.Models[0].OutputTokens = mockprovider.Length{Fixed: tt.n}
			m := newModel(t, s)
			var sum time.Duration
			distinct := map[time.Duration]bool{}
			for range 20 {
				p := m.Plan(t0, userReq("gpt-4o", "anything"), mockprovider.Meta{})
				if len(p.TokenTimes) != tt.n || p.TokenTimes[0] != p.TTFT || p.TTFT <= 0 {
					t.Fatalf("%d times for %d tokens, first %v, TTFT %v", len(p.TokenTimes), tt.n, p.TokenTimes[0], p.TTFT)
				}
				for i := 1; i < tt.n; i++ {
					g := p.TokenTimes[i] - p.TokenTimes[i-1]
					lo, hi := time.Duration(float64(gap)*(1-tt.jitter))-1, time.Duration(float64(gap)*(1+tt.jitter))+1
					if tt.tps == 0 {
						lo, hi = 0, 0
					}
					if g < lo || g > hi {
						t.Fatalf("gap %d is %v, want %v..%v", i, g, lo, hi)
					}
					sum += g
					distinct[g] = true
				}
				m.Finish(t0, p)
			}
			gaps := 20 * (tt.n - 1)
			switch {
			case gaps == 0:
			case tt.tps == 0:
			case tt.jitter == 0 && len(distinct) != 1:
				t.Fatalf("%d distinct gaps without jitter", len(distinct))
			case tt.jitter > 0 && len(distinct) < min(gaps, 100)/2:
				t.Fatalf("%d distinct gaps of %d", len(distinct), gaps)
			}
			if gaps >= 1000 {
				if mean := sum / time.Duration(gaps); mean < gap*99/100 || mean > gap*101/100 {
					t.Fatalf("mean gap %v, want about %v", mean, gap)
				}
			}
		})
	}
}

// TestStatsByKey: the per-status, per-outcome and per-model counters count
// every key, past the few the model keeps inline, and Reset clears them.
func TestStatsByKey(t *testing.T) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	m := newModel(t, s)
	want := map[string]int{}
	for i := range 60 {
		name := "gpt-4o"
		if i%2 == 1 {
			name = fmt.Sprintf("unknown-%d", i%25) // 404s, 13 distinct names
		}
		want[name]++
		p := m.Plan(t0, userReq(name, "hi"), mockprovider.Meta{})
		m.Finish(t0, p)
	}
	for i := range 20 { // 20 more names: past the inline keys
		name := fmt.Sprintf("other-%d", i)
		want[name]++
		m.Finish(t0, m.Plan(t0, userReq(name, "hi"), mockprovider.Meta{}))
	}
	st := m.Stats()
	if !reflect.DeepEqual(st.ByModel, want) {
		t.Fatalf("by model %v, want %v", st.ByModel, want)
	}
	if st.ByStatus[200] != 30 || st.ByStatus[404] != 50 || len(st.ByStatus) != 2 {
		t.Fatalf("by status %v", st.ByStatus)
	}
	if st.ByOutcome[mockprovider.OutcomeOK] != 30 || st.ByOutcome[mockprovider.OutcomeError] != 50 || len(st.ByOutcome) != 2 {
		t.Fatalf("by outcome %v", st.ByOutcome)
	}
	st.ByModel["gpt-4o"] = 0
	if m.Stats().ByModel["gpt-4o"] != 30 {
		t.Fatal("Stats shares its maps with the model")
	}
	m.Reset()
	if st := m.Stats(); len(st.ByModel) != 0 || len(st.ByStatus) != 0 || st.Requests != 0 {
		t.Fatalf("after reset %+v", st)
	}
}

// TestPlannerMatchesModel: a Planner planning into one reused plan gives
// the plans a Model gives for the same requests (faults that re-time
// tokens, error answers, structured answers and tool calls included), and
// reuses the plan's token times.
func TestPlannerMatchesModel(t *testing.T) {
	s := realistic()
	s.Faults = append(s.Faults,
		faults.Spec{Kind: faults.KindTokenRate, Rate: 30, Jitter: 0.5, Selector: faults.Selector{Probability: pct(0.3)}},
		faults.Spec{Kind: faults.KindHTTPError, Status: 429, Selector: faults.Selector{Probability: pct(0.2)}},
		faults.Spec{Kind: faults.KindRefusal, Selector: faults.Selector{Probability: pct(0.1)}})
	s.Models[0].OutputTokens = mockprovider.Length{Min: 1, Max: 700}
	plain := newModel(t, s)
	planner, err := mockprovider.NewPlanner(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b mockprovider.Plan
	reused, timed := 0, 0
	for i := range 400 {
		now := t0.Add(time.Duration(i) * 50 * time.Millisecond)
		req := userReq("gpt-4o", "anything")
		req.Stream = i%2 == 0
		switch i % 5 {
		case 0:
			req.Tools = []llm.Tool{{Name: "lookup", Parameters: []byte(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)}}
			req.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceRequired}
		case 3:
			req.ResponseFormat = &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "answer",
				Schema: []byte(`{"type":"object","properties":{"answer":{"type":"string"},"confidence":{"type":"number"}}}`)}
		}
		var before *time.Duration
		if cap(b.TokenTimes) > 0 {
			before = &b.TokenTimes[:1][0]
		}
		a := plain.Plan(now, req, mockprovider.Meta{})
		planner.PlanInto(&b, now, req, mockprovider.Meta{})
		// A reused plan keeps its buffers, empty, not nil.
		if diff := cmp.Diff(a, &b, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("plan %d differs (-model +planner):\n%s", i, diff)
		}
		if len(b.TokenTimes) > 0 {
			timed++
			if &b.TokenTimes[0] == before {
				reused++
			}
		}
		plain.Finish(now, a)
		planner.Finish(now, &b)
	}
	// Tool-call answers, and faults that replace the content, make their
	// own token times; the others reuse the buffer.
	if reused < timed/3 {
		t.Fatalf("%d of %d plans with tokens reused the buffer of the one before", reused, timed)
	}
	if !reflect.DeepEqual(plain.Journal(), planner.Journal()) {
		t.Fatal("the journals differ")
	}
}

// TestResponseIDs: IDs have the provider's shape and do not repeat.
func TestResponseIDs(t *testing.T) {
	for _, tt := range []struct {
		format llm.Format
		model  string
		prefix string
		n      int
	}{
		{llm.FormatOpenAI, "gpt-4o", "chatcmpl-", 29},
		{llm.FormatAnthropic, "claude-sonnet-4-5", "msg_01", 22},
		{llm.FormatGemini, "gemini-2.5-flash", "", 22},
	} {
		t.Run(string(tt.format), func(t *testing.T) {
			m := newModel(t, spec("p", tt.format, tt.model))
			seen := map[string]bool{}
			for range 300 { // several batches
				p := m.Plan(t0, userReq(tt.model, "hi"), mockprovider.Meta{})
				m.Finish(t0, p)
				id := p.Response.ID
				rest, ok := strings.CutPrefix(id, tt.prefix)
				if !ok || len(rest) != tt.n || strings.Trim(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") != "" {
					t.Fatalf("id %q", id)
				}
				if seen[id] {
					t.Fatalf("id %q twice", id)
				}
				seen[id] = true
			}
		})
	}
}

// TestJournalEntries: the iterator yields what Journal returns, in order,
// and stops when the loop breaks.
func TestJournalEntries(t *testing.T) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.JournalSize = 2500 // several blocks, the oldest dropped
	m := newModel(t, s)
	for i := range 3000 {
		p := m.Plan(t0, userReq("gpt-4o", "hi"), mockprovider.Meta{RequestID: fmt.Sprint(i)})
		if i%3 != 0 {
			m.Finish(t0, p) // some stay open
		}
	}
	var got []mockprovider.JournalEntry
	for e := range m.JournalEntries() {
		got = append(got, e)
	}
	if want := m.Journal(); len(got) < 2000 || len(got) != m.JournalLen() || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d entries, Journal has %d", len(got), len(want))
	}
	n := 0
	for range m.JournalEntries() {
		if n++; n == 5 {
			break
		}
	}
	if n != 5 {
		t.Fatalf("%d entries before the break", n)
	}
	m.Finish(t0, m.Plan(t0, userReq("gpt-4o", "hi"), mockprovider.Meta{})) // not locked after a break
}

// TestJournalSince: a reader following the journal by Seq sees exactly the
// entries from that Seq on, across blocks and after the oldest were dropped.
func TestJournalSince(t *testing.T) {
	s := spec("openai", llm.FormatOpenAI, "gpt-4o")
	s.JournalSize = 2500
	m := newModel(t, s)
	for i := range 3000 {
		m.Finish(t0, m.Plan(t0, userReq("gpt-4o", "hi"), mockprovider.Meta{RequestID: fmt.Sprint(i)}))
	}
	all := m.Journal()
	first := all[0].Seq
	for _, from := range []uint64{0, first, first + 1, first + 1023, first + 1024, all[len(all)-1].Seq, all[len(all)-1].Seq + 1, 1 << 40} {
		var got []mockprovider.JournalEntry
		for e := range m.JournalSince(from) {
			got = append(got, e)
		}
		var want []mockprovider.JournalEntry
		for _, e := range all {
			if e.Seq >= from {
				want = append(want, e)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("JournalSince(%d): %d entries, want %d", from, len(got), len(want))
		}
	}
}
