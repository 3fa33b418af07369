package scenarios

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/brownout-dev/brownout/gateway/tracing"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// TestLiveTraceSample: a live run with traces keeps the trace of a request
// that failed over from the 503ing primary, attempt by attempt, in the
// result and on the progress lines.
func TestLiveTraceSample(t *testing.T) {
	if testing.Short() {
		t.Skip("live run takes 2s of real time")
	}
	src := `version: 1
name: trace-sample
seed: 7
duration: 2s
providers: {file: ../examples/gamedays/env/providers.yaml}
gateway: {config: ../examples/gamedays/env/gateway.yaml}
traffic:
  - {route: chat, rate: 10/s, stream: 50%, prompt_tokens: 100}
timeline:
  - {name: gpt4o-503, at: 0s, for: 2s, target: openai/gpt-4o, fault: {kind: http_error, status: 503}}
`
	s, err := Parse("trace-sample.yaml", []byte(src))
	require.NoError(t, err)
	var progress bytes.Buffer
	res, err := Run(context.Background(), s, Options{Mode: score.ModeLive, Traces: true, Progress: &progress})
	require.NoError(t, err)
	ts := res.TraceSample
	require.NotNil(t, ts, "a live run with traces keeps a sample")
	require.GreaterOrEqual(t, len(ts.Attempts), 2, "the sample is a request that failed over: %+v", ts)
	first, last := ts.Attempts[0], ts.Attempts[len(ts.Attempts)-1]
	assert.Equal(t, score.TraceAttempt{Attempt: 1, Target: "openai:gpt-4o", Tier: "primary", Reason: "first", Outcome: "overloaded", Status: 503},
		score.TraceAttempt{Attempt: first.Attempt, Target: first.Target, Tier: first.Tier, Reason: first.Reason, Outcome: first.Outcome, Status: first.Status})
	assert.Equal(t, "ok", last.Outcome)
	assert.Equal(t, "failover", last.Reason)
	assert.Equal(t, last.Target, ts.Target, "the last attempt served")
	assert.Equal(t, 200, ts.Status)
	assert.Equal(t, "chat", ts.Route)
	assert.Contains(t, ts.Events, "brownout.failover "+last.Target)
	assert.Contains(t, progress.String(), "sample trace "+ts.TraceID)
	assert.Contains(t, progress.String(), "attempt 1 ")
	t.Logf("%s", progress.String())
}

// TestTraceKeeperPicksMostAttempts: of the requests that ended, the sample
// is the one with the most attempts, the earliest among equals; client
// spans of requests still in flight are not a sample.
func TestTraceKeeperPicksMostAttempts(t *testing.T) {
	k := newTraceKeeper()
	tr := k.tp.Tracer("test")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	request := func(id string, at time.Duration, attempts int, end bool) {
		ctx, srv := tr.Start(context.Background(), "POST /v1/chat/completions", trace.WithSpanKind(trace.SpanKindServer),
			trace.WithTimestamp(base.Add(at)), trace.WithAttributes(tracing.RequestID.String(id)))
		for i := range attempts {
			_, c := tr.Start(ctx, "chat m", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(base.Add(at+time.Duration(i)*time.Millisecond)),
				trace.WithAttributes(tracing.Attempt.Int(i+1), attribute.String("brownout.outcome", "ok")))
			c.End(trace.WithTimestamp(base.Add(at + time.Duration(i+1)*time.Millisecond)))
		}
		if end {
			srv.End(trace.WithTimestamp(base.Add(at + time.Second)))
		}
	}
	assert.Nil(t, k.sample(), "nothing ended yet")
	request("one", 0, 1, true)
	request("three-late", 2*time.Second, 3, true)
	request("three-early", time.Second, 3, true)
	request("two", 3*time.Second, 2, true)
	request("five-unfinished", 4*time.Second, 5, false)
	s := k.sample()
	require.NotNil(t, s)
	assert.Equal(t, "three-early", s.RequestID)
	require.Len(t, s.Attempts, 3)
	for i, a := range s.Attempts {
		assert.Equal(t, i+1, a.Attempt)
		assert.Equal(t, time.Duration(i)*time.Millisecond, a.Start)
	}
	assert.Equal(t, time.Second, s.Duration)
	assert.Len(t, k.open, 1, "only the unfinished request's spans are held")
	var off *traceKeeper // Options.Traces unset
	assert.Nil(t, off.provider())
	assert.Nil(t, off.sample())
}
