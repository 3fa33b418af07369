package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// TestDrainLongStreams: on shutdown /readyz turns 503 while the listener
// still serves (the lame-duck period), then the listener closes; streams
// longer than the drain end with an in-band error event in their API's
// shape — never [DONE] or message_stop, never a bare TCP close.
func TestDrainLongStreams(t *testing.T) {
	m := mockprovider.StartTest(t, mockprovider.ProviderSpec{Name: "up", Format: llm.FormatOpenAI, Seed: 1,
		Models: []mockprovider.ModelSpec{
			{Name: "slow", TokensPerSecond: 20, OutputTokens: mockprovider.Length{Min: 4000, Max: 4000}, MaxOutputTokens: 8000},
			{Name: "fast", OutputTokens: mockprovider.Length{Min: 3, Max: 3}},
		}})
	cfg, err := gateway.ParseConfig("drain.yaml", []byte(fmt.Sprintf(`version: 1
providers: [{name: up, kind: openai, base_url: "%s/v1"}]
routes:
  - {name: chat, targets: [{provider: up, model: slow, timeouts: {first_token: 10s, idle: 10s, total: 10m}}]}
  - {name: quick, targets: [{provider: up, model: fast}]}
shutdown: {lame_duck: 1s, drain: 300ms}
cache: {max_entries: -1}
`, m.URL)), gateway.LoadOptions{})
	require.NoError(t, err)
	log := &events.Log{}
	srv, err := gateway.New(cfg, gateway.Options{Logger: discardLogger(), Events: log})
	require.NoError(t, err)
	defer srv.Close()
	ln, err := newListener()
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	// Three long streams, two OpenAI and one Anthropic, each past its first
	// token.
	type stream struct {
		anthropic bool
		body      *bufio.Reader
		close     func() error
	}
	var streams []stream
	for i := range 3 {
		anthropic := i == 2
		path, body := "/v1/chat/completions", openaiBody(true)
		if anthropic {
			path, body = "/v1/messages", anthropicBody(true)
		}
		resp := post(t, url, path, body, nil)
		require.Equal(t, 200, resp.StatusCode)
		rd := bufio.NewReader(resp.Body)
		for {
			line, err := rd.ReadString('\n')
			require.NoError(t, err)
			if strings.Contains(line, "delta") {
				break
			}
		}
		streams = append(streams, stream{anthropic, rd, resp.Body.Close})
	}

	cancel() // SIGTERM
	// /readyz turns 503 while the listener still answers.
	require.Eventually(t, func() bool {
		resp, err := http.Get(url + "/readyz")
		if err != nil {
			return false // the listener closed before /readyz reported draining
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	}, 5*time.Second, 5*time.Millisecond)
	// Still serving during the lame-duck period.
	quick := post(t, url, "/v1/chat/completions", `{"model":"quick","messages":[{"role":"user","content":"hi"}]}`, nil)
	b, _ := io.ReadAll(quick.Body)
	quick.Body.Close()
	assert.Equal(t, 200, quick.StatusCode, string(b))

	for i, s := range streams {
		rest, err := io.ReadAll(s.body)
		require.NoError(t, err, "stream %d ended with a clean end of body", i)
		_ = s.close()
		text := string(rest)
		if s.anthropic {
			assert.Contains(t, text, "event: error\n", "stream %d", i)
			assert.NotContains(t, text, "message_stop", "stream %d", i)
		} else {
			assert.Contains(t, text, `"error"`, "stream %d", i)
			assert.NotContains(t, text, "[DONE]", "stream %d", i)
		}
		assert.Contains(t, text, "the gateway is shutting down; the answer above is incomplete", "stream %d", i)
	}
	require.NoError(t, <-served)
	// The log tells a request the gateway cut from one the client left: a
	// 503 of class shutdown, never held against the target, never a 499.
	var cut int
	for _, e := range log.Events() {
		switch {
		case e.Kind == events.RequestEnd && e.Route == "chat":
			cut++
			assert.Equal(t, 503, e.Status, "%+v", e)
			assert.Equal(t, "shutdown", e.Class, "%+v", e)
		case e.Kind == events.AttemptEnd && e.Route == "chat":
			assert.Equal(t, "shutdown", e.Class, "%+v", e)
		case e.Kind == events.BreakerTransition:
			t.Errorf("the drain moved a breaker: %+v", e)
		}
	}
	assert.Equal(t, 3, cut)
	// The listener is closed.
	_, err = http.Get(url + "/readyz")
	require.Error(t, err)
	assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "%v", err)
}
