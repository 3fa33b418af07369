package evals

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
)

func TestParseTarget(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Target
		err  bool
	}{
		{"openai/gpt-4o", Target{"openai", "gpt-4o"}, false},
		{"openai:gpt-4o", Target{"openai", "gpt-4o"}, false},
		{"bedrock/anthropic.claude-3:0", Target{"bedrock", "anthropic.claude-3:0"}, false},
		{"gpt-4o", Target{}, true},
		{"/m", Target{}, true},
		{"p/", Target{}, true},
	} {
		got, err := ParseTarget(tt.in)
		if tt.err {
			require.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tt.want, got)
	}
	require.Equal(t, "openai:gpt-4o", Target{"openai", "gpt-4o"}.String())
}

func miniSuite(t *testing.T) *Suite {
	s, err := ParseSuite("mini.yaml", []byte(`version: 1
name: mini
cases:
  - name: json
    route: extract
    prompts: ["a", "b", "c", "d"]
    checks:
      - type: json_valid
      - type: not_contains
        text: "`+"```"+`"
  - name: chat
    route: chat
    prompt: hello
    checks:
      - type: contains
        text: hi
`))
	require.NoError(t, err)
	return s
}

func TestRunReport(t *testing.T) {
	var calls atomic.Int32
	send := SenderFunc(func(ctx context.Context, tg Target, route string, req *llm.Request) (*llm.Response, error) {
		calls.Add(1)
		require.Equal(t, "m1", req.Model)
		switch req.LastUserText() {
		case "a", "b":
			return &llm.Response{Content: `{"ok": true}`}, nil
		case "c":
			return &llm.Response{Content: "```json\n{}\n```"}, nil
		case "d":
			return nil, &llm.Error{Status: 503, Type: llm.ErrOverloaded, Message: "busy"}
		}
		return &llm.Response{Content: "hi there"}, nil
	})
	rep, err := Run(context.Background(), miniSuite(t), Target{"p", "m1"}, send, RunOptions{Concurrency: 2})
	require.NoError(t, err)
	require.EqualValues(t, 5, calls.Load())
	require.Equal(t, 5, rep.Total)
	require.Equal(t, 3, rep.Passed)
	require.Equal(t, 1, rep.Errors)
	require.InDelta(t, 0.6, rep.PassRate, 1e-9)
	require.Equal(t, []RateStat{
		{Name: "extract", Total: 4, Passed: 2, PassRate: 0.5},
		{Name: "chat", Total: 1, Passed: 1, PassRate: 1},
	}, rep.Routes)
	require.Equal(t, []RateStat{
		{Name: "json_valid", Route: "extract", Total: 3, Passed: 2, PassRate: 2.0 / 3},
		{Name: "not_contains", Route: "extract", Total: 3, Passed: 2, PassRate: 2.0 / 3},
		{Name: "contains", Route: "chat", Total: 1, Passed: 1, PassRate: 1},
	}, rep.Checks)
	require.Equal(t, "HTTP 503: overloaded: busy", rep.Cases[3].Error)
	require.Equal(t, "json#3", rep.Cases[2].Case)

	var b strings.Builder
	require.NoError(t, rep.WriteText(&b))
	require.Contains(t, b.String(), "suite mini against p:m1: 3/5 passed (60.0%), 1 request errors")
	require.Contains(t, b.String(), "extract  json#4  error: HTTP 503: overloaded: busy")

	only, err := Run(context.Background(), miniSuite(t), Target{"p", "m1"}, send, RunOptions{Routes: []string{"chat"}})
	require.NoError(t, err)
	require.Equal(t, 1, only.Total)
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	send := SenderFunc(func(ctx context.Context, _ Target, _ string, _ *llm.Request) (*llm.Response, error) {
		return nil, ctx.Err()
	})
	_, err := Run(ctx, miniSuite(t), Target{"p", "m"}, send, RunOptions{})
	require.ErrorIs(t, err, context.Canceled)
}

