package gateway_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
)

func structuredBody(stream bool) string {
	return fmt.Sprintf(`{"model":"chat","stream":%v,"response_format":{"type":"json_object"},"messages":[{"role":"user","content":"give me JSON about the incident"}]}`, stream)
}

// TestInvalidStructuredOutputFailsOver: a non-streamed structured answer
// that is not JSON is not served; the next target answers.
func TestInvalidStructuredOutputFailsOver(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	addFault(t, m.alpha, `{kind: malformed_json_content}`)
	resp := post(t, g.url, "/v1/chat/completions", structuredBody(false), nil)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, string(b))
	assert.NotEqual(t, "alpha:gpt-4o", resp.Header.Get(gateway.HeaderTarget))
	var first events.Event
	for _, e := range g.log.Events() {
		if e.Kind == events.AttemptEnd {
			first = e
			break
		}
	}
	assert.Equal(t, "invalid_output", first.Class)
}

// TestDetectorsDemoteSilentDegradation: streamed structured answers cannot
// be checked before they are served, but the detectors see the JSON
// failure rate rise, emit detector.signal and demote the target, so later
// requests go to the equivalent.
func TestDetectorsDemoteSilentDegradation(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, "detectors: {min_samples: 5, window: 1m}\n"), gateway.Options{})
	addFault(t, m.alpha, `{kind: malformed_json_content}`)
	targets := map[string]int{}
	for range 12 {
		resp := post(t, g.url, "/v1/chat/completions", structuredBody(true), nil)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		targets[resp.Header.Get(gateway.HeaderTarget)]++
	}
	var signals []events.Event
	for _, e := range g.log.Events() {
		if e.Kind == events.DetectorSignal {
			signals = append(signals, e)
		}
	}
	require.NotEmpty(t, signals)
	assert.Equal(t, "alpha:gpt-4o", signals[0].Target)
	assert.Equal(t, "json_invalid", signals[0].Name)
	assert.Less(t, targets["alpha:gpt-4o"], 12, "the demoted primary stops taking traffic: %v", targets)
	assert.Positive(t, 12-targets["alpha:gpt-4o"])
}

// TestDetectorsSeeRejectedAnswers: non-streamed structured answers that do
// not parse are never served (each fails over), yet the detectors still see
// them as the target's answers and raise json_invalid on it. Passive health
// is disabled here so that only the detectors can name the target.
func TestDetectorsSeeRejectedAnswers(t *testing.T) {
	m := startMocks(t)
	// The first line continues the policy section of the harness config.
	g := startGateway(t, m.config(t, "  health: {failures: 1000}\ndetectors: {min_samples: 5, window: 1m}\n"), gateway.Options{})
	addFault(t, m.alpha, `{kind: malformed_json_content}`)
	for range 12 {
		resp := post(t, g.url, "/v1/chat/completions", structuredBody(false), nil)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		require.NotEqual(t, "alpha:gpt-4o", resp.Header.Get(gateway.HeaderTarget), "an invalid answer was served")
	}
	var signals []events.Event
	for _, e := range g.log.Events() {
		if e.Kind == events.DetectorSignal && e.Target == "alpha:gpt-4o" {
			signals = append(signals, e)
		}
	}
	require.NotEmpty(t, signals, "the detectors never saw the rejected answers")
	assert.Equal(t, "json_invalid", signals[0].Name)
}
