package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
)

// secretsEnv are the configured secrets of the property test: provider
// keys shaped like real ones and values shaped like nothing at all (a
// header secret, the admin token, a client key).
var secretsEnv = map[string]string{
	"ALPHA_KEY": "sk-proj-Alpha0123456789abcdefXYZ", "BETA_KEY": "sk-ant-api03-Beta0123456789abcdef",
	"GAMMA_KEY": "AIzaSyGamma0123456789abcdefghijklmn", "ORG": "orgsecret-zz9plural",
	"ADMIN": "plainadminpassphrase", "APP_KEY": "clientpassphrase-zz9alpha",
}

// failingReplies answers every upstream request with a reply drawn for
// the current case: an error in the upstream's format (or in none) whose
// text carries a secret, or a stream that fails in-band with one.
type failingReplies struct {
	mu    sync.Mutex
	reply func(r *http.Request) *http.Response
}

func (f *failingReplies) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	reply := f.reply
	f.mu.Unlock()
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return reply(r), nil
}

func genReply(t *rapid.T, secrets []string) func(r *http.Request) *http.Response {
	secret := rapid.SampledFrom(secrets).Draw(t, "secret")
	wrap := rapid.SampledFrom([]string{"%s", "Bearer %s", "api_key=%s", `{"api-key": "%s"}`, "Incorrect API key provided: %s.", "token: %s;", "x%sx", "%s\n%s"}).Draw(t, "wrap")
	text := strings.ReplaceAll(wrap, "%s", secret)
	field := rapid.SampledFrom([]string{"message", "code", "param", "type"}).Draw(t, "field")
	status := rapid.SampledFrom([]int{400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 529}).Draw(t, "status")
	shape := rapid.SampledFrom([]string{"native", "plain", "html", "in-band"}).Draw(t, "shape")
	return func(r *http.Request) *http.Response {
		h := http.Header{"X-Echo": {secret}, "Retry-After": {"1"}}
		js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		var body string
		openai := strings.HasSuffix(r.URL.Path, "/chat/completions")
		anthropic := strings.HasSuffix(r.URL.Path, "/messages")
		obj := map[string]any{"message": "upstream failed", "type": "invalid_request_error"}
		obj[field] = text
		switch shape {
		case "native":
			h.Set("Content-Type", "application/json")
			switch {
			case anthropic:
				body = js(map[string]any{"type": "error", "error": obj})
			case openai:
				body = js(map[string]any{"error": obj})
			default:
				body = js(map[string]any{"error": map[string]any{"code": status, "message": text, "status": "INVALID_ARGUMENT"}})
			}
		case "plain":
			body = text
		case "html":
			h.Set("Content-Type", "text/html")
			body = "<html><body><h1>" + text + "</h1></body></html>"
		case "in-band":
			h.Set("Content-Type", "text/event-stream")
			switch {
			case anthropic:
				body = "event: message_start\ndata: " + js(map[string]any{"type": "message_start", "message": map[string]any{"id": "m", "type": "message", "role": "assistant", "model": "x", "content": []any{}, "usage": map[string]any{"input_tokens": 1, "output_tokens": 0}}}) + "\n\n" +
					"event: error\ndata: " + js(map[string]any{"type": "error", "error": obj}) + "\n\n"
			case openai:
				body = "data: " + js(map[string]any{"error": obj}) + "\n\n"
			default:
				body = "data: " + js(map[string]any{"error": map[string]any{"code": 500, "message": text, "status": "INTERNAL"}}) + "\n\n"
			}
			status = 200
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}
	}
}

// No configured secret ever appears in a response, an event, a log line or
// a metric, whatever the failing upstreams say.
func TestSecretsNeverLeak(t *testing.T) {
	m := startMocks(t)
	text := strings.Replace(configText(m, `admin: {token: "${ADMIN}"}
clients: [{id: app, key: "${APP_KEY}"}]
`), `api_key: "${ALPHA_KEY}"}`, `api_key: "${ALPHA_KEY}", headers: {X-Org: "${ORG}"}}`, 1)
	cfg, err := gateway.ParseConfig("secrets.yaml", []byte(text), gateway.LoadOptions{LookupEnv: func(k string) (string, bool) {
		v, ok := secretsEnv[k]
		return v, ok
	}})
	require.NoError(t, err)
	var secrets []string
	for _, v := range secretsEnv {
		secrets = append(secrets, v)
	}
	logs := &lockedBuffer{}
	evs := &events.Log{}
	replies := &failingReplies{}
	g := startGateway(t, cfg, gateway.Options{Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Events: evs, Transport: replies})
	leaks := func(where, s string) {
		for _, sec := range secrets {
			if sec == secretsEnv["APP_KEY"] && where == "request" {
				continue
			}
			if strings.Contains(s, sec) {
				t.Fatalf("secret %q leaked into %s:\n%.2000s", sec, where, s)
			}
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		replies.mu.Lock()
		replies.reply = genReply(rt, secrets)
		replies.mu.Unlock()
		path := rapid.SampledFrom([]string{"/v1/chat/completions", "/v1/messages"}).Draw(rt, "path")
		stream := rapid.Bool().Draw(rt, "stream")
		body := openaiBody(stream)
		hdr := map[string]string{"Authorization": "Bearer " + secretsEnv["APP_KEY"]}
		if path == "/v1/messages" {
			body = anthropicBody(stream)
			hdr = map[string]string{"x-api-key": secretsEnv["APP_KEY"]}
		}
		resp := post(t, g.url, path, body, hdr)
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(rt, err)
		leaks("the response", fmt.Sprintf("%d %v\n%s", resp.StatusCode, resp.Header, b))
	})
	all, err := json.Marshal(evs.Events())
	require.NoError(t, err)
	leaks("the events", string(all))
	leaks("the logs", logs.String())
	req, err := http.NewRequest(http.MethodGet, g.url+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+secretsEnv["ADMIN"])
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	leaks("the metrics", string(metrics))
	require.Greater(t, countKind(evs.Events(), events.AttemptEnd), 50, "the upstreams were tried")
}
