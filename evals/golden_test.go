package evals

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/internal/golden"
	"github.com/brownout-dev/brownout/llm"
)

// A fallback whose output drifts, run over the example suite: the report's
// JSON and text are golden, and identical across runs and concurrency.
func TestReportGolden(t *testing.T) {
	s, err := LoadSuite("../examples/evals/support.yaml")
	require.NoError(t, err)
	send := SenderFunc(func(_ context.Context, tg Target, route string, req *llm.Request) (*llm.Response, error) {
		r := &llm.Response{Model: req.Model, FinishReason: llm.FinishStop, Usage: llm.Usage{OutputTokens: 42}}
		switch {
		case req.ResponseFormat != nil:
			r.Content = "Here is the invoice:\n```json\n{\"invoice_number\": \"X\"}\n```"
		case len(req.Tools) > 0:
			r.FinishReason = llm.FinishToolCalls
			r.ToolCalls = []llm.ToolCall{{ID: "c", Name: "get_weather", Arguments: "{}"}}
			if strings.Contains(req.LastUserText(), "Bergen") {
				r.ToolCalls[0].Arguments = `{"city": "Bergen", "unit": "fahrenheit"}`
			}
		case strings.Contains(req.LastUserText(), "password"):
			r.Content = "I'm sorry, but I can't help with account access. Please call us."
		default:
			r.Content = "Paris."
		}
		return r, nil
	})
	var first []byte
	for _, conc := range []int{1, 8} {
		rep, err := Run(context.Background(), s, Target{"cheapco", "cheap-1"}, send, RunOptions{Concurrency: conc})
		require.NoError(t, err)
		b, err := json.MarshalIndent(rep, "", "  ")
		require.NoError(t, err)
		if first == nil {
			first = b
			golden.Check(t, "testdata/report.golden.json", append(b, '\n'))
			var txt bytes.Buffer
			require.NoError(t, rep.WriteText(&txt))
			golden.Check(t, "testdata/report.golden.txt", txt.Bytes())
		} else {
			require.Equal(t, string(first), string(b))
		}
	}
}
