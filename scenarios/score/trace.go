package score

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// TraceSample is the trace of one request of a live run (Options.Traces):
// the one with the most upstream attempts, the earliest among equals — a
// request that shows the gateway at work (retries, fail-overs,
// continuations) when the run had any.
type TraceSample struct {
	TraceID   string `json:"trace_id"`
	RequestID string `json:"request_id"`
	Route     string `json:"route"`
	// Status is the HTTP status the client got; Error the error type when
	// the request failed ("" when served).
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
	// Target and Tier served the request.
	Target string `json:"target,omitempty"`
	Tier   string `json:"tier,omitempty"`
	// Duration is the request's, from its span.
	Duration time.Duration `json:"duration_ns"`
	// Attempts are its upstream attempts in order.
	Attempts []TraceAttempt `json:"attempts"`
	// Events are the request span's events in order (brownout.retry,
	// brownout.failover, brownout.continuation, brownout.skipped,
	// brownout.backoff), with the target they name.
	Events []string `json:"events,omitempty"`
}

// TraceAttempt is one upstream attempt of a TraceSample (its client span).
type TraceAttempt struct {
	Attempt int    `json:"attempt"`
	Target  string `json:"target"`
	Tier    string `json:"tier"`
	// Reason is first, retry or failover; Continuation prefill or replay
	// when the attempt continued a partial answer.
	Reason       string        `json:"reason"`
	Continuation string        `json:"continuation,omitempty"`
	Outcome      string        `json:"outcome"`
	Status       int           `json:"status,omitempty"`
	Start        time.Duration `json:"start_ns"` // after the request began
	Duration     time.Duration `json:"duration_ns"`
	OutputTokens int           `json:"output_tokens,omitempty"`
}

// WriteTo writes the sample as a few lines of text (live progress).
func (t *TraceSample) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "sample trace %s (request %s, route %s): %d, %d attempts, %s", t.TraceID, t.RequestID, t.Route,
		t.Status, len(t.Attempts), t.Duration.Round(time.Millisecond))
	if t.Target != "" {
		fmt.Fprintf(&b, ", served by %s (%s)", t.Target, t.Tier)
	}
	if t.Error != "" {
		fmt.Fprintf(&b, ", failed: %s", t.Error)
	}
	b.WriteByte('\n')
	for _, a := range t.Attempts {
		fmt.Fprintf(&b, "  attempt %d +%s %s %s (%s", a.Attempt, a.Start.Round(time.Millisecond), a.Target, a.Outcome, a.Reason)
		if a.Continuation != "" {
			b.WriteString(", " + a.Continuation)
		}
		fmt.Fprintf(&b, ") %s\n", a.Duration.Round(time.Millisecond))
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}