func TestQualifyThresholdBoundary(t *testing.T) {
	// 19 of 20 passing is exactly 95%: qualified at 95%, not at 96%.
	var prompts []string
	for i := range 20 {
		prompts = append(prompts, string(rune('a'+i)))
	}
	s, err := ParseSuite("s.yaml", []byte("version: 1\nname: s\nroute: r\ncases:\n  - name: c\n    prompts: [\""+strings.Join(prompts, `", "`)+"\"]\n    checks: [{type: contains, text: ok}]\n"))
	require.NoError(t, err)
	send := SenderFunc(func(_ context.Context, tg Target, _ string, req *llm.Request) (*llm.Response, error) {
		if tg.Provider == "fb" && req.LastUserText() == "a" {
			return &llm.Response{Content: "nope"}, nil
		}
		return &llm.Response{Content: "ok"}, nil
	})
	pairs := []Pair{{Primary: Target{"pr", "m"}, Fallback: Target{"fb", "m"}}}
	for _, tt := range []struct {
		threshold float64
		verdict   string
	}{{0.95, VerdictQualified}, {0.96, VerdictUnqualified}} {
		q, reports, err := Qualify(context.Background(), s, pairs, send, QualifyOptions{Threshold: tt.threshold})
		require.NoError(t, err)
		require.Len(t, reports, 2)
		require.Len(t, q.Entries, 1)
		require.Equal(t, tt.verdict, q.Entries[0].Verdict)
		require.Equal(t, 19, q.Entries[0].Passed)
		require.Equal(t, []string{`c#1: contains: content does not contain "ok"`}, q.Entries[0].Failures)
	}
	_, _, err = Qualify(context.Background(), s, pairs, send, QualifyOptions{Threshold: 2})
	require.ErrorContains(t, err, "threshold")
	_, _, err = Qualify(context.Background(), s, nil, send, QualifyOptions{Threshold: 0.9})
	require.ErrorContains(t, err, "no primary/fallback pairs")
}

func TestParseQualificationErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"{\n  \"version\": 1,\n  \"entries\": [,]\n}", "q.json:3:15: invalid character ',' looking for beginning of value"},
		{`{"version": 2}`, "q.json: version: 2 is not 1"},
		{`{"version": 1, "extra": true}`, `q.json: json: unknown field "extra"`},
		{`{"version": 1, "entries": [{"primary": "a:b", "fallback": "c", "route": "", "verdict": "maybe"}]}`,
			`q.json: entries.0: fallback: target "c": want provider/model; route: missing; verdict: "maybe" is not qualified or unqualified`},
	}
	for _, tt := range tests {
		_, err := ParseQualification("q.json", []byte(tt.src))
		require.EqualError(t, err, tt.want)
	}
	var nilQ *Qualification
	require.False(t, nilQ.Qualified("r", "a:b"))
	_, err := LoadQualification(t.TempDir() + "/missing.json")
	require.Error(t, err)
}

func TestQualificationFileIsStable(t *testing.T) {
	q := &Qualification{Version: 1, Suite: "s", Threshold: 0.95, Created: time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC),
		Entries: []Entry{{Primary: "a:b", Fallback: "c:d", Route: "r", Cases: 2, Passed: 2, PassRate: 1, PrimaryPassRate: 1, Verdict: VerdictQualified}}}
	b, err := q.Marshal()
	require.NoError(t, err)
	require.Equal(t, `{
  "version": 1,
  "suite": "s",
  "threshold": 0.95,
  "created": "2026-11-29T16:00:00Z",
  "entries": [
    {
      "primary": "a:b",
      "fallback": "c:d",
      "route": "r",
      "cases": 2,
      "passed": 2,
      "pass_rate": 1,
      "primary_pass_rate": 1,
      "verdict": "qualified"
    }
  ]
}
`, string(b))
	require.Empty(t, q.Unqualified())
}
