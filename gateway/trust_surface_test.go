package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
)

// TestModelsNeedAKey: with client keys, /v1/models needs one and lists
// only the routes the key may use, without their upstream targets.
func TestModelsNeedAKey(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, trustConfig(t, m, clientsYAML), gateway.Options{Logger: discardLogger()})
	list := func(hdr map[string]string) (int, []string, string) {
		req, err := http.NewRequest(http.MethodGet, g.url+"/v1/models", nil)
		require.NoError(t, err)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		_ = json.Unmarshal(raw, &out)
		var ids []string
		for _, d := range out.Data {
			ids = append(ids, d.ID)
		}
		return resp.StatusCode, ids, string(raw)
	}
	status, _, body := list(nil)
	require.Equal(t, 401, status, body)
	status, ids, body := list(map[string]string{"Authorization": "Bearer " + keyApp})
	require.Equal(t, 200, status)
	require.Equal(t, []string{"chat"}, ids)
	require.NotContains(t, body, "gpt-4o", "upstream models are not the client's business")
	status, ids, _ = list(map[string]string{"x-goog-api-key": keyBatch})
	require.Equal(t, 200, status)
	require.Equal(t, []string{"other"}, ids)
	status, ids, _ = list(map[string]string{"x-api-key": keySlow})
	require.Equal(t, 200, status)
	require.Equal(t, []string{"chat", "other"}, ids)
}

// TestUpstreamErrorsSanitized: an upstream's 400 reaches the client
// without its URLs, organization or request ids; an upstream's 401 or 403
// (the gateway's own key refused) is a 502 gateway error, never the
// client's invalid_api_key.
func TestUpstreamErrorsSanitized(t *testing.T) {
	var answer func(w http.ResponseWriter)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { answer(w) }))
	t.Cleanup(up.Close)
	reply := func(status int, body string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}
	}
	leaky := `{"error":{"message":"Invalid value for 'temperature' (see https://internal.example.net/v1/docs?org=org-AbC123xyz789). Organization org-AbC123xyz789, project proj_Zz9Yy8Xx7Ww6, request ID req_8f3a2b1c9d0e4f5a6b7c; trace 3f1a9c2e-7b4d-4e8f-9a1b-2c3d4e5f6a7b","type":"invalid_request_error","param":"temperature","code":null}}`
	for _, stream := range both {
		answer = reply(400, leaky)
		r := badGateway(t, up.URL, true).do(t, stream, nil)
		require.Equal(t, 400, r.status, r.body)
		require.Contains(t, r.body, "Invalid value for 'temperature'", "the useful part stays")
		for _, internal := range []string{"internal.example.net", "https://", "org-AbC123xyz789", "proj_Zz9Yy8Xx7Ww6", "req_8f3a2b1c9d0e4f5a6b7c", "3f1a9c2e-7b4d"} {
			require.NotContains(t, r.body, internal)
		}

		// The gateway's own key refused: a 401 or 403, or a 400 that says
		// so (Gemini's API_KEY_INVALID, OpenAI's code invalid_api_key).
		for _, status := range []int{400, 401, 403} {
			answer = reply(status, `{"error":{"message":"Incorrect API key provided: sk-proj-****abcd. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`)
			g := badGateway(t, up.URL, true) // a new one: the first auth failure takes the target out
			r := g.do(t, stream, nil)
			require.GreaterOrEqual(t, r.status, 500, "status %d stream %v: %s", status, stream, r.body)
			require.NotContains(t, r.body, "invalid_api_key")
			require.NotContains(t, r.body, "Incorrect API key")
			if status == 400 {
				require.Equal(t, 502, r.status, r.body)
				require.Contains(t, r.body, "upstream_credentials", strconv.Itoa(status))
			}
		}
	}
}

// TestMaxResponseBytes: an answer larger than its target's
// max_response_bytes is not served from it, streamed or not; the request
// fails over.
func TestMaxResponseBytes(t *testing.T) {
	m := startMocks(t)
	cfg := m.config(t, "")
	cfg.Routes[0].Targets[0].MaxResponseBytes = 100
	g := startGateway(t, cfg, gateway.Options{Logger: discardLogger()})
	for _, stream := range both {
		r := g.do(t, stream, nil)
		require.Equal(t, 200, r.status, r.body)
		require.Equal(t, "beta:claude-sonnet", r.header.Get(gateway.HeaderTarget), "stream %v", stream)
	}
	for _, e := range attemptEnds(g.log, "alpha:gpt-4o") {
		require.NotEqual(t, "ok", e.Class)
	}
}
