package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// mocks are the three providers of the end-to-end tests: an OpenAI-style
// primary, an Anthropic-style equivalent that accepts prefill (mid-stream
// continuation), and a Gemini-style smaller model.
type mocks struct {
	alpha, beta, gamma *mockprovider.Provider
}

func startMocks(t testing.TB) *mocks {
	t.Helper()
	return &mocks{
		alpha: mockprovider.StartTest(t, mockprovider.ProviderSpec{Name: "alpha", Format: llm.FormatOpenAI, Seed: 1,
			Models: []mockprovider.ModelSpec{{Name: "gpt-4o", OutputTokens: mockprovider.Length{Min: 24, Max: 24}}}}),
		beta: mockprovider.StartTest(t, mockprovider.ProviderSpec{Name: "beta", Format: llm.FormatAnthropic, Seed: 2,
			Models: []mockprovider.ModelSpec{{Name: "claude-sonnet", Prefill: mockprovider.PrefillContinue, OutputTokens: mockprovider.Length{Min: 24, Max: 24}}}}),
		gamma: mockprovider.StartTest(t, mockprovider.ProviderSpec{Name: "gamma", Format: llm.FormatGemini, Seed: 3,
			Models: []mockprovider.ModelSpec{{Name: "gemini-flash", OutputTokens: mockprovider.Length{Min: 24, Max: 24}}}}),
	}
}

// config is the gateway configuration of the end-to-end tests; extra is
// appended verbatim (more top-level sections).
func (m *mocks) config(t *testing.T, extra string) *gateway.Config {
	t.Helper()
	text := configText(m, extra)
	env := map[string]string{"ALPHA_KEY": "sk-alpha-secret", "BETA_KEY": "sk-beta-secret", "GAMMA_KEY": "sk-gamma-secret"}
	cfg, err := gateway.ParseConfig("e2e.yaml", []byte(text), gateway.LoadOptions{LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	require.NoError(t, err)
	return cfg
}

// gw is a gateway under test on a loopback server.
type gw struct {
	srv *gateway.Server
	url string
	log *events.Log
}

func startGateway(t *testing.T, cfg *gateway.Config, opts gateway.Options) *gw {
	t.Helper()
	log := &events.Log{}
	if opts.Events == nil {
		opts.Events = log
	}
	srv, err := gateway.New(cfg, opts)
	require.NoError(t, err)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close()
	})
	return &gw{srv: srv, url: hs.URL, log: log}
}

func addFault(t *testing.T, p *mockprovider.Provider, spec string) {
	t.Helper()
	var f faults.Spec
	_, err := yamlDecode(spec, &f)
	require.NoError(t, err)
	_, err = p.Model().AddFault(time.Now(), f)
	require.NoError(t, err)
}

// result is what a client saw.
type result struct {
	status int
	header http.Header
	body   string
	// For streams: the text deltas joined, the data lines, and whether the
	// stream ended with its end marker.
	text   string
	events []string
	clean  bool
	errEv  string // the in-band error event, if any
}

func post(t *testing.T, url, path, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

func openaiBody(stream bool) string {
	return fmt.Sprintf(`{"model":"chat","stream":%v,"temperature":0.5,"messages":[{"role":"user","content":"tell me about brownouts"}]}`, stream)
}

func anthropicBody(stream bool) string {
	return fmt.Sprintf(`{"model":"chat","max_tokens":256,"stream":%v,"temperature":0.5,"messages":[{"role":"user","content":"tell me about brownouts"}]}`, stream)
}

// do sends an OpenAI-format request and reads what the client sees.
func (g *gw) do(t *testing.T, stream bool, hdr map[string]string) *result {
	t.Helper()
	resp := post(t, g.url, "/v1/chat/completions", openaiBody(stream), hdr)
	defer resp.Body.Close()
	r := &result{status: resp.StatusCode, header: resp.Header}
	if !stream || resp.StatusCode != 200 {
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		r.body = string(b)
		if resp.StatusCode == 200 {
			var cc struct {
				Choices []struct {
					Message struct {
						Content string `json:"content"`
					} `json:"message"`
				} `json:"choices"`
			}
			require.NoError(t, json.Unmarshal(b, &cc), r.body)
			require.NotEmpty(t, cc.Choices)
			r.text = cc.Choices[0].Message.Content
		}
		return r
	}
	sc := bufio.NewScanner(resp.Body)
	var text strings.Builder
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		r.events = append(r.events, data)
		if data == "[DONE]" {
			r.clean = true
			continue
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Error json.RawMessage `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &ch), data)
		if len(ch.Error) > 0 {
			r.errEv = string(ch.Error)
		}
		for _, c := range ch.Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	r.text = text.String()
	return r
}

func yamlDecode(s string, v any) (any, error) {
	return nil, decodeYAML([]byte(s), v)
}

func countKind(evs []events.Event, k events.Kind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

var _ = bytes.NewReader

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newListener() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// configText is the e2e configuration file text.
func configText(m *mocks, extra string) string {
	return fmt.Sprintf(`version: 1
providers:
  - {name: alpha, kind: openai, base_url: "%s/v1", api_key: "${ALPHA_KEY}"}
  - {name: beta, kind: anthropic, base_url: "%s", api_key: "${BETA_KEY}"}
  - {name: gamma, kind: gemini, base_url: "%s", api_key: "${GAMMA_KEY}"}
routes:
  - name: chat
    tiers: [primary, equivalent, smaller, cached]
    targets:
      - provider: alpha
        model: gpt-4o
        tier: primary
        capabilities: {streaming: true, tools: true, structured_output: true}
        price: {input_per_mtok: 2.5, output_per_mtok: 10}
        retry: {attempts: 1}
        timeouts: {connect: 1s, first_token: 1s, idle: 1s, total: 8s}
      - provider: beta
        model: claude-sonnet
        tier: equivalent
        capabilities: {streaming: true, tools: true, structured_output: true, prefill: true}
        price: {input_per_mtok: 3, output_per_mtok: 15}
        retry: {attempts: 1}
        timeouts: {first_token: 2s, idle: 2s, total: 10s}
      - provider: gamma
        model: gemini-flash
        tier: smaller
        capabilities: {streaming: true, tools: true, structured_output: true}
        price: {input_per_mtok: 0.3, output_per_mtok: 2.5}
        retry: {attempts: 1}
        timeouts: {first_token: 2s, idle: 2s, total: 10s}
policy:
  max_attempts: 4
  retry_after: 7s
  breaker: {min_samples: 1000}
%s`, m.alpha.URL, m.beta.URL, m.gamma.URL, extra)
}

func newTestServer(srv *gateway.Server) *httptest.Server { return httptest.NewServer(srv.Handler()) }
