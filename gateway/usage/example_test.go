package usage_test

import (
	"os"
	"time"

	"github.com/brownout-dev/brownout/gateway/usage"
)

func ExampleReport() {
	t0 := time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC)
	recs := []usage.Record{
		{Time: t0, RequestID: "a", Route: "chat", Target: "openai:gpt-4o", Tier: "primary", Class: "rate_limited", Outcome: usage.Failed},
		{Time: t0, RequestID: "a", Route: "chat", Target: "anthropic:claude-sonnet-4", Tier: "equivalent", Class: "ok", Outcome: usage.Served, InputTokens: 1000, OutputTokens: 500, Cost: 0.0105},
		{Time: t0, RequestID: "b", Route: "chat", Target: "openai:gpt-4o", Tier: "primary", Class: "ok", Outcome: usage.Served, InputTokens: 1000, OutputTokens: 500, Cost: 0.0075},
	}
	rows, _ := usage.Report(recs, usage.Query{By: usage.ByTier})
	_ = usage.WriteTable(os.Stdout, usage.ByTier, rows)
	// Output:
	// tier  requests  attempts  failed  input tok  output tok  cost $  share
	//   equivalent         1         1       0       1000         500  0.0105  58.3%
	//      primary         2         2       1       1000         500  0.0075  41.7%
	//        total                   3       1       2000        1000  0.0180
}
